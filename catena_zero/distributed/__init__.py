"""catena_zero.distributed."""
