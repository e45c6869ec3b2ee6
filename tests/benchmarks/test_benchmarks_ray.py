"""benchmarks/bench_ray.py: the Ray runtime's self-play throughput (starts a Ray cluster)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("ray")


@pytest.mark.slow
def test_one_actor_one_shard(tmp_path: Path, capsys) -> None:
    from benchmarks import bench_ray

    out = tmp_path / "bench_ray.json"
    assert bench_ray.main(["--actors", "1", "--side", "2", "--shards", "1", "--games", "2",
                           "--simulations", "2", "--json", str(out)]) == 0
    (row,) = json.loads(out.read_text())["rows"]
    assert row["actors"] == 1 and row["positions_per_s"] > 0 and row["scaling"] == 1.0
    assert "positions/s" in capsys.readouterr().out
