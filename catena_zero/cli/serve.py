"""catena-zero serve: play the model in a browser.

    catena-zero serve                          # bundled champions, http://127.0.0.1:8765/
    catena-zero serve --model model.pt --port 9000 player.simulations=256

The page draws the hex board as SVG with coordinates; choose side, variant, komi and colour;
click a cell to place a stone; take the button, swap (nokomi), undo, new game; it shows the
model's win rate, score lead and an ownership overlay.
"""

from __future__ import annotations

from catena_zero.cli.common import ConfigError, InputFileError, compose, to_container, to_dataclass
from catena_zero.export.model_file import ModelFileError
from catena_zero.play.bundled import ModelLibrary
from catena_zero.play.model_player import ModelPlayer, PlayerConfig
from catena_zero.play.web import ServeConfig, serve


def build(overrides: list[str]) -> tuple[str | None, ServeConfig, PlayerConfig]:
    config = compose("serve", overrides)
    values = to_container(config)
    model = values.get("model")
    return (None if model in (None, "") else str(model),
            to_dataclass(ServeConfig, {key: value for key, value in values.items()
                                       if key not in ("model", "player")}),
            to_dataclass(PlayerConfig, config.player, "player"))


def main(overrides: list[str]) -> int:
    model, serve_config, player_config = build(overrides)
    try:
        library = ModelLibrary(model)
    except ModelFileError as error:
        raise InputFileError(str(error)) from error
    if not library.sides():
        raise ConfigError("no model to play: no bundled champion is installed; "
                          "pass --model FILE (see catena-zero export)")
    serve(ModelPlayer(library, player_config), serve_config)
    return 0
