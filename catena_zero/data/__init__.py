"""catena_zero.data."""
