"""Shards: round trip, refusal of damaged files, atomic writes, the replay window."""

from __future__ import annotations

import io
import threading
import warnings

import numpy as np
import pytest

from catena_zero.data import (
    MixedBatch,
    ReplayWindow,
    Samples,
    ShardError,
    ShardMeta,
    Track,
    list_shards,
    read_shard,
    shard_filename,
    write_shard,
)
from catena_zero.data import shards as shards_module
from catena_zero.rules.observe import BASIC_GLOBALS, NUM_GLOBALS, board_size_globals
from tests.data.test_data_samples import random_samples


def meta(**changes) -> ShardMeta:
    values = {"side": 3, "game_type": "komi", "scoring": "standard", "model_step": 12,
              "num_games": 4, "extra": {"komi_mean": 2.5}}
    return ShardMeta(**{**values, **changes})


def test_round_trip_is_exact(tmp_path) -> None:
    samples = random_samples(3, 37, num_planes=6)
    path = write_shard(tmp_path / "shard.npz", samples, meta())
    loaded, loaded_meta = read_shard(path)
    assert loaded.equals(samples)
    assert loaded_meta.num_samples == 37
    assert loaded_meta.format_version == shards_module.FORMAT_VERSION
    assert (loaded_meta.side, loaded_meta.model_step, loaded_meta.extra) == (3, 12,
                                                                            {"komi_mean": 2.5})
    empty = samples.take(np.arange(0))
    assert read_shard(write_shard(tmp_path / "empty.npz", empty, meta()))[0].equals(empty)


