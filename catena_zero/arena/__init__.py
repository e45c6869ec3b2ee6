"""catena_zero.arena."""
