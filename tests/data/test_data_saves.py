"""Every save of the package goes through one atomic writer: whatever was placed beforehand at
the temporary names a writer could use (a FIFO, a symbolic link to another file) is never
opened, followed or replaced, the file saved is whole, and it keeps the permissions of the
file it replaces. Checked here through each entry point a user reaches: GTP's
catena-savesgf, model files, checkpoints, the komi atlas, metrics.jsonl, ratings, shards,
the arena registry and the figures."""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from catena_zero.arena.elo import EloFit, plot_elo
from catena_zero.arena.registry import write_json_atomic
from catena_zero.data import atomic
from catena_zero.data.game_record import load_record
from catena_zero.data.shards import ShardMeta, read_shard, shard_filename, write_shard
from catena_zero.export.model_file import load_model_file, metadata_for, save_model_file
from catena_zero.export.ratings import Ratings, read_ratings, write_ratings
from catena_zero.komi.atlas import load_atlas, save_atlas
from catena_zero.komi.plots import plot_opening
from catena_zero.pipeline.metrics import METRICS_FORMAT, read_metrics, resume_metrics
from catena_zero.play.gtp import GtpEngine
from catena_zero.rules import Rules, Track
from catena_zero.train import Counters, TrainConfig, Trainer, load_checkpoint, save_checkpoint
from catena_zero.train.checkpoint import checkpoint_filename
from tests.data.test_data_samples import random_samples
from tests.export.tiny_model import tiny_network
from tests.play.test_play_gtp import ok

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
GUESSED_TOKEN = "guessed"  # the first random token a write draws in these tests


@dataclass(frozen=True)
class EntryPoint:
    name: str
    file_name: str
    save: Callable[[Path], None]  # writes <folder>/file_name
    check: Callable[[Path], None]  # asserts the file saved is whole and right
    before: bytes = b"old contents\n"  # what the file replaced held


def _save_sgf(path: Path) -> None:
    engine = GtpEngine(rules=Rules(side=3))
    ok(engine, "play b A1")
    ok(engine, f"catena-savesgf {path}")


def _check_sgf(path: Path) -> None:
    assert len(load_record(path).moves) == 1


def _save_model(path: Path) -> None:
    net = tiny_network(3)
    metadata = metadata_for(net, Rules(side=3), network_config=net.config.to_dict(), elo=None,
                            training_steps=0, source="random initialisation (test)")
    save_model_file(net, metadata, path, program=False)


def _check_model(path: Path) -> None:
    assert load_model_file(path).metadata.side == 3


def _save_checkpoint(path: Path) -> None:
    trainer = Trainer(tiny_network(3), TrainConfig(), device="cpu")
    saved = save_checkpoint(path.parent, trainer, Counters(step=0, iteration=1), config={},
                            rules={"side": 3, "game_type": "komi", "scoring": "standard"})
    assert saved == path


def _check_checkpoint(path: Path) -> None:
    assert load_checkpoint(path).counters.iteration == 1


def _save_atlas(path: Path) -> None:
    save_atlas(path, {"records": {}, "note": "saved"})


def _check_atlas(path: Path) -> None:
    assert load_atlas(path)["note"] == "saved"


def _metrics_line(iteration: int) -> bytes:
    return json.dumps({"format": METRICS_FORMAT, "format_version": 1, "kind": "iteration",
                       "iteration": iteration, "step": iteration, "time": 1.0,
                       "values": {"loss/policy": 0.5}}).encode() + b"\n"


def _save_metrics(path: Path) -> None:
    resume_metrics(path.parent, 5, log=None)  # drops iteration 9: the file is rewritten


def _check_metrics(path: Path) -> None:
    assert [record["iteration"] for record in read_metrics(path.parent, log=None)] == [1]


def _save_ratings(path: Path) -> None:
    write_ratings(path, Ratings("random = 0", {Track(3, "komi", "standard"): 12.5}))


def _check_ratings(path: Path) -> None:
    assert read_ratings(path).elos == {Track(3, "komi", "standard"): 12.5}


def _save_shard(path: Path) -> None:
    write_shard(path, random_samples(3, 4), ShardMeta(side=3, game_type="komi",
                                                       scoring="standard"))


def _check_shard(path: Path) -> None:
    assert read_shard(path)[1].num_samples == 4


def _save_registry(path: Path) -> None:
    write_json_atomic(path, {"tracks": {}})


def _check_registry(path: Path) -> None:
    assert json.loads(path.read_text()) == {"tracks": {}}


def _save_elo_plot(path: Path) -> None:
    fit = EloFit(names=["random", "step10"], steps=[None, 10], elo=np.array([0.0, 50.0]),
                 stderr=np.array([0.0, 20.0]), games=np.array([10, 10]),
                 score=np.array([0.4, 0.6]), anchor="random", iterations=1)
    plot_elo(fit, path)


