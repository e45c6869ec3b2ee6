"""benchmarks/bench_search.py: the search's own cost with a free evaluator."""

from __future__ import annotations

from benchmarks import bench_search


def test_overhead_counts_every_evaluated_position() -> None:
    result = bench_search.measure_search_overhead(3, 4, "puct", num_simulations=3, repeats=2)
    # Each search evaluates the root and one leaf per simulation, for every game.
    assert result.positions == 2 * (3 + 1) * result.batch_size
    assert result.positions_per_s > 0 and 0 <= result.engine_cpu_s <= result.cpu_s + 1e-3


def test_smallest_table_runs(capsys) -> None:
    assert bench_search.main(["--sides", "3", "--batch-sizes", "4", "--algorithms", "gumbel",
                              "--simulations", "4", "--repeats", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[1].split()[:3] == ["3", "4", "gumbel"]
