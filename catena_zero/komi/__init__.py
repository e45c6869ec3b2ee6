"""catena_zero.komi."""
