"""catena_zero.rules."""
