"""catena_zero.play."""
