"""Model files: round trip, the rebuilt network, the program behind the trust flag, and
refusal of damaged, foreign or inconsistent files (more in test_export_corrupt_files)."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from catena_zero.export.model_file import (
    METADATA_MEMBER,
    PER_SIDE_VERSION,
    PROGRAM_MEMBER,
    WEIGHTS_MEMBER,
    ModelFileError,
    load_model_file,
    metadata_for,
    read_metadata,
    save_model_file,
)
from catena_zero.rules import NUM_GLOBALS, Engine, Rules, observe
from tests.export.archives import rewrite_archive, rewrite_metadata
from tests.export.tiny_model import tiny_model_file, tiny_network


@pytest.fixture(scope="module")
def model_path() -> Path:
    torch.set_num_threads(1)
    return tiny_model_file(3)


def test_round_trip_matches_the_network(model_path: Path) -> None:
    model = load_model_file(model_path)
    meta = model.metadata
    rules = Rules(side=3)
    assert (meta.side, meta.game_type, meta.scoring) == (3, "komi", "standard")
    assert meta.komi_range == rules.komi_range
    assert meta.format_version == PER_SIDE_VERSION == 2  # one side's network, one track
    assert meta.num_actions == rules.board.num_actions and meta.training_steps == 0
    assert meta.network["channels"] == 8
    assert model.program is None, "the program is only read when trusted"
    engine = Engine(rules)
    states = engine.new_games(4, komi=np.array([0, 3, 7, 15]))
    engine.step(states, engine.random_actions(states, np.random.default_rng(1)))
    planes, globals_ = observe(engine, states)
    out = model.run(planes, globals_)
    with torch.no_grad():
        expected = tiny_network(3)(torch.from_numpy(planes), torch.from_numpy(globals_))
    for name in ("policy_logits", "value_logits", "score", "ownership"):
        np.testing.assert_allclose(out[name], getattr(expected, name).numpy(), atol=1e-5)
    one = model.run(planes[:1], globals_[:1])  # any batch size works
    np.testing.assert_allclose(one["policy_logits"], out["policy_logits"][:1], atol=1e-5)


def test_file_layout_and_track_metadata(model_path: Path) -> None:
    with zipfile.ZipFile(model_path) as archive:
        assert archive.namelist() == [METADATA_MEMBER, WEIGHTS_MEMBER, PROGRAM_MEMBER]
        assert {item.compress_type for item in archive.infolist()} == {zipfile.ZIP_STORED}
        values = json.loads(archive.read(METADATA_MEMBER))
    assert values["format_version"] == 2 and values["architecture"] == "PolicyValueNet"
    assert values["tracks"] == [{"side": 3, "game_type": "komi", "scoring": "standard",
                                 "komi_range": [0, 15], "elo": None, "elo_reference": None,
                                 "fair_komi": None}]
    assert "side" not in values, "the rules live in the tracks"


def test_loading_never_calls_torch_export_load(model_path: Path, monkeypatch) -> None:
    calls = []

    def record(*args, **kwargs):
        calls.append(args)
        raise RuntimeError("torch.export.load was called")

    monkeypatch.setattr(torch.export, "load", record)
    model = load_model_file(model_path)
    assert model.run(np.zeros((1, 11, 5, 5), np.float32),
                     np.zeros((1, NUM_GLOBALS), np.float32))["policy_logits"].shape == (1, 20)
    assert calls == []
    with pytest.raises(ModelFileError, match="its program could not be loaded"):
        load_model_file(model_path, trust_program=True)
    assert len(calls) == 1, "only the trust flag reads the program"


def test_trusted_program_agrees_with_the_network(model_path: Path, tmp_path: Path) -> None:
    model = load_model_file(model_path, trust_program=True)
    planes = torch.rand(3, model.metadata.num_planes, 5, 5)
    globals_ = torch.rand(3, model.metadata.num_globals)
    with torch.no_grad():
        for want, have in zip(model.network.forward_tuple(planes, globals_)[:4],
                              model.program(planes, globals_), strict=True):
            torch.testing.assert_close(have, want, atol=1e-5, rtol=1e-5)
    without = tmp_path / "no-program.pt"
    shutil.copy(tiny_model_file(3, program=False), without)
    assert load_model_file(without).program is None
    with pytest.raises(ModelFileError, match="holds no program.pt2"):
        load_model_file(without, trust_program=True)


def test_program_loads_with_plain_torch_export(model_path: Path) -> None:
    extra = {METADATA_MEMBER: ""}
    data = zipfile.ZipFile(model_path).read(PROGRAM_MEMBER)
    program = torch.export.load(io.BytesIO(data), extra_files=extra).module()
    meta = json.loads(extra[METADATA_MEMBER])
    size = meta["grid_size"]
    outputs = program(torch.zeros(2, meta["num_planes"], size, size),
                      torch.zeros(2, meta["num_globals"]))
    assert [tuple(o.shape) for o in outputs] == [(2, 20), (2, 3), (2,), (2, 19)]


@pytest.mark.slow
def test_program_loads_in_a_process_without_catena_zero(model_path: Path) -> None:
    script = (
        "import sys, io, json, zipfile\n"
        "sys.modules['catena_zero'] = None  # any project import would fail\n"
        "import torch\n"
        f"data = zipfile.ZipFile({str(model_path)!r}).read('program.pt2')\n"
        "extra = {'catena_model.json': ''}\n"
        "program = torch.export.load(io.BytesIO(data), extra_files=extra).module()\n"
        "meta = json.loads(extra['catena_model.json'])\n"
        "planes = torch.zeros(2, meta['num_planes'], meta['grid_size'], meta['grid_size'])\n"
        "out = program(planes, torch.zeros(2, meta['num_globals']))\n"
        "print(meta['tracks'][0]['side'], tuple(out[0].shape), tuple(out[3].shape))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, cwd="/")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "3 (2, 20) (2, 19)"


def test_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="does not exist"):
        load_model_file(tmp_path / "nothing.pt")


@pytest.mark.parametrize("fraction", [0.0, 0.1, 0.5, 0.9, 0.999])
def test_truncated_file_is_refused(model_path: Path, tmp_path: Path, fraction: float) -> None:
    data = model_path.read_bytes()
    damaged = tmp_path / "truncated.pt"
    damaged.write_bytes(data[: int(len(data) * fraction)])
    with pytest.raises(ModelFileError, match="truncated|corrupt|empty"):
        load_model_file(damaged)


def test_flipped_byte_is_refused(model_path: Path, tmp_path: Path) -> None:
    data = bytearray(model_path.read_bytes())
    with zipfile.ZipFile(model_path) as archive:
        largest = max(archive.infolist(), key=lambda item: item.compress_size)
    middle = largest.header_offset + 100 + largest.compress_size // 2
    data[middle] ^= 0xFF
    damaged = tmp_path / "flipped.pt"
    damaged.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match="corrupt|truncated"):
        load_model_file(damaged)


def test_other_format_version_is_refused(model_path: Path, tmp_path: Path) -> None:
    other = tmp_path / "future.pt"
    rewrite_metadata(model_path, other, lambda values: values.update(format_version=99))
    with pytest.raises(ModelFileError, match="format version 99"):
        load_model_file(other)


def test_foreign_files_are_refused(model_path: Path, tmp_path: Path) -> None:
    text = tmp_path / "notes.pt"
    text.write_text("not a model")
    with pytest.raises(ModelFileError, match="truncated or not a model"):
        load_model_file(text)
    plain_zip = tmp_path / "plain.pt"
    with zipfile.ZipFile(plain_zip, "w") as archive:
        archive.writestr("a/data.txt", "hello")
    with pytest.raises(ModelFileError, match="not a catena-zero model"):
        read_metadata(plain_zip)
    renamed = tmp_path / "renamed.pt"
    rewrite_metadata(model_path, renamed, lambda values: values.update(format="other"))
    with pytest.raises(ModelFileError, match="not a catena-zero-model file"):
        load_model_file(renamed)
    extra_member = tmp_path / "extra-member.pt"
    shutil.copy(model_path, extra_member)
    with zipfile.ZipFile(extra_member, "a") as archive:
        archive.writestr("notes.txt", "hello")
    with pytest.raises(ModelFileError, match="unexpected member 'notes.txt'"):
        load_model_file(extra_member)


def test_save_is_atomic_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "models" / "model.pt"
    target.parent.mkdir()
    target.write_text("old contents")
    net = tiny_network(3, seed=1)
    net.train()
    metadata = metadata_for(net, Rules(side=3), network_config=net.config.to_dict(), elo=1234.5,
                            elo_reference="random agent = 0", fair_komi=6.5,
                            training_steps=77, source="test")
    save_model_file(net, metadata, target, program=False)
    assert net.training, "the caller's network keeps its mode"
    assert sorted(p.name for p in target.parent.iterdir()) == ["model.pt"]
    meta = read_metadata(target)
    assert (meta.elo, meta.training_steps, meta.elo_reference) == (1234.5, 77, "random agent = 0")
    assert meta.tracks[0].fair_komi == 6.5 and meta == metadata


def test_metadata_must_describe_the_network(tmp_path: Path) -> None:
    net = tiny_network(3)
    other = tiny_network(4)
    metadata = metadata_for(other, Rules(side=4), network_config=other.config.to_dict())
    with pytest.raises(ModelFileError, match="does not describe this network"):
        save_model_file(net, metadata, tmp_path / "m.pt", program=False)
    assert not (tmp_path / "m.pt").exists()


def test_metadata_describing_another_network_is_refused(model_path: Path,
                                                        tmp_path: Path) -> None:
    """The weights must fit the network the metadata describes (shapes checked before the
    network is built, so a config describing a huge network allocates nothing)."""
    other = tmp_path / "other-architecture.pt"
    rewrite_metadata(model_path, other, lambda values: values["network"].update(channels=16))
    with pytest.raises(ModelFileError, match="weight stem.weight is torch.float32"):
        load_model_file(other)
    huge = tmp_path / "huge.pt"
    rewrite_metadata(model_path, huge,
                     lambda values: values["network"].update(channels=1 << 20, blocks=64))
    with pytest.raises(ModelFileError, match="do not fit the network"):
        load_model_file(huge)
    assert read_metadata(huge).network["channels"] == 1 << 20  # the metadata itself is valid


def test_weights_that_do_not_fit_are_refused(model_path: Path, tmp_path: Path) -> None:
    import safetensors.torch

    def drop_one(name: str, data: bytes) -> bytes:
        if name != WEIGHTS_MEMBER:
            return data
        tensors = safetensors.torch.load(data)
        tensors.pop("stem.weight")
        return safetensors.torch.save(tensors)

    def not_finite(name: str, data: bytes) -> bytes:
        if name != WEIGHTS_MEMBER:
            return data
        tensors = safetensors.torch.load(data)
        tensors["stem.weight"][0, 0, 0, 0] = float("nan")
        return safetensors.torch.save(tensors)

    for change, message in [(drop_one, r"missing \['stem.weight'\]"),
                            (not_finite, "weight stem.weight is not finite")]:
        damaged = tmp_path / "damaged.pt"
        rewrite_archive(model_path, damaged, change)
        with pytest.raises(ModelFileError, match=message):
            load_model_file(damaged)
