"""catena_zero.selfplay."""
