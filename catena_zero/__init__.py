"""catena_zero: AlphaZero-style self-play research framework for the game Catena."""

__version__ = "0.1.0"
