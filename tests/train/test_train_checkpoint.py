"""Checkpoints: bit-exact round trip, exact resume, refusal of damaged files, atomicity."""

from __future__ import annotations

import hashlib
import os
import random
import threading

import numpy as np
import pytest
import torch

from catena_zero.data import ReplayWindow, ShardMeta, shard_filename, write_shard
from catena_zero.network import PolicyValueNet
from catena_zero.train import (
    CheckpointError,
    Counters,
    TrainConfig,
    Trainer,
    build_network,
    capture_rng_states,
    latest_checkpoint,
    list_checkpoints,
    load_checkpoint,
    restore_rng_states,
    restore_trainer,
    save_checkpoint,
)
from catena_zero.train import checkpoint as checkpoint_module
from catena_zero.train.checkpoint import checkpoint_filename, load_latest_intact_checkpoint
from tests.data.test_data_samples import random_samples
from tests.train.test_train_trainer import tiny_net

torch.set_num_threads(1)

CONFIG = TrainConfig(learning_rate=3e-3, warmup_steps=2, total_steps=20, batch_size=16)
RULES = {"side": 3, "game_type": "komi", "scoring": "standard"}


def trained_trainer(steps: int = 3) -> Trainer:
    trainer = Trainer(tiny_net(), CONFIG, "cpu")
    trainer.train_steps([random_samples(3, 16, seed=s) for s in range(steps)])
    return trainer