def _save_opening_plot(path: Path) -> None:
    plot_opening({"name": ["A1", "B1"], "col": [0, 1], "row": [0, 0],
                  "black_score": [0.4, 0.6]}, path)


def _check_png(path: Path) -> None:
    assert path.read_bytes().startswith(PNG_MAGIC)


ENTRY_POINTS = [
    EntryPoint("sgf", "game.sgf", _save_sgf, _check_sgf),
    EntryPoint("model file", "model.pt", _save_model, _check_model),
    EntryPoint("checkpoint", checkpoint_filename(0, 1), _save_checkpoint, _check_checkpoint),
    EntryPoint("atlas", "atlas.json", _save_atlas, _check_atlas),
    EntryPoint("metrics", "metrics.jsonl", _save_metrics, _check_metrics,
               before=_metrics_line(1) + _metrics_line(9)),
    EntryPoint("ratings", "ratings.json", _save_ratings, _check_ratings),
    EntryPoint("shard", shard_filename(0), _save_shard, _check_shard),
    EntryPoint("registry", "registry.json", _save_registry, _check_registry),
    EntryPoint("elo plot", "elo.png", _save_elo_plot, _check_png),
    EntryPoint("komi plot", "opening.png", _save_opening_plot, _check_png),
]


def _guessable_names(path: Path) -> list[str]:
    """Temporary names a writer could be expected to use: the process id's, the `tmp-`
    prefix's, the stem's, and the first random token this test hands the writer."""
    return [f"{path.name}.tmp-{os.getpid()}", f"tmp-{path.name}",
            f"{path.stem}.tmp-{os.getpid()}{path.suffix}", f"{path.name}.tmp-{GUESSED_TOKEN}"]


def _current_umask() -> int:
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def _tokens():
    """The writer's random tokens: the guessed one first, then fresh ones."""
    yield GUESSED_TOKEN
    count = 0
    while True:
        count += 1
        yield f"fresh{count}"


def _save_with_deadline(entry: EntryPoint, path: Path, seconds: float = 20.0) -> None:
    """entry.save in a thread; fails the test if it blocks on a FIFO (freed here first)."""
    outcome: dict = {}

    def save() -> None:
        try:
            entry.save(path)
        except BaseException as error:  # noqa: BLE001 - handed back to the test
            outcome["error"] = error

    tokens = _tokens()
    with mock.patch.object(atomic, "_temporary_token", lambda: next(tokens)):
        thread = threading.Thread(target=save, daemon=True)
        thread.start()
        thread.join(seconds)
        if thread.is_alive():
            for fifo in path.parent.iterdir():
                if stat.S_ISFIFO(os.lstat(fifo).st_mode):
                    os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
            thread.join(seconds)
            pytest.fail(f"{entry.name}: saving {path.name} blocked on a FIFO")
    if "error" in outcome:
        raise outcome["error"]


TRAPS = st.lists(st.sampled_from([None, "fifo", "link"]), min_size=4, max_size=4)
MODES = st.sampled_from([None, 0o600, 0o640, 0o444, 0o604])


@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=[entry.name for entry in ENTRY_POINTS])
@settings(max_examples=6, deadline=None)
@given(traps=TRAPS, mode=MODES)
def test_every_save_passes_over_traps_at_temporary_names_and_keeps_the_mode(
        entry, traps, mode, tmp_path_factory) -> None:
    torch.set_num_threads(1)
    folder = tmp_path_factory.mktemp("save")
    path = folder / entry.file_name
    victim = folder / "victim"
    victim.write_bytes(b"keep me")
    if mode is not None or entry.name == "metrics":  # a metrics file is rewritten, not made
        path.write_bytes(entry.before)
        if mode is not None:
            os.chmod(path, mode)
    expected_mode = mode if mode is not None else 0o666 & ~_current_umask()
    placed = {}
    for name, trap in zip(_guessable_names(path), traps, strict=True):
        if trap == "fifo":
            os.mkfifo(folder / name)
        elif trap == "link":
            (folder / name).symlink_to(victim)
        if trap is not None:
            placed[name] = trap

    _save_with_deadline(entry, path)

    assert stat.S_ISREG(os.lstat(path).st_mode), "the file saved is a regular file"
    assert stat.S_IMODE(os.stat(path).st_mode) == expected_mode
    entry.check(path)
    assert victim.read_bytes() == b"keep me"
    for name, trap in placed.items():
        kind = os.lstat(folder / name).st_mode
        assert stat.S_ISFIFO(kind) if trap == "fifo" else stat.S_ISLNK(kind), name
        if trap == "link":
            assert os.readlink(folder / name) == str(victim)
    assert sorted(os.listdir(folder)) == sorted([entry.file_name, "victim", *placed]), (
        "no temporary file is left behind")
