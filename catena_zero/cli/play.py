r"""catena-zero play: a game against the model in the terminal.

    catena-zero play                                   # side 6, you play Black, bundled champion
    catena-zero play --side 4 --colour white --komi auto
    catena-zero play --model model.pt player.simulations=400
    printf 'f6\nquit\n' | catena-zero play             # moves can be piped in

Type a cell (f6), button, swap (nokomi), undo, hint, think LEVEL, help or quit. The model
thinks at most the time and simulations of its level (`think=quick|normal|strong`).
"""

from __future__ import annotations

from catena_zero.cli.common import InputFileError, compose, to_container, to_dataclass
from catena_zero.export.model_file import ModelFileError
from catena_zero.play.bundled import ModelLibrary, default_side
from catena_zero.play.model_player import ModelPlayer, PlayerConfig
from catena_zero.play.terminal import TerminalConfig, play_terminal


def build(overrides: list[str]) -> tuple[ModelLibrary, TerminalConfig, PlayerConfig]:
    """(model library, game settings, player settings) from the composed config."""
    config = compose("play", overrides)
    values = to_container(config)
    player_config = to_dataclass(PlayerConfig, config.player, "player")
    model = values.get("model")
    try:
        library = ModelLibrary(None if model in (None, "") else str(model))
    except ModelFileError as error:
        raise InputFileError(str(error)) from error
    game = {"side": values["board"]["side"], **values["rules"], "komi": values["komi"],
            "colour": values["colour"], "think": values["think"]}
    if game.get("side") is None:
        game["side"] = default_side(library)
    if isinstance(game.get("komi"), str) and game["komi"].lower() == "auto":
        game["komi"] = None
    return library, to_dataclass(TerminalConfig, game), player_config


def main(overrides: list[str]) -> int:
    library, game, player_config = build(overrides)
    try:
        library.get(game.side)
    except ModelFileError as error:
        raise InputFileError(str(error)) from error
    return play_terminal(ModelPlayer(library, player_config), game)
