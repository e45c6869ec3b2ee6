"""benchmarks/bench_search.py: the search's own cost with a free evaluator."""

from __future__ import annotations

import math

import pytest

from benchmarks import bench_search


def test_overhead_counts_every_evaluated_position() -> None:
    result = bench_search.measure_search_overhead(3, 4, "puct", num_simulations=3, repeats=2)
    # Each search evaluates the root and one leaf per simulation, for every game.
    assert result.positions == 2 * (3 + 1) * result.batch_size
    assert result.positions_per_s > 0 and 0 <= result.engine_cpu_s <= result.cpu_s + 1e-3


def test_smallest_table_prints_sane_figures(capsys) -> None:
    assert bench_search.main(["--sides", "3", "--batch-sizes", "4", "--algorithms", "gumbel",
                              "--simulations", "4", "--repeats", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[1].split()[:4] == ["3", "4", "gumbel", "4"]
    wall, per_cpu_s, cpu_ms_per_simulation, engine = lines[1].split()[4:]
    assert math.isfinite(float(wall)) and float(wall) > 0
    assert math.isfinite(float(per_cpu_s)) and float(per_cpu_s) >= float(wall) * 0.5
    # One simulation evaluates one position of each of the batch's 4 games.
    assert float(cpu_ms_per_simulation) == pytest.approx(4000 / float(per_cpu_s), abs=0.006)
    assert engine.endswith("%") and 0 <= int(engine[:-1]) <= 100
