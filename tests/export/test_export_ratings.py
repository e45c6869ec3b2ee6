"""Ratings files: a model's Elo per track against one reference player, read without running
anything, refused with one line naming the file when damaged, recorded by export."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from catena_zero.cli.export import main as export_main
from catena_zero.cli.main import main as cli_main
from catena_zero.export.exporter import export_model
from catena_zero.export.model_file import load_model_file
from catena_zero.export.ratings import (
    MAX_RATINGS_BYTES,
    Ratings,
    RatingsFileError,
    elo_from_record,
    read_ratings,
    write_ratings,
)
from catena_zero.rules import Track
from catena_zero.train import Counters, TrainConfig, Trainer, save_checkpoint
from tests.export.tiny_model import tiny_general_network

SIDE3, SIDE6 = Track(3, "komi", "standard"), Track(6, "komi", "standard")
REFERENCE = "one-ply greedy player = 0 (test matches)"


def test_elo_from_record_is_the_logistic_elo_of_the_shrunk_score() -> None:
    assert elo_from_record(5, 0, 5) == pytest.approx(0.0)
    assert elo_from_record(3, 4, 3) == pytest.approx(0.0)
    # 175-0-25 scores (175.5/201), the logistic inverse of it.
    assert elo_from_record(175, 0, 25) == pytest.approx(
        400 * math.log10((175.5 / 201) / (25.5 / 201)))
    # Perfect and null scores stay finite and symmetric.
    assert elo_from_record(200, 0, 0) == pytest.approx(-elo_from_record(0, 0, 200))
    assert elo_from_record(200, 0, 0) == pytest.approx(400 * math.log10(401))  # 1041
    assert elo_from_record(10, 0, 0) < elo_from_record(100, 0, 0)  # more games, more sure
    for record in [(0, 0, 0), (-1, 2, 3)]:
        with pytest.raises(ValueError, match="match record"):
            elo_from_record(*record)


def test_round_trip(tmp_path: Path) -> None:
    ratings = Ratings(REFERENCE, {Track(6, "komi", "standard"): 338.0,
                                  Track(4, "double", "longest"): -12.5})
    write_ratings(tmp_path / "r.json", ratings)
    assert read_ratings(tmp_path / "r.json") == ratings
    document = json.loads((tmp_path / "r.json").read_text())
    assert document["elos"] == {"6/komi/standard": 338.0, "4/double/longest": -12.5}
    with pytest.raises(RatingsFileError, match="Elo of track 6/komi/standard must be a finite"):
        write_ratings(tmp_path / "bad.json", Ratings(REFERENCE, {SIDE6: math.inf}))
    assert not (tmp_path / "bad.json").exists()


def _document(**changes) -> dict:
    document = {"format": "catena_zero.ratings", "format_version": 1, "reference": REFERENCE,
                "elos": {"6/komi/standard": 100.0}}
    return document | changes


@pytest.mark.parametrize("text, message", [
    (json.dumps(_document(format="catena_zero.general_targets")), "not a ratings file"),
    (json.dumps([1, 2]), "not a ratings file"),
    (json.dumps(_document(format_version=2)), "format version 2 is not 1"),
    (json.dumps(_document(extra=1)), "unknown field 'extra'"),
    (json.dumps(_document(reference="")), "reference must name"),
    (json.dumps(_document(reference="a\nb")), "one printable line"),
    (json.dumps(_document(reference="x" * 301)), "at most 300 characters"),
    (json.dumps(_document(elos={})), "one or more tracks"),
    (json.dumps(_document(elos=[1])), "one or more tracks"),
    (json.dumps(_document(elos={"6/go/standard": 1.0})), "elos entry '6/go/standard'"),
    (json.dumps(_document(elos={"6/komi/standard": 1.0, "side6-komi-standard": 2.0})),
     "rated twice"),
    (json.dumps(_document(elos={"6/komi/standard": "100"})), "must be a finite number"),
    (json.dumps(_document(elos={"6/komi/standard": True})), "must be a finite number"),
    ('{"format": "catena_zero.ratings", "format_version": 1, "reference": "r", '
     '"elos": {"6/komi/standard": NaN}}', "not valid JSON: NaN is not a rating"),
    ('{"format": "catena_zero.ratings", "elos": {"6/komi/standard": Infinity}}',
     "Infinity is not a rating"),
    ('{"format": "catena_zero.rat', "not valid JSON"),
])
def test_damaged_files_are_refused_by_name(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "ratings.json"
    path.write_text(text)
    with pytest.raises(RatingsFileError, match=message) as refused:
        read_ratings(path)
    assert str(path) in str(refused.value) and "\n" not in str(refused.value)


def test_missing_directory_oversized_and_binary_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RatingsFileError, match="does not exist"):
        read_ratings(tmp_path / "none.json")
    with pytest.raises(RatingsFileError, match="is a directory"):
        read_ratings(tmp_path)
    (tmp_path / "big.json").write_text(" " * (MAX_RATINGS_BYTES + 1))
    with pytest.raises(RatingsFileError, match="more than a ratings file can be"):
        read_ratings(tmp_path / "big.json")
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00\x80")
    with pytest.raises(RatingsFileError, match="cannot be read"):
        read_ratings(tmp_path / "binary.json")


@pytest.fixture(scope="module")
def general_checkpoint(tmp_path_factory) -> Path:
    trainer = Trainer(tiny_general_network(seed=6), TrainConfig(), device="cpu")
    extra = {"tracks": ["3/komi/standard", "6/komi/standard", "4/nokomi/standard"]}
    return save_checkpoint(tmp_path_factory.mktemp("general"), trainer,
                           Counters(step=0, iteration=2), config={},
                           rules={"side": 3, "game_type": "komi", "scoring": "standard"},
                           extra=extra)


def test_export_records_a_ratings_file(general_checkpoint: Path, tmp_path: Path) -> None:
    ratings_path = tmp_path / "ratings.json"
    write_ratings(ratings_path, Ratings(REFERENCE, {SIDE6: 338.0,
                                                    Track(4, "nokomi", "standard"): 12.0}))
    meta = export_model(general_checkpoint, tmp_path / "m.pt", ratings=ratings_path)
    assert [(str(t), t.elo, t.elo_reference) for t in meta.tracks] == [
        ("3/komi/standard", None, None), ("6/komi/standard", 338.0, REFERENCE),
        ("4/nokomi/standard", 12.0, REFERENCE)]
    assert load_model_file(tmp_path / "m.pt").metadata == meta
    for arguments, message in [({"elo": 5.0}, "carries its own reference"),
                               ({"elos": {"3/komi/standard": 1.0}}, "carries its own"),
                               ({"elo_reference": "x"}, "carries its own reference")]:
        with pytest.raises(ValueError, match=message):
            export_model(general_checkpoint, tmp_path / "refused.pt", ratings=ratings_path,
                         **arguments)
    write_ratings(ratings_path, Ratings(REFERENCE, {Track(7, "komi", "standard"): 1.0}))
    with pytest.raises(ValueError, match="the ratings names track 7/komi/standard, which is "
                                         "not among the exported tracks"):
        export_model(general_checkpoint, tmp_path / "refused.pt", ratings=ratings_path)
    assert not (tmp_path / "refused.pt").exists()


def test_cli_export_with_ratings_and_a_damaged_ratings_file(general_checkpoint: Path,
                                                             tmp_path: Path, capsys) -> None:
    ratings_path, output = tmp_path / "ratings.json", tmp_path / "cli.pt"
    write_ratings(ratings_path, Ratings(REFERENCE, {SIDE6: 338.0, SIDE3: 40.0}))
    assert export_main([f"checkpoint={general_checkpoint}", f"output={output}",
                        f"ratings={ratings_path}"]) == 0
    assert "2 rated" in capsys.readouterr().out
    ratings_path.write_text('{"format": "catena_zero.ratings", "format_version": 7}')
    output.unlink()
    code = cli_main(["export", f"checkpoint={general_checkpoint}", f"output={output}",
                     f"ratings={ratings_path}"])
    error = capsys.readouterr().err
    assert code != 0 and not output.exists()
    assert error.count("\n") == 1 and "format version 7 is not 1" in error
    assert str(ratings_path) in error and "Traceback" not in error
