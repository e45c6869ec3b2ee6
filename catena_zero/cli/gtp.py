"""catena-zero gtp: speak GTP (RULES.md "Text protocol") on stdin/stdout with a model player.

    catena-zero gtp                                # bundled champion of the board side
    catena-zero gtp --model model.pt player.simulations=400
    catena-zero gtp --model random                 # uniformly random moves

Besides the RULES.md commands: catena-analyze [SIMULATIONS [TOP]] (win rate, score lead,
top moves with visits and priors, ownership), catena-choose-komi (the first player's komi
choice) and catena-choose-color (the second player's colour choice, or the nokomi swap).
A missing, truncated or foreign model file is refused before the protocol starts.
"""

from __future__ import annotations

import sys

from catena_zero.cli.common import ConfigError, InputFileError, compose, to_container, to_dataclass
from catena_zero.export.model_file import ModelFileError
from catena_zero.play.bundled import ModelLibrary, default_side
from catena_zero.play.gtp import GtpEngine, RandomPlayer
from catena_zero.play.gtp_analysis import install_model_commands
from catena_zero.play.gtp_time import install_time_commands
from catena_zero.play.model_player import ModelPlayer, PlayerConfig
from catena_zero.rules import Rules


def build_engine(overrides: list[str], warn=None, warm_up: bool = True) -> GtpEngine:
    """The GTP engine the composed `gtp` config describes (ConfigError on bad settings)."""
    warn = warn or (lambda text: print(text, file=sys.stderr))
    config = compose("gtp", overrides)
    values = to_container(config)
    player_config = to_dataclass(PlayerConfig, config.player, "player")
    model = values.get("model")
    library = None
    if model != "random":
        try:
            library = ModelLibrary(None if model in (None, "") else str(model))
        except ModelFileError as error:
            raise InputFileError(str(error)) from error
    side = values["board"]["side"]
    if side is None:
        side = default_side(library) if library is not None else 6
    try:
        rules = Rules(side=side, **values["rules"])
        rules.validate_komi(values["komi"])
    except ValueError as error:
        raise ConfigError(str(error)) from error
    if library is None or (model in (None, "") and not library.sides()):
        if library is not None:
            warn("catena-zero gtp: no bundled champion installed; playing random moves")
        engine = GtpEngine(RandomPlayer(player_config.seed), rules=rules, komi=values["komi"])
        install_time_commands(engine)
        return engine
    player = ModelPlayer(library, player_config)
    engine = GtpEngine(player, rules=rules, komi=values["komi"])
    install_model_commands(engine, player)
    install_time_commands(engine)
    if warm_up:
        # The model is read and its first run paid here, before the first command, so the
        # first genmove takes a move's time (and time-bounded moves know the search's speed).
        try:
            seconds = player.warm_up(rules)
        except ModelFileError:  # no model for this side: genmove says so, on stdout
            seconds = None
        ready = f"; ready in {seconds:.1f} s" if seconds is not None else ""
        warn(f"catena-zero gtp: {player.search_line()}{ready}")
    return engine


def main(overrides: list[str]) -> int:
    engine = build_engine(overrides)
    engine.run(sys.stdin, sys.stdout)
    return 0
