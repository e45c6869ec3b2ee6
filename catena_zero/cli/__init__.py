"""catena_zero.cli: the `catena-zero` console script (the only package that imports hydra).

How a subcommand plugs in
-------------------------
`catena-zero NAME args...` (see `main.py`) turns `--key value` / `--key=value` into Hydra
overrides `key=value` and calls `catena_zero.cli.NAME.main(overrides)`. To add NAME:

1. Add `configs/NAME.yaml`, a top-level config whose defaults list picks groups
   (`configs/<group>/<option>.yaml`) and ends with `preset: side6` so every preset applies::

       defaults:
         - _self_
         - board: side6
         - rules: komi_standard
         - network: default
         - mcts: gumbel
         - preset: side6
       games: 200            # NAME's own keys at top level or in its own group
       run_dir: null

2. Write `catena_zero/cli/NAME.py`, thin: compose -> dataclasses -> one library call::

       '''catena-zero NAME: one paragraph shown by `catena-zero NAME --help`.'''
       from catena_zero.cli.common import compose, to_dataclass, rules_from_config
       from catena_zero.mcts.config import SearchConfig

       def main(overrides: list[str]) -> int:
           config = compose("NAME", overrides)                  # struct mode
           search = to_dataclass(SearchConfig, config.mcts, "mcts")  # ConfigError names keys
           rules = rules_from_config(config)
           ...one library call...
           return 0                                           # the exit status

   Raise `ConfigError` for bad user input: `main.py` prints it and exits with status 2.
   `NAME` must already be listed in `main.SUBCOMMANDS`; until its module exists the
   dispatcher answers "not available yet".

3. `tests/cli/test_cli_configs.py` discovers `configs/*.yaml` itself and composes each with
   every preset; it converts the groups it knows (board, rules, network, mcts, selfplay,
   train) to their dataclasses, so a new top-level config is covered without editing it.
"""