def test_truncated_and_corrupt_shards_are_refused(tmp_path) -> None:
    path = write_shard(tmp_path / "good.npz", random_samples(3, 20), meta())
    data = path.read_bytes()
    bad = tmp_path / "bad.npz"
    for cut in (0, 10, len(data) // 3, len(data) - 1):
        bad.write_bytes(data[:cut])
        with pytest.raises(ShardError, match="truncated or corrupt"):
            read_shard(bad)
    # Flip bits all over the file: every change is either refused or provably harmless.
    original = read_shard(path)[0]
    refused = 0
    stride = max(1, len(data) // 150)
    for position in range(0, len(data), stride):
        damaged = bytearray(data)
        damaged[position] ^= 0x5A
        bad.write_bytes(bytes(damaged))
        try:
            loaded, _ = read_shard(bad)
        except ShardError:
            refused += 1
            continue
        assert loaded.equals(original), f"undetected corruption at byte {position}"
    assert refused > len(data) // stride // 2
    with pytest.raises(ShardError, match="cannot read"):
        read_shard(tmp_path / "missing.npz")


def _rewrite_members(path, **replacements) -> None:
    with np.load(path) as archive:
        members = {name: archive[name] for name in archive.files}
    members.update(replacements)
    buffer = io.BytesIO()
    np.savez(buffer, **members)
    path.write_bytes(buffer.getvalue())


def test_wrong_version_and_inconsistent_shards_are_refused(tmp_path) -> None:
    samples = random_samples(3, 5)
    path = write_shard(tmp_path / "v.npz", samples, meta())
    _rewrite_members(path, format_version=np.array(99))
    with pytest.raises(ShardError, match="format version 99"):
        read_shard(path)

    path = write_shard(tmp_path / "shape.npz", samples, meta())
    _rewrite_members(path, planes_shape=np.array([5, 4, 7, 7]))
    with pytest.raises(ShardError, match="inconsistent"):
        read_shard(path)

    path = write_shard(tmp_path / "rows.npz", samples, meta())
    _rewrite_members(path, score_target=np.zeros(4, np.float32))
    with pytest.raises(ShardError, match="inconsistent"):
        read_shard(path)

    path = write_shard(tmp_path / "dtype.npz", samples, meta())
    _rewrite_members(path, ownership_target=samples.ownership_target.astype(np.float64))
    with pytest.raises(ShardError, match="dtype"):
        read_shard(path)

    path = write_shard(tmp_path / "missing.npz", samples, meta())
    with np.load(path) as archive:
        members = {name: archive[name] for name in archive.files if name != "weight"}
    buffer = io.BytesIO()
    np.savez(buffer, **members)
    path.write_bytes(buffer.getvalue())
    with pytest.raises(ShardError, match="lacks member"):
        read_shard(path)


def test_write_refuses_bad_arguments(tmp_path) -> None:
    samples = random_samples(3, 2)
    with pytest.raises(ValueError, match=".npz"):
        write_shard(tmp_path / "shard.bin", samples, meta())
    with pytest.raises(ValueError, match="Samples"):
        write_shard(tmp_path / "shard.npz", {"planes": 1}, meta())
    with pytest.raises(ValueError, match="JSON"):
        write_shard(tmp_path / "shard.npz", samples, meta(extra={"bad": object()}))
    assert list(tmp_path.iterdir()) == []


def test_failed_write_leaves_no_temp_file_and_keeps_the_old_shard(tmp_path, monkeypatch) -> None:
    path = tmp_path / shard_filename(3)
    old = random_samples(3, 4, seed=1)
    write_shard(path, old, meta())

    def failing_savez(handle, **arrays):
        handle.write(b"PK partial bytes")
        raise OSError("disk full")

    monkeypatch.setattr(shards_module.np, "savez", failing_savez)
    with pytest.raises(OSError, match="disk full"):
        write_shard(path, random_samples(3, 4, seed=2), meta())
    assert [p.name for p in tmp_path.iterdir()] == [path.name]
    assert read_shard(path)[0].equals(old)


def test_list_shards_ignores_temp_files_and_sorts_by_sequence(tmp_path) -> None:
    samples = random_samples(3, 2)
    for sequence in (10, 2, 33):
        write_shard(tmp_path / shard_filename(sequence), samples, meta())
    (tmp_path / (shard_filename(40) + ".tmp-123")).write_bytes(b"half")
    (tmp_path / "notes.txt").write_text("x")
    names = [p.name for p in list_shards(tmp_path)]
    assert names == [shard_filename(2), shard_filename(10), shard_filename(33)]
    assert list_shards(tmp_path / "absent") == []
    assert shard_filename(7, "w2") == "shard-000000007-w2.npz"
    with pytest.raises(ValueError, match="sequence"):
        shard_filename(-1)


def test_reader_never_sees_a_half_written_shard(tmp_path) -> None:
    path = tmp_path / "shard.npz"
    versions = [random_samples(3, 400, seed=seed) for seed in (1, 2)]
    write_shard(path, versions[0], meta())
    stop = threading.Event()
    errors: list[str] = []

    def writer() -> None:
        turn = 0
        while not stop.is_set():
            turn += 1
            write_shard(path, versions[turn % 2], meta())

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        for _ in range(150):
            loaded, _ = read_shard(path)
            if not (loaded.equals(versions[0]) or loaded.equals(versions[1])):
                errors.append("mixed contents")
            leftovers = [p.name for p in list_shards(tmp_path)]
            if leftovers != ["shard.npz"]:
                errors.append(f"listed {leftovers}")
    finally:
        stop.set()
        thread.join()
    assert errors == []
    assert [p.name for p in tmp_path.iterdir()] == ["shard.npz"]


def test_replay_window_keeps_the_newest_trained_samples(tmp_path) -> None:
    parts = [random_samples(3, count, seed=seed) for seed, count in enumerate((10, 20, 30))]
    trained = [part.trained_only() for part in parts]
    for sequence, part in enumerate(parts):
        write_shard(tmp_path / shard_filename(sequence), part, meta())
    newest = Samples.concatenate(trained)
    window_size = len(trained[1]) + len(trained[2]) - 3
    window = ReplayWindow(tmp_path, window_samples=window_size)
    assert window.refresh() == window_size
    assert window.samples.equals(newest.take(slice(len(newest) - window_size, len(newest))))
    assert [p.name for p in window.shard_paths] == [shard_filename(1), shard_filename(2)]

    extra = random_samples(3, 15, seed=9)
    write_shard(tmp_path / shard_filename(3), extra, meta())
    window.refresh()
    joined = Samples.concatenate([*trained, extra.trained_only()])
    assert window.samples.equals(joined.take(slice(len(joined) - window_size, len(joined))))

    batch = window.sample_batch(64, np.random.default_rng(5))
    again = window.sample_batch(64, np.random.default_rng(5))
    assert len(batch) == 64 and batch.equals(again) and (batch.weight > 0).all()
    assert sum(1 for _ in window.batches(3, 8, np.random.default_rng(0))) == 3


def test_replay_window_skips_or_raises_on_bad_shards(tmp_path) -> None:
    write_shard(tmp_path / shard_filename(0), random_samples(3, 10), meta())
    (tmp_path / shard_filename(1)).write_bytes(b"not a zip")
    window = ReplayWindow(tmp_path, window_samples=100)
    with pytest.warns(UserWarning, match="skipping bad shard"):
        window.refresh()
    assert tmp_path / shard_filename(1) in window.bad_shards
    assert window.num_samples == len(random_samples(3, 10).trained_only())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        window.refresh()  # a known bad shard is not re-read or re-reported
    strict = ReplayWindow(tmp_path, window_samples=100, on_bad_shard="raise")
    with pytest.raises(ShardError):
        strict.refresh()
    empty = ReplayWindow(tmp_path / "none", window_samples=5)
    assert empty.refresh() == 0
    with pytest.raises(ValueError, match="empty"):
        empty.sample_batch(4, np.random.default_rng(0))
    with pytest.raises(ValueError, match="window_samples"):
        ReplayWindow(tmp_path, window_samples=0)


def test_replay_window_reads_older_shorter_observations(tmp_path) -> None:
    """Shards written before input planes were added share a window with newer ones."""
    old = random_samples(3, 10, seed=1, num_planes=4)
    new = random_samples(3, 10, seed=2, num_planes=6)
    write_shard(tmp_path / shard_filename(1), old, meta())
    write_shard(tmp_path / shard_filename(2), new, meta())
    window = ReplayWindow(tmp_path, window_samples=100, num_planes=4)
    old_trained, new_trained = old.trained_only(), new.trained_only()
    assert window.refresh() == len(old_trained) + len(new_trained)
    assert window.samples.planes.shape[1] == 4
    np.testing.assert_array_equal(window.samples.planes[len(old_trained):],
                                  new_trained.planes[:, :4])
    wider = ReplayWindow(tmp_path, window_samples=100, num_planes=6, on_bad_shard="raise")
    with pytest.raises(ShardError, match="holds 4 input planes; the network reads 6"):
        wider.refresh()
    with pytest.raises(ValueError, match="num_planes"):
        ReplayWindow(tmp_path, window_samples=5, num_planes=0)
    with pytest.raises(ValueError, match="samples hold 4 input planes, 5 are needed"):
        old.first_planes(5)


def test_every_truncation_and_flipped_byte_of_a_shard_is_refused(tmp_path) -> None:
    path = write_shard(tmp_path / "good.npz", random_samples(3, 3), meta())
    data = path.read_bytes()
    bad = tmp_path / "bad.npz"
    for cut in (1, 4, 30, 31, len(data) // 2, len(data) - 100, len(data) - 64, len(data) - 1):
        bad.write_bytes(data[:cut])
        with pytest.raises(ShardError, match="truncated or corrupt"):
            read_shard(bad)
    # Zip CRCs cover only the members' data; the seal covers every byte, so a flip in a
    # timestamp, a header field or the seal itself is refused too, and never with any other
    # exception type.
    positions = {*range(60), *range(0, len(data), max(1, len(data) // 100)),
                 *range(len(data) - 100, len(data))}
    for position in sorted(positions):
        damaged = bytearray(data)
        damaged[position] ^= 0x80 if position % 2 else 0x01
        bad.write_bytes(bytes(damaged))
        with pytest.raises(ShardError, match=str(bad)):
            read_shard(bad)
    with pytest.raises(ShardError, match="cannot read"):
        read_shard(tmp_path)
    bad.write_bytes(b"")
    with pytest.raises(ShardError, match="truncated or corrupt"):
        read_shard(bad)


def test_shards_written_before_the_seal_still_read(tmp_path) -> None:
    samples = random_samples(3, 5)
    path = write_shard(tmp_path / "new.npz", samples, meta())
    _rewrite_members(path)  # the same members in an archive without the seal
    assert path.read_bytes()[-22:-18] == b"PK\x05\x06"  # an empty zip comment
    loaded, loaded_meta = read_shard(path)
    assert loaded.equals(samples) and loaded_meta.num_samples == 5
    damaged = bytearray(path.read_bytes())
    damaged[len(damaged) // 2] ^= 0x01  # inside a member: its CRC still catches it
    path.write_bytes(bytes(damaged))
    with pytest.raises(ShardError):
        read_shard(path)


def write_track(directory, sequence: int, side: int, count: int, game_type: str = "komi",
                seed: int = 0) -> Samples:
    samples = random_samples(side, count, seed=seed)
    write_shard(directory / shard_filename(sequence), samples,
                meta(side=side, game_type=game_type))
    return samples.trained_only()


def test_replay_window_draws_tracks_at_their_shares(tmp_path, monkeypatch) -> None:
    three, four = Track(3, "komi", "standard"), Track(4, "nokomi", "standard")
    kept = {three: [], four: []}
    for sequence in range(8):
        track = three if sequence % 2 else four
        kept[track].append(write_track(tmp_path, sequence, track.side, 30, track.game_type,
                                       seed=sequence))
    write_track(tmp_path, 8, 5, 30, seed=8)  # a track this window does not train on
    window = ReplayWindow(tmp_path, window_samples=80,
                          track_shares={"3/komi/standard": 1, (4, "nokomi", "standard"): 3})
    assert window.track_shares == {three: 0.25, four: 0.75}
    assert window.refresh() == 20 + 60 and window.tracks == [three, four]
    newest = {track: Samples.concatenate(parts) for track, parts in kept.items()}
    for track, quota in ((three, 20), (four, 60)):
        held = window.track_samples[track]
        assert held.equals(newest[track].take(slice(len(newest[track]) - quota, None)))
    assert not window.bad_shards
    with pytest.raises(ValueError, match="holds 2 tracks"):
        _ = window.samples
    rng = np.random.default_rng(11)
    side3_rows = total = 0
    for batch in window.batches(200, 64, rng):
        assert isinstance(batch, MixedBatch) and len(batch) == 64
        assert batch.labels == sorted(batch.labels) and batch.sides == [t.side for t in
                                                                        batch.labels]
        side3_rows += sum(len(p) for p, t in zip(batch.parts, batch.labels, strict=True)
                          if t == three)
        total += len(batch)
    # 12800 draws at p = 0.25: the standard error is 0.004.
    assert abs(side3_rows / total - 0.25) < 0.015
    reads = []
    real_read = shards_module.read_shard
    monkeypatch.setattr(shards_module, "read_shard",
                        lambda path: reads.append(path) or real_read(path))
    window.refresh()
    assert reads == []  # neither the other track's shard nor shards of full tracks are read


def test_replay_window_without_shares_mixes_tracks_uniformly(tmp_path) -> None:
    first = write_track(tmp_path, 0, 3, 40, seed=1)
    second = write_track(tmp_path, 1, 6, 40, seed=2)
    window = ReplayWindow(tmp_path, window_samples=len(second) + 10)
    assert window.refresh() == len(second) + 10
    held = window.track_samples
    assert held[Track(3, "komi", "standard")].equals(first.take(slice(len(first) - 10, None)))
    assert held[Track(6, "komi", "standard")].equals(second)
    batch = window.sample_batch(4000, np.random.default_rng(0))
    assert isinstance(batch, MixedBatch) and batch.sides == [3, 6]
    assert abs(len(batch.parts[0]) / 4000 - 10 / window.num_samples) < 0.03


def test_replay_window_completes_and_trims_globals(tmp_path) -> None:
    """Shards of observation version 1 (eleven globals) share a window with today's."""
    old = random_samples(4, 12, seed=1)
    old = old.replace(globals=np.random.default_rng(1).random((12, BASIC_GLOBALS),
                                                              dtype=np.float32))
    new = random_samples(4, 12, seed=2)
    new = new.replace(globals=np.random.default_rng(2).random((12, NUM_GLOBALS),
                                                              dtype=np.float32))
    write_shard(tmp_path / shard_filename(0), old, meta(side=4))
    write_shard(tmp_path / shard_filename(1), new, meta(side=4))
    window = ReplayWindow(tmp_path, window_samples=100, on_bad_shard="raise")
    window.refresh()
    globals_ = window.samples.globals
    old_rows = len(old.trained_only())
    assert globals_.shape[1] == NUM_GLOBALS
    np.testing.assert_array_equal(globals_[:old_rows, BASIC_GLOBALS:],
                                  np.tile(board_size_globals(4), (old_rows, 1)))
    np.testing.assert_array_equal(globals_[old_rows:], new.trained_only().globals)
    narrow = ReplayWindow(tmp_path, window_samples=100, num_globals=BASIC_GLOBALS)
    narrow.refresh()
    np.testing.assert_array_equal(narrow.samples.globals, globals_[:, :BASIC_GLOBALS])
    too_wide = ReplayWindow(tmp_path, window_samples=100, num_globals=NUM_GLOBALS + 1,
                            on_bad_shard="raise")
    with pytest.raises(ShardError, match="holds 13 globals; the network reads 14"):
        too_wide.refresh()


def test_replay_window_refuses_bad_tracks_and_shares(tmp_path) -> None:
    write_shard(tmp_path / shard_filename(0), random_samples(3, 5), meta(side=4))
    window = ReplayWindow(tmp_path, window_samples=10, on_bad_shard="raise")
    with pytest.raises(ShardError, match="says side 4 but holds planes on a 5x5 grid"):
        window.refresh()
    for shares, message in (({}, "non-empty"), ({"4/komi": 1}, "side/game_type/scoring"),
                            ({(4, "komi", "standard"): 0}, "must be a number > 0"),
                            ({"4/komi/standard": 1, (4, "komi", "standard"): 1}, "twice"),
                            ({4: 1}, "a track is")):
        with pytest.raises(ValueError, match=message):
            ReplayWindow(tmp_path, window_samples=10, track_shares=shares)
    assert str(Track.parse(" 5/double/longest")) == "5/double/longest"
