"""catena-zero analysis: a JSON-lines analysis engine on stdin/stdout, modelled on KataGo's.

    catena-zero analysis                          # bundled model of each track
    catena-zero analysis --model model.pt visits=200 batch_size=32
    echo '{"id":"q","rules":"6/komi/standard","komi":7,"moves":["F6"]}' | catena-zero analysis

One JSON query per line in, one answer line per analysed turn out (win rates, score leads,
top moves with visits, priors and principal variations, ownership); a bad line gets one
error line naming the field and the engine goes on. Lines waiting together are searched in
one batched search per track. The protocol: docs/reference/analysis.md. The engine stops
at the end of its input.
"""

from __future__ import annotations

import sys

from catena_zero.cli.common import InputFileError, compose, to_container, to_dataclass
from catena_zero.export.model_file import ModelFileError
from catena_zero.play.analysis_engine import AnalysisConfig, AnalysisEngine
from catena_zero.play.bundled import ModelLibrary


def build_engine(overrides: list[str]) -> AnalysisEngine:
    """The engine the composed `analysis` config describes (ConfigError on bad settings,
    InputFileError on a refused model file)."""
    config = compose("analysis", overrides)
    values = to_container(config)
    model = values.pop("model", None)
    analysis_config = to_dataclass(AnalysisConfig, values)
    try:
        library = ModelLibrary(None if model in (None, "") else str(model))
    except ModelFileError as error:
        raise InputFileError(str(error)) from error
    if analysis_config.threads > 0:
        import torch

        torch.set_num_threads(analysis_config.threads)
    return AnalysisEngine(library, analysis_config)


def main(overrides: list[str]) -> int:
    engine = build_engine(overrides)
    try:
        engine.run(sys.stdin, sys.stdout)
    except BrokenPipeError:  # the client went away: nothing left to answer
        return 0
    return 0
