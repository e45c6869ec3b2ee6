"""`catena-zero komi atlas` end to end on one tiny track, and the notebook on its JSON."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from catena_zero.cli.main import main
from catena_zero.komi.atlas import load_atlas

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "catena_zero" / "play" / "models" / "side4.pt"
TINY = ["atlas.simulations=2", "atlas.double_games=2", "atlas.exact_sides=[2]"]


def test_one_track_atlas_writes_json_table_and_figures(tmp_path, capsys):
    output = tmp_path / "atlas.json"
    arguments = ["komi", "atlas", "atlas.sides=[2]", "atlas.variants=[double/standard]",
                 f"model={MODEL}", f"atlas.output={output}",
                 f"atlas.solver_cache={tmp_path / 'cache.json'}", *TINY]
    assert main(arguments) == 0
    assert "1 tracks" in capsys.readouterr().out
    record = load_atlas(output)["records"]["side2-double-standard"]
    assert record["status"] == "measured" and record["games"] == 2
    assert record["model"]["name"] == "side4.pt" and len(record["model"]["sha256"]) == 64
    assert record["exact"] == 0.0 and record["settings"]["atlas"]["double_games"] == 2
    assert (tmp_path / "atlas.md").read_text().count("| 2 | double/standard | measured |") == 1
    assert (tmp_path / "atlas_fair_komi.png").stat().st_size > 0

    notebook = nbformat.read(ROOT / "docs" / "komi" / "atlas.ipynb", as_version=4)
    out_dir = tmp_path / "redrawn"
    os.environ["ATLAS_JSON"], os.environ["ATLAS_OUT"] = str(output), str(out_dir)
    try:
        NotebookClient(notebook, timeout=120, kernel_name="python3",
                       resources={"metadata": {"path": str(ROOT)}}).execute()
    finally:
        del os.environ["ATLAS_JSON"], os.environ["ATLAS_OUT"]
    assert (out_dir / "atlas.md").read_text() == (tmp_path / "atlas.md").read_text()
    assert (out_dir / "atlas_fair_komi.png").stat().st_size > 0


def test_a_missing_model_is_one_line_and_changes_nothing(tmp_path, capsys):
    output = tmp_path / "atlas.json"
    code = main(["komi", "atlas", "model=no/such/model.pt", f"atlas.output={output}"])
    assert code == 1
    error = capsys.readouterr().err
    assert "model=no/such/model.pt" in error and len(error.strip().splitlines()) == 1
    assert not output.exists()


def test_an_unknown_mode_word_or_variant_is_a_config_error(capsys):
    assert main(["komi", "atlass"]) == 2
    assert "atlass" in capsys.readouterr().err
    assert main(["komi", "atlas", "atlas.variants=[komi/fast]"]) == 2
    assert "atlas.variants" in capsys.readouterr().err


def test_the_models_arithmetic_is_part_of_a_tracks_settings(tmp_path, capsys):
    """float32 records stay unnamed (records measured before the setting keep their
    fingerprints); a bfloat16 model measures the track again and says so in its record."""
    output = tmp_path / "atlas.json"
    arguments = ["komi", "atlas", "atlas.sides=[2]", "atlas.variants=[double/standard]",
                 f"model={MODEL}", f"atlas.output={output}",
                 f"atlas.solver_cache={tmp_path / 'cache.json'}", *TINY]
    assert main([*arguments, "inference_precision=float32"]) == 0
    first = load_atlas(output)["records"]["side2-double-standard"]
    assert "precision" not in first["settings"]
    assert main([*arguments, "inference_precision=float32"]) == 0
    assert load_atlas(output)["records"]["side2-double-standard"] == first
    assert main([*arguments, "inference_precision=bfloat16"]) == 0
    second = load_atlas(output)["records"]["side2-double-standard"]
    assert second["settings"]["precision"] == "bfloat16"
    assert second["fingerprint"] != first["fingerprint"]
    capsys.readouterr()
    assert main([*arguments, "inference_precision=half"]) == 2
    assert "inference_precision" in capsys.readouterr().err


def test_the_atlas_model_runs_its_network_in_the_precision_asked(tmp_path):
    from catena_zero.cli.komi import load_atlas_model
    from catena_zero.rules import Engine, Rules

    for precision in ("float32", "bfloat16"):
        model = load_atlas_model(str(MODEL), "cpu", precision)
        assert model.precision == precision and model.name == "side4.pt"
        evaluate_fn = model.evaluator(Rules(3))
        states = Engine(Rules(3)).new_games(8, komi=0)
        evaluation = evaluate_fn(states)
        assert evaluation.policy_logits.shape == (8, 20) and evaluation.value.shape == (8,)
