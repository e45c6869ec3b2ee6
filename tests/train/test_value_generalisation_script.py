"""scripts/value_generalisation.py: value loss on fresh games beside the run's newest shards."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from catena_zero.cli.common import compose
from catena_zero.cli.train import build_config
from catena_zero.data import list_shards, read_shard
from catena_zero.pipeline.inline import train_loop
from catena_zero.train import build_network, latest_checkpoint, load_checkpoint
from tests.script_loader import load_script


def test_reports_fresh_and_shard_losses_of_a_tiny_run(tmp_path: Path, capsys) -> None:
    run_dir = tmp_path / "run"
    train_loop(build_config(compose("train", ["preset=tiny", f"run_dir={run_dir}",
                                              "tensorboard=false"])))
    script = load_script("value_generalisation")
    out = tmp_path / "report.json"
    assert script.main(["--run-dir", str(run_dir), "--games", "4", "--shards", "2",
                        "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["fresh"]["games"] == 4 and report["fresh"]["positions"] > 0
    shards = list_shards(run_dir / "shards")[-2:]
    assert [entry["shard"] for entry in report["shards"]] == [path.name for path in shards]
    # The reported shard loss is the value head's cross-entropy on that shard.
    net = build_network(load_checkpoint(latest_checkpoint(run_dir / "checkpoints")))
    samples, _ = read_shard(shards[-1])
    with torch.inference_mode():
        output = net.eval()(torch.as_tensor(samples.planes, dtype=torch.float32),
                            torch.as_tensor(samples.globals, dtype=torch.float32))
        expected = -(torch.as_tensor(samples.value_target, dtype=torch.float32)
                     * torch.log_softmax(output.value_logits, dim=1)).sum(dim=1).mean()
    assert report["shards"][-1]["value_cross_entropy"] == pytest.approx(float(expected), rel=1e-4)
    assert np.isfinite(report["fresh"]["value_cross_entropy"])
    assert "value cross-entropy" in capsys.readouterr().out


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    script = load_script("value_generalisation")
    with pytest.raises(SystemExit):
        script.main(["--run-dir", str(tmp_path), "--games", "0"])
    with pytest.raises(SystemExit):
        script.main(["--run-dir", str(tmp_path)])  # no checkpoint there
