"""catena_zero.export."""
