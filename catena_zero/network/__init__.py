"""catena_zero.network."""
