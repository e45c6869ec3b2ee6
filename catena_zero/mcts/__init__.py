"""catena_zero.mcts."""
