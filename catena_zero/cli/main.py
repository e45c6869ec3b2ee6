"""The `catena-zero` console script: dispatch a subcommand to `catena_zero.cli.<name>.main`.

    catena-zero SUBCOMMAND [key=value ...] [--key value ...] [--key=value ...]
    catena-zero SUBCOMMAND --help      # the subcommand's help and its default config
    catena-zero SUBCOMMAND --cfg [...] # print the composed config and exit
    catena-zero SUBCOMMAND -m key=a,b  # a sweep: one job per value, in turn (cli.multirun)

`--key value` and `--key=value` become the Hydra override `key=value` (dashes in the key
become underscores); a bare `--flag` (followed by nothing, another option or an override)
becomes `flag=true`. Plain Hydra overrides
(`key=value`, `+key=value`, `~key`, `group=option`) pass through unchanged. `side`,
`game_type` and `scoring` (`--side 4`, `side=4`) are short for `board.side`,
`rules.game_type` and `rules.scoring` in every subcommand (`catena_zero.cli.common`).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from omegaconf import OmegaConf

from catena_zero.cli.common import (
    ConfigError,
    InputFileError,
    compose,
    config_dir,
    file_errors,
    format_config,
)
from catena_zero.cli.multirun import run_sweep, split_flag

# Subcommand -> one-line description. The module `catena_zero.cli.<name>` provides
# `main(overrides: list[str]) -> int`; a missing module means "not available yet". A module
# whose command line has words of its own (`evaluate learning`) also provides
# `prepare_overrides(overrides) -> overrides`, which turns them into Hydra overrides.
SUBCOMMANDS: dict[str, str] = {
    "train": "alternate self-play and training (inline or on Ray)",
    "arena": "play matches between agents / checkpoints, gating and Elo",
    "komi": "estimate the fair komi of a board and rules",
    "evaluate": "measure a trained net: learning, endgame, trajectories, generalisation",
    "report": "draw a training run's PNG report (strength and losses) from its metrics",
    "solve": "solve small boards exactly",
    "export": "export a checkpoint as a standalone model file",
    "gtp": "speak GTP on stdin/stdout",
    "analysis": "JSON-lines analysis engine on stdin/stdout (batched searches)",
    "play": "play against an agent in the terminal",
    "serve": "serve the web interface",
}

EXIT_USAGE = 2
EXIT_BAD_FILE = 1  # a model, checkpoint, shard or registry file was refused (named on stderr)


def usage() -> str:
    """Top-level help text listing every subcommand."""
    width = max(len(name) for name in SUBCOMMANDS)
    lines = [
        "usage: catena-zero SUBCOMMAND [key=value ...] [--key value ...]",
        "",
        "AlphaZero-style self-play framework for the board game Catena.",
        "",
        "subcommands:",
    ]
    for name, description in SUBCOMMANDS.items():
        lines.append(f"  {name.ljust(width)}  {description}")
    lines += [
        "",
        "Options of every subcommand are Hydra overrides over configs/<subcommand>.yaml,",
        "e.g. `catena-zero train preset=side4 train.batch_size=256 run_dir=runs/a`.",
        "`catena-zero SUBCOMMAND --help` shows its defaults; `--cfg` prints the composed config.",
        "`-m` / `--multirun` sweeps: `catena-zero komi -m --side 2,3` runs one job per value.",
    ]
    return "\n".join(lines)


def translate_arguments(arguments: Sequence[str]) -> list[str]:
    """Turn `--key value` / `--key=value` / `--flag` into Hydra overrides `key=value`."""
    overrides: list[str] = []
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        index += 1
        if not argument.startswith("--") or argument == "--":
            if argument != "--":
                overrides.append(argument)
            continue
        body = argument[2:]
        if "=" in body:
            key, value = body.split("=", 1)
        elif index < len(arguments) and not _looks_like_option(arguments[index]):
            key, value = body, arguments[index]
            index += 1
        else:
            key, value = body, "true"
        if not key:
            raise ConfigError(f"malformed option {argument!r}")
        overrides.append(f"{key.replace('-', '_')}={value}")
    return overrides


def _looks_like_option(argument: str) -> bool:
    """True for `--x`, a Hydra override `key=value` or `~key`: not a value for a bare flag."""
    return argument.startswith("--") or argument.startswith("~") or (
        "=" in argument and argument.split("=", 1)[0].lstrip("+").replace(".", "_")
        .replace("/", "_").replace("-", "_").isidentifier())


def load_subcommand(name: str):
    """Import `catena_zero.cli.<name>`; None when that module does not exist yet."""
    module_name = f"catena_zero.cli.{name}"
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name == module_name:
            return None
        raise


def subcommand_help(name: str, module) -> str:
    """The subcommand's docstring followed by its default composed config, when it has one:
    only the top-level keys the subcommand reads when it names them in `HELP_KEYS` (a
    config that composes the training schema so that presets apply lists much it ignores)."""
    text = (module.__doc__ or f"catena-zero {name}").strip()
    if (config_dir() / f"{name}.yaml").exists():
        config = compose(name, [])
        keys = getattr(module, "HELP_KEYS", None)
        if keys:
            config = OmegaConf.masked_copy(config, [key for key in keys if key in config])
        text += f"\n\nDefault config (configs/{name}.yaml, override with key=value):\n\n"
        text += format_config(config)
    return text


def main(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point; returns the process exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments or arguments[0] in ("-h", "--help", "help"):
        print(usage())
        return 0 if arguments else EXIT_USAGE
    name, rest = arguments[0], arguments[1:]
    if name not in SUBCOMMANDS:
        print(f"catena-zero: unknown subcommand {name!r}; choose one of: "
              f"{', '.join(SUBCOMMANDS)}", file=sys.stderr)
        return EXIT_USAGE
    module = load_subcommand(name)
    if module is None:
        print(f"catena-zero: subcommand {name!r} is not available yet "
              f"(no module catena_zero.cli.{name})", file=sys.stderr)
        return EXIT_USAGE
    try:
        if "-h" in rest or "--help" in rest:
            print(subcommand_help(name, module))
            return 0
        print_config = "--cfg" in rest
        sweep, rest = split_flag(rest)
        overrides = translate_arguments([a for a in rest if a != "--cfg"])
        overrides = getattr(module, "prepare_overrides", list)(overrides)
        if sweep:
            def show_or_run(job_overrides: list[str]) -> int:
                if print_config:
                    print(format_config(compose(name, job_overrides)))
                    return 0
                return int(module.main(job_overrides) or 0)

            return run_sweep(name, overrides, show_or_run)
        if print_config:
            print(format_config(compose(name, overrides)))
            return 0
        return int(module.main(overrides) or 0)
    except ConfigError as error:
        if isinstance(error, InputFileError):  # a bad model file, not a bad setting
            print(f"catena-zero {name}: error: {error}", file=sys.stderr)
            return EXIT_BAD_FILE
        print(f"catena-zero {name}: config error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as error:
        if not isinstance(error, file_errors()):
            raise
        print(f"catena-zero {name}: error: {error}", file=sys.stderr)
        return EXIT_BAD_FILE
    except KeyboardInterrupt:
        print(f"catena-zero {name}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
