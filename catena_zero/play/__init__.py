"""catena_zero.play: people and programs playing against the engine (GTP, terminal, web).

`GtpEngine`, `GtpError`, `RandomPlayer` and `run_gtp` are importable from here; they are
loaded on first use so that `python -m catena_zero.play.gtp` runs cleanly.
"""

_GTP_NAMES = ("GtpEngine", "GtpError", "RandomPlayer", "run_gtp")
__all__ = list(_GTP_NAMES)


def __getattr__(name: str):
    if name in _GTP_NAMES:
        # lazy: `python -m catena_zero.play.gtp` would otherwise find the module already
        # imported by its package and run a second copy of it
        from catena_zero.play import gtp

        return getattr(gtp, name)
    raise AttributeError(f"module 'catena_zero.play' has no attribute {name!r}")
