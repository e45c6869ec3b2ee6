"""Champion registry: history, compare-and-set, concurrent writers, crashes, corrupt files."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from catena_zero.arena.registry import (
    ChampionEntry,
    ChampionRegistry,
    RegistryCorruptError,
    StaleChampionError,
    Track,
)

TRACK = Track(4, "komi", "standard")
REPO_ROOT = Path(__file__).resolve().parents[2]


def test_promotions_keep_history_and_previous(tmp_path):
    registry = ChampionRegistry(tmp_path / "champions.json")
    assert registry.champion(TRACK) is None and registry.history(TRACK) == []
    registry.promote(TRACK, ChampionEntry("a.pt", step=10, reason="first"))
    registry.promote(TRACK, ChampionEntry("b.pt", step=20, reason="threshold", score=0.6,
                                          games=100))
    other = Track(6, "double", "longest")
    registry.promote(other, ChampionEntry("c.pt", step=5))
    assert registry.champion(TRACK).checkpoint == "b.pt"
    assert registry.champion(TRACK).previous == "a.pt"
    assert [e.checkpoint for e in registry.history(TRACK)] == ["a.pt", "b.pt"]
    assert registry.champion(other).checkpoint == "c.pt"
    assert registry.tracks() == sorted([TRACK.key, other.key])
    document = json.loads((tmp_path / "champions.json").read_text())
    assert document["format_version"] == 1


def test_compare_and_set_refuses_a_stale_promotion(tmp_path):
    path = tmp_path / "champions.json"
    registry = ChampionRegistry(path)
    registry.promote(TRACK, ChampionEntry("a.pt"), expected_previous=None)
    before = path.read_bytes()
    with pytest.raises(StaleChampionError, match="a.pt"):
        registry.promote(TRACK, ChampionEntry("b.pt"), expected_previous="old.pt")
    assert path.read_bytes() == before
    registry.promote(TRACK, ChampionEntry("b.pt"), expected_previous="a.pt")
    assert registry.champion(TRACK).checkpoint == "b.pt"


@pytest.mark.parametrize("content", [
    "{not json", '{"format": "something else", "format_version": 1, "tracks": {}}',
    '{"format": "catena_zero.champion_registry", "format_version": 99, "tracks": {}}',
    '{"format": "catena_zero.champion_registry", "format_version": 1, '
    '"tracks": {"x": {"history": [{"step": 3}]}}}',
])
def test_corrupt_file_is_refused_and_never_overwritten(tmp_path, content):
    path = tmp_path / "champions.json"
    path.write_text(content)
    registry = ChampionRegistry(path)
    with pytest.raises(RegistryCorruptError, match="champions.json"):
        registry.champion(TRACK)
    with pytest.raises(RegistryCorruptError):
        registry.promote(TRACK, ChampionEntry("a.pt"))
    assert path.read_text() == content


def test_bad_track_and_entry_are_refused(tmp_path):
    with pytest.raises(ValueError, match="11"):
        Track(11, "komi", "standard")
    with pytest.raises(ValueError, match="blitz"):
        Track(6, "blitz", "standard")
    with pytest.raises(ValueError, match="checkpoint"):
        ChampionRegistry(tmp_path / "r.json").promote(TRACK, ChampionEntry(""))
    assert not (tmp_path / "r.json").exists()


def _promote_many(path: str, writer: int, count: int) -> None:
    registry = ChampionRegistry(path)
    for index in range(count):
        registry.promote(TRACK, ChampionEntry(f"w{writer}-{index}.pt", step=index))


def test_concurrent_writers_in_processes_lose_nothing(tmp_path):
    path = str(tmp_path / "champions.json")
    writers, each = 4, 15
    context = multiprocessing.get_context("fork")
    processes = [context.Process(target=_promote_many, args=(path, w, each))
                 for w in range(writers)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
        assert process.exitcode == 0
    history = ChampionRegistry(path).history(TRACK)
    assert len(history) == writers * each
    assert len({e.checkpoint for e in history}) == writers * each
    # Each promotion saw the one before it as the champion it replaced.
    for earlier, later in zip(history, history[1:], strict=False):
        assert later.previous == earlier.checkpoint
    for writer in range(writers):  # every writer's own promotions keep their order
        steps = [e.step for e in history if e.checkpoint.startswith(f"w{writer}-")]
        assert steps == list(range(each))


def test_crash_mid_write_leaves_the_old_file_readable(tmp_path):
    path = tmp_path / "champions.json"
    registry = ChampionRegistry(path)
    registry.promote(TRACK, ChampionEntry("a.pt"))
    before = path.read_bytes()
    # A writer that dies after writing its temporary file, before the rename.
    script = textwrap.dedent(f"""
        import os
        from catena_zero.arena import registry as module
        def crash(source, target):
            assert os.path.getsize(source) > 0
            os._exit(17)
        module.os.replace = crash
        module.ChampionRegistry({str(path)!r}).promote(
            module.Track(4, "komi", "standard"), module.ChampionEntry("b.pt"))
    """)
    completed = subprocess.run([sys.executable, "-c", script], timeout=60,
                               env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert completed.returncode == 17
    assert path.read_bytes() == before
    assert registry.champion(TRACK).checkpoint == "a.pt"
    # The lock died with the writer, so the next promotion goes through.
    registry.promote(TRACK, ChampionEntry("c.pt"))
    assert [e.checkpoint for e in registry.history(TRACK)] == ["a.pt", "c.pt"]


def _document(track: object = None, **top) -> str:
    """A registry document with one side4 track holding `track` (JSON text)."""
    good = {"champion": {"checkpoint": "a.pt", "step": 3}, "history": [{"checkpoint": "a.pt"}]}
    document = {"format": "catena_zero.champion_registry", "format_version": 1,
                "tracks": {TRACK.key: good if track is None else track}, **top}
    return json.dumps(document)


def _entry_field(name: str, value: object) -> str:
    entry = {"checkpoint": "a.pt", name: value}
    return _document({"champion": entry, "history": [entry]})


@pytest.mark.parametrize(("content", "named"), [
    ('{"format": "catena_zero.champion_registry", "format_ver', "not valid JSON"),
    ("", "not valid JSON"),
    ("champions!", "not valid JSON"),
    ("[" * 100_000, "not valid JSON"),
    ("[1, 2]", "top level is list"),
    ('"registry"', "top level is str"),
    (_document(format_version=2), "format_version is 2"),
    (_document(format_version="1"), "format_version is '1'"),
    (_document(format_version=True), "format_version is True"),
    (_document(owner="me"), "unknown top-level keys"),
    ('{"format": "catena_zero.champion_registry", "format_version": 1, "tracks": []}',
     "'tracks' is list"),
    (_document({"champion": None, "history": {}}), "'history' is dict"),
    (_document({"champion": None}), "'history' is NoneType"),
    (_document([1]), "is list"),
    (_document({"champion": None, "history": [], "note": 1}), "unknown keys"),
    (_document({"champion": "a.pt", "history": []}), "entry is str"),
    (_document({"champion": None, "history": [7]}), "history[0]: entry is int"),
    (_entry_field("checkpoint", 7), "field 'checkpoint' must be a non-empty string"),
    (_entry_field("checkpoint", ""), "field 'checkpoint'"),
    (_entry_field("step", "10"), "field 'step' must be an integer"),
    (_entry_field("step", 1.5), "field 'step'"),
    (_entry_field("step", True), "field 'step'"),
    (_entry_field("games", -3), "field 'games'"),
    (_entry_field("score", "x"), "field 'score' must be a finite number"),
    (_entry_field("score", float("nan")), "field 'score'"),
    (_entry_field("reason", 1), "field 'reason' must be a string"),
    (_entry_field("previous", 5), "field 'previous'"),
    (_entry_field("promoted_at", None), "field 'promoted_at'"),
    (_entry_field("extra", [1]), "field 'extra' must be an object"),
    (_entry_field("fair_komi", "1.5"), "field 'fair_komi' must be a finite number"),
    (_entry_field("fair_komi", True), "field 'fair_komi'"),
    (_entry_field("fair_komi", float("inf")), "field 'fair_komi'"),
])
def test_every_malformed_part_of_the_file_is_refused_by_name(tmp_path, content, named):
    path = tmp_path / "champions.json"
    path.write_text(content)
    before = path.read_bytes()
    registry = ChampionRegistry(path)
    for read in (registry.read, lambda: registry.champion(TRACK), lambda: registry.history(TRACK),
                 lambda: registry.promote(Track(6, "komi", "standard"), ChampionEntry("b.pt"))):
        with pytest.raises(RegistryCorruptError) as caught:
            read()
        message = str(caught.value)
        assert str(path) in message and named in message and "\n" not in message
    assert path.read_bytes() == before


def test_a_bad_track_name_and_an_unreadable_file_are_refused(tmp_path):
    path = tmp_path / "champions.json"
    path.write_text(json.dumps({"format": "catena_zero.champion_registry", "format_version": 1,
                                "tracks": {"side44-komi-standard": {"history": []}}}))
    with pytest.raises(RegistryCorruptError, match="'side44-komi-standard': not a track name"):
        ChampionRegistry(path).champion(TRACK)
    path.write_bytes(b"\xff\xfe\x00{")
    with pytest.raises(RegistryCorruptError, match="not UTF-8"):
        ChampionRegistry(path).champion(TRACK)
    with pytest.raises(RegistryCorruptError, match="cannot read"):
        ChampionRegistry(tmp_path).champion(TRACK)


def test_an_entry_keeps_its_fair_komi_and_older_entries_read_without_one(tmp_path):
    path = tmp_path / "champions.json"
    path.write_text(_document())  # written before entries had a fair komi
    registry = ChampionRegistry(path)
    assert registry.champion(TRACK).fair_komi is None
    registry.promote(TRACK, ChampionEntry("b.pt", fair_komi=2.5))
    other = Track(2, "komi", "standard")
    registry.promote(other, ChampionEntry("b.pt", fair_komi=0))
    assert registry.champion(TRACK).fair_komi == 2.5
    assert registry.champion(other).fair_komi == 0
    assert json.loads(path.read_text())["format_version"] == 1
    assert registry.checkpoints() == {"a.pt", "b.pt"}  # "b.pt" champions two tracks
