"""The komi strength curve: one atlas a strength, read back into rows and verdicts, and
`catena-zero komi curve` end to end."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from catena_zero.cli.komi import atlas_models
from catena_zero.cli.main import main
from catena_zero.komi.atlas import load_atlas, run_atlas
from catena_zero.komi.atlas.curve import (
    brackets_overlap,
    curve_document,
    curve_markdown,
    curve_plan,
    side_verdicts,
    strength_path,
    strengths_by_side,
)
from catena_zero.komi.atlas.curve_plot import write_curve
from catena_zero.komi.config import AtlasConfig, CurveConfig, KomiConfig
from catena_zero.play.bundled import ModelLibrary
from tests.komi.test_komi_atlas import CHEAP, exact_model

ROOT = Path(__file__).resolve().parents[2]
SIDE4 = ROOT / "catena_zero" / "play" / "models" / "side4.pt"


def test_the_plan_gives_every_side_each_strength_and_the_extras_only_theirs(tmp_path):
    curve = CurveConfig(sides=[2, 4, 6], simulations=[32, 8], extra=["4:128", "6:128", "2:16"],
                        output_dir=str(tmp_path))
    assert strengths_by_side(curve) == {8: [2, 4, 6], 16: [2], 32: [2, 4, 6], 128: [4, 6]}
    plan = curve_plan(curve, AtlasConfig(check_simulations=4, exact_sides=[2, 3]))
    assert [simulations for simulations, _ in plan] == [8, 16, 32, 128]
    for simulations, atlas in plan:
        assert atlas.simulations == simulations and atlas.check_simulations == 0
        assert atlas.variants == ["komi/standard"]
        assert atlas.output == str(tmp_path / f"sims{simulations}" / "atlas.json")
        assert atlas.exact_sides == ([2] if 2 in atlas.sides else [])
    assert plan[-1][1].sides == [4, 6]


@pytest.mark.parametrize("changes, message", [
    ({"sides": [1]}, "curve.sides"),
    ({"sides": []}, "curve.sides"),
    ({"variants": ["double/standard"]}, "not komi tracks"),
    ({"variants": ["komi/fast"]}, "not komi tracks"),
    ({"simulations": [0]}, "curve.simulations"),
    ({"simulations": []}, "curve.simulations"),
    ({"extra": ["four:8"]}, "SIDE:SIMULATIONS"),
    ({"extra": ["11:8"]}, "curve.extra"),
    ({"extra": ["4:0"]}, "curve.extra"),
])
def test_bad_curve_settings_are_refused_by_name(changes, message):
    with pytest.raises(ValueError, match=message):
        CurveConfig(**changes)
    with pytest.raises(ValueError, match="mode must be"):
        KomiConfig(mode="curves")


def test_brackets_overlap_with_open_ends():
    assert brackets_overlap([1, 3], [3, 5]) and not brackets_overlap([1, 2.5], [3, 5])
    assert brackets_overlap([None, 2], [None, -7]) and brackets_overlap([4, None], [None, 4])
    assert not brackets_overlap([6, None], [None, 5])


def _row(simulations, interval, exact=None, outcome=None, note=None, estimate=5.0):
    return {"track": "side5-komi-standard", "side": 5, "simulations": simulations,
            "estimate": estimate, "interval": interval, "exact": exact,
            "exact_outcome": outcome, "exact_outcome_note": note}


def test_a_verdict_reads_the_two_strongest_measurements():
    moving = side_verdicts([_row(8, [2, 4]), _row(16, [5, 7]), _row(32, [9, 11])])
    verdict = moving["side5-komi-standard"]
    assert verdict["strengths"] == [8, 16, 32] and verdict["strongest"] == 32
    assert verdict["last_two_overlap"] is False and verdict["width"] == 2
    settled = side_verdicts([_row(8, [2, 4]), _row(16, [5, 8]), _row(32, [7, None])])
    assert settled["side5-komi-standard"]["last_two_overlap"] is True
    assert settled["side5-komi-standard"]["width"] is None  # an open end has no width
    alone = side_verdicts([_row(8, [2, 4])])["side5-komi-standard"]
    assert alone["last_two_overlap"] is None


def test_on_side_2_the_solvers_curve_ends_at_the_exact_value(tmp_path):
    """With the solver standing in for the net, every strength's bracket holds 2.5, the
    verdict says so, and the files are written from the atlases alone."""
    curve = CurveConfig(sides=[2], simulations=[4, 8], output_dir=str(tmp_path))
    atlas = AtlasConfig(**CHEAP | {"solver_cache": str(tmp_path / "cache.json")})
    model = exact_model()
    for _, config in curve_plan(curve, atlas):
        run_atlas(config, lambda *track: model, progress=False, log=lambda line: None)
    document = curve_document(curve)
    assert [row["simulations"] for row in document["rows"]] == [4, 8]
    for row in document["rows"]:
        assert row["exact"] == 2.5 and row["exact_outcome"] == "holds"
        low, high = row["interval"]
        assert low <= 2.5 <= high and row["model"]["name"] == "solver"
        assert row["games"] > 0 and math.isfinite(row["estimate"])
    verdict = document["verdicts"]["side2-komi-standard"]
    assert verdict["last_two_overlap"] is True and verdict["exact_outcome"] == "holds"
    written = write_curve(document, tmp_path)
    assert [path.name for path in written] == ["curve.json", "curve.md", "curve.png"]
    assert json.loads((tmp_path / "curve.json").read_text()) == document
    table = (tmp_path / "curve.md").read_text()
    assert table.count("| side2-komi-standard | ") == 3 and "| holds |" in table
    assert (tmp_path / "curve.png").read_bytes()[:4] == b"\x89PNG"


def test_a_strength_not_measured_yet_is_left_out(tmp_path):
    curve = CurveConfig(sides=[2], simulations=[4, 8], output_dir=str(tmp_path))
    atlas = AtlasConfig(**CHEAP | {"solver_cache": str(tmp_path / "cache.json")})
    first = curve_plan(curve, atlas)[0][1]
    run_atlas(first, lambda *track: exact_model(), progress=False, log=lambda line: None)
    document = curve_document(curve)
    assert [row["simulations"] for row in document["rows"]] == [4]
    assert not strength_path(curve, 8).exists()
    assert "| side2-komi-standard | 4 |" in curve_markdown(document)


def test_without_a_model_each_track_is_measured_by_the_model_that_plays_it():
    library = ModelLibrary()
    models = atlas_models("", "cpu", "float32", library=library)
    for side in (4, 6, 8):
        expected = library.choice(side)
        assert models(side, "komi/standard").name == expected
    assert models(4, "komi/standard") is models(4, "komi/standard")  # loaded once


def cheap_curve_command(output_dir: Path, simulations: str, cache: Path) -> list[str]:
    """`catena-zero komi curve` on side 2 with side4.pt, few games a komi."""
    return ["komi", "curve", f"model={SIDE4}", "curve.sides=[2]",
            f"curve.simulations={simulations}", f"curve.output_dir={output_dir}",
            f"atlas.solver_cache={cache}", "atlas.bracket_games=4", "atlas.strength_games=2"]


def test_the_curve_command_measures_resumes_and_writes_its_files(tmp_path, capsys):
    arguments = cheap_curve_command(tmp_path, "[2,3]", tmp_path / "cache.json")
    assert main(arguments) == 0
    out = capsys.readouterr().out
    assert "curve: 2 measurements" in out
    first = load_atlas(tmp_path / "sims2" / "atlas.json")["records"]["side2-komi-standard"]
    assert first["model"]["name"] == "side4.pt" and first["settings"]["atlas"]["simulations"] == 2
    before = load_atlas(tmp_path / "sims3" / "atlas.json")["records"]
    assert main(arguments) == 0  # nothing measured again: the same model and settings
    assert "already measured with side4.pt; kept" in capsys.readouterr().out
    assert load_atlas(tmp_path / "sims3" / "atlas.json")["records"] == before
    assert (tmp_path / "curve.png").stat().st_size > 0


def test_an_unknown_mode_word_names_both_modes(capsys):
    assert main(["komi", "curves"]) == 2
    error = capsys.readouterr().err
    assert "curves" in error and "atlas and curve" in error


def test_read_curve_takes_a_curve_and_refuses_anything_else_in_one_line(tmp_path):
    from catena_zero.komi.atlas.curve import read_curve
    from catena_zero.komi.atlas.document import AtlasError

    assert read_curve(tmp_path) is None  # no curve.json: nothing to add
    document = {"format": "catena-zero komi strength curve", "format_version": 1,
                "variants": ["komi/standard"], "rows": [], "verdicts": {}}
    (tmp_path / "curve.json").write_text(json.dumps(document))
    assert read_curve(tmp_path) == document
    for text, message in (("{not json", "not readable JSON"),
                          (json.dumps({**document, "format_version": 2}), "format_version 1"),
                          (json.dumps({**document, "format": "other"}), "not a 'catena-zero"),
                          (json.dumps({**document, "rows": {}}), "not a 'catena-zero"),
                          ("[]", "not a 'catena-zero")):
        (tmp_path / "curve.json").write_text(text)
        with pytest.raises(AtlasError, match=message) as error:
            read_curve(tmp_path)
        assert "\n" not in str(error.value) and str(tmp_path / "curve.json") in str(error.value)


def test_the_curve_command_rewrites_the_designer_page_beside_its_atlas(tmp_path, capsys):
    """A curve written into ATLAS_DIR/curve, beside ATLAS_DIR/atlas.json, rewrites
    ATLAS_DIR/designer.md with its table at strength; elsewhere it touches no page."""
    import shutil

    shutil.copy(ROOT / "docs" / "komi" / "atlas.json", tmp_path / "atlas.json")
    arguments = cheap_curve_command(tmp_path / "curve", "[2]", tmp_path / "cache.json")
    assert main(arguments) == 0
    out = capsys.readouterr().out
    page = (tmp_path / "designer.md").read_text()
    assert str(tmp_path / "designer.md") in out
    assert "## At strength, with the models that play today" in page
    section = page.split("## At strength")[1]
    # the page names today's player of side 2 (general.pt), not the file the curve measured
    assert "| 2 | general.pt " in section and "| 2 | 2 |" not in section
    assert "Side 2: the curve measured side4.pt" in section
    assert "the default player, 128 simulations a move" in section
    (tmp_path / "designer.md").unlink()
    elsewhere = tmp_path / "other"  # beside the atlas, but not the directory its page reads
    assert main(cheap_curve_command(elsewhere, "[2]", tmp_path / "cache.json")) == 0
    assert (elsewhere / "curve.json").is_file() and not (tmp_path / "designer.md").exists()
    assert "designer.md" not in capsys.readouterr().out


def test_a_crossing_beyond_the_range_is_drawn_at_its_brackets_closed_end(tmp_path):
    """Side 8 at 8 simulations crossed above komi 15 (bracket [12, open]): the figure draws
    it at 12 with the open end's arrow, not nothing; a row with nothing finite is skipped."""
    from catena_zero.komi.atlas.curve_plot import _ends, plot_curve

    above = {"estimate": None, "estimate_side": "above", "interval": [12.0, None]}
    below = {"estimate": None, "estimate_side": "below", "interval": [None, 1.0]}
    inside = {"estimate": 3.7, "estimate_side": None, "interval": [0.0, 6.0]}
    assert _ends(above) == (12.0, 0.0, 0.0) and _ends(below) == (1.0, 0.0, 0.0)
    assert _ends(inside) == pytest.approx((3.7, 3.7, 2.3))
    assert _ends({"estimate": None, "estimate_side": None, "interval": [None, None]}) is None
    rows = [{"track": "side8-komi-standard", "simulations": 8, "exact": None, **above},
            {"track": "side8-komi-standard", "simulations": 32, "exact": None, **inside}]
    assert plot_curve({"rows": rows}, tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
