"""catena_zero.cli."""