def assert_same_tensors(a, b) -> None:
    if isinstance(a, torch.Tensor):
        assert torch.equal(a, b)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            assert_same_tensors(a[key], b[key])
    elif isinstance(a, list | tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same_tensors(x, y)
    else:
        assert a == b


def test_round_trip_is_bit_exact(tmp_path) -> None:
    trainer = trained_trainer()
    counters = Counters(iteration=2, games=40, positions=900)
    generator = np.random.default_rng(7)
    config = {"train": CONFIG.to_dict(), "notes": ["a", 1, None], "array": np.arange(3)}
    path = save_checkpoint(tmp_path, trainer, counters, config=config, rules=RULES,
                           generators={"selfplay": generator}, extra={"komi_estimate": 2.5})
    checkpoint = load_checkpoint(path)
    assert checkpoint.counters == Counters(step=3, iteration=2, games=40, positions=900)
    assert checkpoint.rules == RULES and checkpoint.extra == {"komi_estimate": 2.5}
    assert checkpoint.config["notes"] == ["a", 1, None]
    np.testing.assert_array_equal(checkpoint.config["array"], np.arange(3))
    assert TrainConfig.from_dict(checkpoint.train_config) == CONFIG

    fresh = Trainer(build_network(checkpoint, load_weights=False), CONFIG, "cpu")
    restore_trainer(checkpoint, fresh)
    assert fresh.step == 3
    assert_same_tensors(fresh.net.state_dict(), trainer.net.state_dict())
    assert_same_tensors(fresh.optimizer.state_dict(), trainer.optimizer.state_dict())
    assert_same_tensors(checkpoint.net.state_dict(), trainer.net.state_dict())


def test_rng_states_are_restored(tmp_path) -> None:
    generator = np.random.default_rng(11)
    random.seed(1)
    np.random.seed(2)
    torch.manual_seed(3)
    states = capture_rng_states({"selfplay": generator})
    expected = (random.random(), np.random.random(), torch.rand(2), generator.random(3))
    trainer = trained_trainer(1)
    # Through a checkpoint file: save the states captured above via a fresh capture.
    restore_rng_states(states, {"selfplay": generator})
    path = save_checkpoint(tmp_path, trainer, Counters(), config={}, rules=RULES,
                           generators={"selfplay": generator})
    random.random(), np.random.random(), torch.rand(5), generator.random(9)  # move them on
    restore_rng_states(load_checkpoint(path).rng_states, {"selfplay": generator})
    again = (random.random(), np.random.random(), torch.rand(2), generator.random(3))
    assert again[0] == expected[0] and again[1] == expected[1]
    assert torch.equal(again[2], expected[2])
    np.testing.assert_array_equal(again[3], expected[3])
    with pytest.raises(CheckpointError, match="other"):
        restore_rng_states(states, {"other": np.random.default_rng()})


def run_steps(trainer: Trainer, window: ReplayWindow, rng: np.random.Generator, steps: int):
    return trainer.train_steps(window.batches(steps, 16, rng))


def test_resume_continues_exactly_like_an_uninterrupted_run(tmp_path) -> None:
    shards = tmp_path / "shards"
    for sequence in range(3):
        write_shard(shards / shard_filename(sequence), random_samples(3, 40, seed=sequence),
                    ShardMeta(side=3, game_type="komi", scoring="standard"))
    window = ReplayWindow(shards, window_samples=100)
    window.refresh()

    straight = Trainer(tiny_net(seed=5), CONFIG, "cpu")
    rng = np.random.default_rng(0)
    run_steps(straight, window, rng, 4)
    straight_metrics = run_steps(straight, window, rng, 4)

    first = Trainer(tiny_net(seed=5), CONFIG, "cpu")
    rng = np.random.default_rng(0)
    run_steps(first, window, rng, 4)
    save_checkpoint(tmp_path / "ckpt", first, Counters(iteration=1), config={}, rules=RULES,
                    generators={"batches": rng})
    del first
    rng = np.random.default_rng(999)  # a new process would start from anything
    checkpoint = load_checkpoint(latest_checkpoint(tmp_path / "ckpt"))
    resumed = Trainer(build_network(checkpoint), TrainConfig.from_dict(checkpoint.train_config),
                      "cpu")
    restore_trainer(checkpoint, resumed)
    restore_rng_states(checkpoint.rng_states, {"batches": rng})
    window = ReplayWindow(shards, window_samples=100)
    window.refresh()
    resumed_metrics = run_steps(resumed, window, rng, 4)

    assert resumed.step == straight.step == 8
    assert_same_tensors(resumed.net.state_dict(), straight.net.state_dict())
    assert_same_tensors(resumed.optimizer.state_dict(), straight.optimizer.state_dict())
    assert resumed_metrics.loss_total == straight_metrics.loss_total


def test_damaged_checkpoints_are_refused(tmp_path) -> None:
    path = save_checkpoint(tmp_path, trained_trainer(1), Counters(), config={}, rules=RULES)
    data = path.read_bytes()
    bad = tmp_path / "bad.pt"
    for cut in (0, 10, len(data) // 2, len(data) - 1):
        bad.write_bytes(data[:cut])
        with pytest.raises(CheckpointError):
            load_checkpoint(bad)
    for position in (len(data) // 3, len(data) - 5):
        damaged = bytearray(data)
        damaged[position] ^= 0x01
        bad.write_bytes(bytes(damaged))
        with pytest.raises(CheckpointError, match="corrupt"):
            load_checkpoint(bad)
    header = f"CHECKPOINT\n{checkpoint_module.CHECKPOINT_FORMAT_VERSION}\n".encode()
    bad.write_bytes(data.replace(header, b"CHECKPOINT\n7\n", 1))
    with pytest.raises(CheckpointError, match="format version 7"):
        load_checkpoint(bad)
    bad.write_bytes(b"PK\x03\x04 some other file")
    with pytest.raises(CheckpointError, match="not a catena_zero checkpoint"):
        load_checkpoint(bad)
    with pytest.raises(CheckpointError, match="cannot read"):
        load_checkpoint(tmp_path / "absent.pt")
    with pytest.raises(CheckpointError, match="no checkpoint"):
        load_checkpoint(latest_checkpoint(tmp_path / "empty"))


@pytest.fixture(scope="module")
def checkpoint_bytes(tmp_path_factory) -> bytes:
    directory = tmp_path_factory.mktemp("good")
    return save_checkpoint(directory, trained_trainer(1), Counters(), config={},
                           rules=RULES).read_bytes()


def _header_length(data: bytes) -> int:
    return data.index(b"PK\x03\x04")


def _refusal(path) -> str:
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(path)
    message = str(caught.value)
    assert message.startswith(f"checkpoint {path}: ") and "\n" not in message
    return message


def _cuts(data: bytes) -> list[int]:
    magic, header = len(checkpoint_module.MAGIC), _header_length(data)
    return sorted({1, magic - 1, magic, magic + 1, magic + 2, header - 1, header, header + 1,
                   header + 100, len(data) // 4, len(data) // 2, len(data) - 22, len(data) - 1})


def test_every_truncation_is_refused_in_one_line(tmp_path, checkpoint_bytes) -> None:
    bad = tmp_path / "checkpoint-step000000001-iter000001.pt"
    for cut in _cuts(checkpoint_bytes):
        bad.write_bytes(checkpoint_bytes[:cut])
        assert "truncated" in _refusal(bad), cut
    bad.write_bytes(b"")
    assert "empty file" in _refusal(bad)


def test_every_flipped_byte_is_refused_in_one_line(tmp_path, checkpoint_bytes) -> None:
    bad = tmp_path / "flipped.pt"
    header = _header_length(checkpoint_bytes)
    positions = [*range(header + 4), *range(header + 4, len(checkpoint_bytes), 1999),
                 *range(len(checkpoint_bytes) - 30, len(checkpoint_bytes))]
    for position in positions:
        damaged = bytearray(checkpoint_bytes)
        damaged[position] ^= 0x80 if position % 2 else 0x01
        bad.write_bytes(bytes(damaged))
        _refusal(bad)


@pytest.mark.parametrize(("make", "problem"), [
    (lambda data: b"CATENA-ZERO-MODEL\n" + data[23:], "not a catena_zero checkpoint (bad magic)"),
    (lambda data: data.replace(b"\n2\n", b"\n9\n", 1), "format version 9, this code reads"),
    (lambda data: data.replace(b"\n2\n", b"\ntwo\n", 1), "damaged header"),
    (lambda data: checkpoint_module.MAGIC + b"2\n" + hashlib.sha256(b"junk").hexdigest().encode()
     + b"\njunk", "payload cannot be unpickled"),
    (lambda data: b"PK\x03\x04" + data, "bad magic"),
])
def test_foreign_and_wrong_version_files_are_refused(tmp_path, checkpoint_bytes, make,
                                                     problem) -> None:
    bad = tmp_path / "foreign.pt"
    bad.write_bytes(make(checkpoint_bytes))
    assert problem in _refusal(bad)
    assert "is a directory" in _refusal(tmp_path)
    assert "cannot read" in _refusal(tmp_path / "absent.pt")


def test_the_newest_intact_checkpoint_is_found_past_damaged_ones(tmp_path) -> None:
    trainer = trained_trainer(1)
    paths = []
    for iteration in range(3):
        trainer.step += 1
        paths.append(save_checkpoint(tmp_path, trainer, Counters(iteration=iteration),
                                     config={}, rules=RULES, keep=0))
    assert checkpoint_module.load_latest_intact_checkpoint(tmp_path / "none") == (None, [])
    paths[2].write_bytes(paths[2].read_bytes()[:1000])
    checkpoint, refused = checkpoint_module.load_latest_intact_checkpoint(tmp_path)
    assert checkpoint.path == paths[1] and checkpoint.counters.iteration == 1
    assert len(refused) == 1 and str(paths[2]) in refused[0] and "truncated" in refused[0]
    for path in paths[:2]:
        damaged = bytearray(path.read_bytes())
        damaged[-100] ^= 0x40
        path.write_bytes(bytes(damaged))
    with pytest.raises(CheckpointError, match="no intact checkpoint") as caught:
        checkpoint_module.load_latest_intact_checkpoint(tmp_path)
    assert all(str(path) in str(caught.value) for path in paths)
    assert "\n" not in str(caught.value)


def test_mismatched_network_is_refused_before_anything_changes(tmp_path) -> None:
    path = save_checkpoint(tmp_path, trained_trainer(1), Counters(), config={}, rules=RULES)
    other = Trainer(tiny_net(side=4), CONFIG, "cpu")
    before = {k: v.clone() for k, v in other.net.state_dict().items()}
    with pytest.raises(CheckpointError, match="does not fit"):
        restore_trainer(load_checkpoint(path), other)
    assert_same_tensors(other.net.state_dict(), before)
    assert other.step == 0
    wider = Trainer(PolicyValueNet.from_init_args({**other.net.init_args, "grid_size": 5,
                    "cell_grid_index": tiny_net(3).init_args["cell_grid_index"],
                    "config": {**other.net.config.to_dict(), "channels": 24}}), CONFIG, "cpu")
    with pytest.raises(CheckpointError, match="does not fit"):
        restore_trainer(load_checkpoint(path), wider)


def test_saves_are_atomic_and_old_ones_pruned(tmp_path, monkeypatch) -> None:
    trainer = trained_trainer(1)
    paths = []
    for iteration in range(5):
        trainer.step += 1
        paths.append(save_checkpoint(tmp_path, trainer, Counters(iteration=iteration),
                                     config={}, rules=RULES, keep=2))
    assert list_checkpoints(tmp_path) == paths[-2:]
    assert latest_checkpoint(tmp_path) == paths[-1]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths[-2:])
    # Saving the same step again replaces the file atomically (never a partial one).
    again = save_checkpoint(tmp_path, trainer, Counters(iteration=4), config={}, rules=RULES,
                            keep=2)
    assert again == paths[-1] and load_checkpoint(again).counters.iteration == 4

    def failing_fsync(descriptor):  # fails after the bytes went into the temp file
        raise OSError("disk full")

    monkeypatch.setattr(checkpoint_module.os, "fsync", failing_fsync)
    trainer.step += 1
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(tmp_path, trainer, Counters(iteration=9), config={}, rules=RULES, keep=1)
    assert list_checkpoints(tmp_path) == paths[-2:]  # nothing pruned, nothing half-written
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths[-2:])
    monkeypatch.undo()
    (tmp_path / (paths[-1].name + ".tmp-42")).write_bytes(b"partial")
    assert latest_checkpoint(tmp_path) == paths[-1]
    keep_all = tmp_path / "all"
    for iteration in range(4):
        save_checkpoint(keep_all, trainer, Counters(iteration=iteration), config={},
                        rules=RULES, keep=0)
    assert len(list_checkpoints(keep_all)) == 4


def test_a_general_net_round_trips_and_old_weights_fit_it(tmp_path) -> None:
    """A net without a home board is saved and rebuilt as one; a single-side checkpoint's
    weights load unchanged into it (no tensor depends on the board)."""
    torch.manual_seed(0)
    general = PolicyValueNet(4, 3, tiny_net().config)
    trainer = Trainer(general, CONFIG, "cpu")
    trainer.train_steps([random_samples(3, 16, seed=1), random_samples(5, 16, seed=2)])
    checkpoint = load_checkpoint(save_checkpoint(tmp_path / "general", trainer, Counters(),
                                                 config={}, rules=RULES))
    rebuilt = build_network(checkpoint)
    assert rebuilt.grid_size is None and "grid_size" not in checkpoint.network_args
    assert_same_tensors(rebuilt.state_dict(), trainer.net.state_dict())
    old = load_checkpoint(save_checkpoint(tmp_path / "old", trained_trainer(2), Counters(),
                                          config={}, rules=RULES))
    old_net = build_network(old)
    assert old_net.side == 3
    general.load_state_dict(old.published_state)
    general.eval()
    old_net.eval()
    for side in (3, 5):
        batch = random_samples(side, 4, seed=side)
        planes, globals_ = torch.from_numpy(batch.planes_float()), torch.from_numpy(batch.globals)
        with torch.no_grad():
            assert torch.equal(general(planes, globals_).policy_logits,
                               old_net(planes, globals_).policy_logits)


def _make_special(path, kind: str) -> None:
    if kind == "a directory":
        path.mkdir()
    elif kind == "a FIFO":
        os.mkfifo(path)
    else:  # a symbolic link loop
        path.symlink_to(path)


def _still_special(path, kind: str) -> bool:
    if kind == "a directory":
        return path.is_dir() and not any(path.iterdir())
    if kind == "a FIFO":
        return path.is_fifo()
    return path.is_symlink() and os.readlink(path) == str(path)


def _without_blocking(call, seconds: float = 30.0):
    """call()'s result; fails the test instead of hanging when it blocks (on a FIFO)."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as error:  # noqa: BLE001 - handed to the test
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@pytest.mark.parametrize("kind", ["a directory", "a FIFO", "a symbolic link loop"])
def test_a_special_file_at_the_newest_checkpoint_name_is_named_passed_over_and_kept(
        tmp_path, kind) -> None:
    trainer = trained_trainer(1)
    first = save_checkpoint(tmp_path, trainer, Counters(iteration=1), config={}, rules=RULES)
    trainer.step += 1
    newest = tmp_path / checkpoint_filename(trainer.step, 2)
    _make_special(newest, kind)
    checkpoint, refused = _without_blocking(lambda: load_latest_intact_checkpoint(tmp_path))
    assert checkpoint.path == first and len(refused) == 1
    assert refused[0].startswith(f"checkpoint {newest}: ")
    if kind != "a symbolic link loop":
        assert refused[0] == f"checkpoint {newest}: is {kind}, not a checkpoint file"
    # The iteration done again is saved beside it, under a name that sorts after it.
    said: list[str] = []
    saved = save_checkpoint(tmp_path, trainer, Counters(iteration=2), config={}, rules=RULES,
                            keep=1, log=said.append)
    assert saved == tmp_path / checkpoint_filename(trainer.step, 2).replace(".pt", "-2.pt")
    assert said == [f"warning: {newest} is {kind}, not a checkpoint file; left as it is, "
                    f"this checkpoint is saved as {saved.name}"]
    assert _still_special(newest, kind)
    assert list_checkpoints(tmp_path) == [saved] and latest_checkpoint(tmp_path) == saved
    checkpoint, refused = load_latest_intact_checkpoint(tmp_path)
    assert checkpoint.path == saved and checkpoint.counters.iteration == 2 and refused == []
    trainer.step += 1
    third = save_checkpoint(tmp_path, trainer, Counters(iteration=3), config={}, rules=RULES,
                            keep=0, log=said.append)
    assert list_checkpoints(tmp_path) == [saved, third] and len(said) == 1
    assert _still_special(newest, kind)


def test_a_fifo_named_as_a_checkpoint_is_refused_without_blocking(tmp_path) -> None:
    fifo = tmp_path / "checkpoint.pt"
    os.mkfifo(fifo)
    with pytest.raises(CheckpointError) as caught:
        _without_blocking(lambda: load_checkpoint(fifo))
    assert str(caught.value) == f"checkpoint {fifo}: is a FIFO, not a checkpoint file"
