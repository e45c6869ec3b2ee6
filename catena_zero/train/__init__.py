"""catena_zero.train."""
