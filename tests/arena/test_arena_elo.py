"""Bradley-Terry Elo: recovery of known ratings, anchoring, intervals and the outputs."""

from __future__ import annotations

import numpy as np
import pytest

from catena_zero.arena.elo import (
    PairwiseResults,
    fit_bradley_terry,
    plot_elo,
    read_elo_csv,
    write_elo_csv,
    write_elo_tensorboard,
)
from catena_zero.arena.stats import score_from_elo

TRUE_ELO = {"random": 0.0, "greedy": 180.0, "uct:200": 420.0, "step100": 250.0,
            "step200": 520.0}
STEPS = [None, None, None, 100, 200]


def _synthetic_results(games_per_pair: int, seed: int, draw_rate: float = 0.1
                       ) -> PairwiseResults:
    rng = np.random.default_rng(seed)
    names = list(TRUE_ELO)
    results = PairwiseResults(names, STEPS)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            score = float(score_from_elo(TRUE_ELO[a] - TRUE_ELO[b]))
            draws = draw_rate * min(score, 1 - score)  # keeps every probability valid
            wins, drawn, losses = rng.multinomial(
                games_per_pair, [score - draws / 2, draws, 1 - score - draws / 2])
            results.add(a, b, wins, drawn, losses)
    return results


def test_fit_recovers_known_ratings():
    fit = fit_bradley_terry(_synthetic_results(2000, seed=1), anchor="random")
    assert fit.rating("random") == 0.0 and fit.stderr[fit.names.index("random")] == 0.0
    for name, elo in TRUE_ELO.items():
        index = fit.names.index(name)
        assert abs(fit.elo[index] - elo) <= 4 * fit.stderr[index] + 1e-9, name
        assert abs(fit.elo[index] - elo) < 30, name


def test_intervals_cover_the_truth_at_about_95_percent():
    covered = total = 0
    for seed in range(40):
        fit = fit_bradley_terry(_synthetic_results(200, seed=100 + seed))
        for name, elo in TRUE_ELO.items():
            if name == "random":
                continue
            index = fit.names.index(name)
            covered += fit.lower[index] <= elo <= fit.upper[index]
            total += 1
    assert 0.88 <= covered / total <= 0.995


def test_draws_count_as_half_wins():
    results = PairwiseResults(["random", "x"])
    results.add("x", "random", 0, 100, 0)
    assert abs(fit_bradley_terry(results).rating("x")) < 1e-6
    results = PairwiseResults(["random", "x"])
    results.add("x", "random", 50, 100, 10)  # score (50 + 50) / 160 = 0.625
    expected = -400 * np.log10(1 / 0.625 - 1)
    assert fit_bradley_terry(results, prior_sd_elo=1e6).rating("x") == pytest.approx(
        expected, abs=0.01)


def test_perfect_records_give_finite_ratings():
    results = PairwiseResults(["random", "strong"])
    results.add("strong", "random", 20, 0, 0)
    fit = fit_bradley_terry(results)
    assert np.all(np.isfinite(fit.elo)) and fit.rating("strong") > 400


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="unique"):
        PairwiseResults(["a", "a"])
    results = PairwiseResults(["random", "a"])
    with pytest.raises(ValueError, match="'zzz'"):
        results.add("zzz", "a", 1, 0, 0)
    with pytest.raises(ValueError, match="itself"):
        results.add("a", "a", 1, 0, 0)
    with pytest.raises(ValueError, match="'uniform'"):
        fit_bradley_terry(results, anchor="uniform")


def test_csv_plot_and_tensorboard(tmp_path):
    fit = fit_bradley_terry(_synthetic_results(100, seed=3))
    csv_path = write_elo_csv(tmp_path / "elo.csv", fit)
    rows = read_elo_csv(csv_path)
    assert [row["elo"] for row in rows] == sorted((row["elo"] for row in rows), reverse=True)
    by_name = {row["player"]: row for row in rows}
    assert by_name["random"]["elo"] == 0.0 and by_name["random"]["step"] is None
    assert by_name["step200"]["step"] == 200
    assert by_name["step200"]["elo_lower"] < by_name["step200"]["elo"] < by_name["step200"][
        "elo_upper"]
    png = plot_elo(fit, tmp_path / "elo.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    write_elo_tensorboard(fit, tmp_path / "tb")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    checkpoint = events.Scalars("elo/checkpoint")
    assert [e.step for e in checkpoint] == [100, 200]
    assert checkpoint[1].value == pytest.approx(fit.rating("step200"), abs=1e-3)
    assert "elo/baseline/greedy" in events.Tags()["scalars"]


def test_csv_reader_refuses_other_formats(tmp_path):
    path = tmp_path / "elo.csv"
    path.write_text("player,elo\nrandom,0\n")
    with pytest.raises(ValueError, match="columns"):
        read_elo_csv(path)
