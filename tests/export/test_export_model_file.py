"""Model files: round trip, standalone loading, and refusal of damaged or foreign files."""

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
    FORMAT_VERSION,
    METADATA_MEMBER,
    ModelFileError,
    load_model_file,
    metadata_for,
    read_metadata,
    save_model_file,
)
from catena_zero.rules import Engine, Rules, observe
from tests.export.tiny_model import tiny_model_file, tiny_network


@pytest.fixture(scope="module")
def model_path() -> Path:
    torch.set_num_threads(1)
    return tiny_model_file(3)


def _rewrite_metadata(source: Path, target: Path, change) -> None:
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for item in old.infolist():
            data = old.read(item.filename)
            if item.filename.endswith("/extra/" + METADATA_MEMBER):
                values = json.loads(data)
                change(values)
                data = json.dumps(values).encode()
            new.writestr(item, data)


def test_round_trip_matches_the_network(model_path: Path) -> None:
    model = load_model_file(model_path)
    meta = model.metadata
    rules = Rules(side=3)
    assert (meta.side, meta.game_type, meta.scoring) == (3, "komi", "standard")
    assert meta.komi_range == rules.komi_range
    assert meta.format_version == FORMAT_VERSION
    assert meta.num_actions == rules.board.num_actions and meta.training_steps == 0
    assert meta.network["channels"] == 8
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


def test_loads_with_plain_torch_export(model_path: Path) -> None:
    extra = {METADATA_MEMBER: ""}
    program = torch.export.load(io.BytesIO(model_path.read_bytes()), extra_files=extra).module()
    meta = json.loads(extra[METADATA_MEMBER])
    size = meta["grid_size"]
    outputs = program(torch.zeros(2, meta["num_planes"], size, size),
                      torch.zeros(2, meta["num_globals"]))
    assert [tuple(o.shape) for o in outputs] == [(2, 20), (2, 3), (2,), (2, 19)]


@pytest.mark.slow
def test_loads_in_a_process_without_catena_zero(model_path: Path) -> None:
    script = (
        "import sys, io, json, zipfile\n"
        "sys.modules['catena_zero'] = None  # any project import would fail\n"
        "import torch\n"
        f"path = {str(model_path)!r}\n"
        "extra = {'catena_model.json': ''}\n"
        "program = torch.export.load(io.BytesIO(open(path, 'rb').read()),"
        " extra_files=extra).module()\n"
        "meta = json.loads(extra['catena_model.json'])\n"
        "planes = torch.zeros(2, meta['num_planes'], meta['grid_size'], meta['grid_size'])\n"
        "out = program(planes, torch.zeros(2, meta['num_globals']))\n"
        "print(meta['side'], tuple(out[0].shape), tuple(out[3].shape))\n"
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
    with pytest.raises(ModelFileError, match="truncated|corrupt"):
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
    _rewrite_metadata(model_path, other, lambda values: values.update(format_version=99))
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
    _rewrite_metadata(model_path, renamed, lambda values: values.update(format="other"))
    with pytest.raises(ModelFileError, match="not a catena-zero-model file"):
        load_model_file(renamed)


def test_save_is_atomic_and_replaces(model_path: Path, tmp_path: Path) -> None:
    target = tmp_path / "models" / "model.pt"
    shutil.copy(model_path, tmp_path / "seed.pt")
    target.parent.mkdir()
    target.write_text("old contents")
    net = tiny_network(3, seed=1)
    net.train()
    metadata = metadata_for(net, Rules(side=3), network_config=net.config.to_dict(), elo=1234.5,
                            elo_reference="random agent = 0", training_steps=77, source="test")
    save_model_file(net, metadata, target)
    assert net.training, "the caller's network keeps its mode"
    assert sorted(p.name for p in target.parent.iterdir()) == ["model.pt"]
    meta = read_metadata(target)
    assert (meta.elo, meta.training_steps, meta.elo_reference) == (1234.5, 77, "random agent = 0")


def test_eager_runner_matches_the_program_and_falls_back(model_path: Path,
                                                         tmp_path: Path) -> None:
    model = load_model_file(model_path)
    assert model.runner is not None
    planes = torch.rand(2, model.metadata.num_planes, 5, 5)
    globals_ = torch.rand(2, model.metadata.num_globals)
    with torch.no_grad():
        for want, have in zip(model.program(planes, globals_), model.runner(planes, globals_),
                              strict=True):
            torch.testing.assert_close(have, want, atol=1e-5, rtol=1e-5)
    # Metadata describing another architecture: the program alone is used, and still works.
    other = tmp_path / "other-architecture.pt"
    _rewrite_metadata(model_path, other, lambda values: values["network"].update(channels=16))
    fallback = load_model_file(other)
    assert fallback.runner is None
    out = fallback.run(planes.numpy(), globals_.numpy())
    assert out["policy_logits"].shape == (2, 20)
