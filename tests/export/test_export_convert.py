"""Format-1 model files: refused by the loader, converted (weights read from their raw
storages, never unpickled) with their metadata kept; the bundled champions are converted."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from catena_zero.cli.common import ConfigError, InputFileError
from catena_zero.cli.export import main as export_main
from catena_zero.export.convert import convert_model_file, read_format1_network
from catena_zero.export.model_file import (
    METADATA_MEMBER,
    PROGRAM_MEMBER,
    WEIGHTS_MEMBER,
    ModelFileError,
    load_model_file,
)
from catena_zero.play.bundled import bundled_model_path, bundled_sides
from catena_zero.rules import Engine, Rules, observe
from tests.export.archives import rewrite_archive
from tests.export.format1 import format1_model_file
from tests.export.tiny_model import tiny_model_file, tiny_network


@pytest.fixture(scope="module")
def old_file() -> Path:
    torch.set_num_threads(1)
    return format1_model_file(3)


def _positions(side: int, batch: int = 6, seed: int = 0):
    engine = Engine(Rules(side=side))
    rng = np.random.default_rng(seed)
    states = engine.new_games(batch, komi=rng.integers(0, 16, size=batch))
    for _ in range(int(rng.integers(1, 8))):
        engine.step(states, engine.random_actions(states, rng))
    return observe(engine, states)


def test_conversion_keeps_the_weights_and_the_metadata(old_file: Path, tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="format version 1"):
        load_model_file(old_file)
    meta = convert_model_file(old_file, tmp_path / "new.pt", program=False)
    model = load_model_file(tmp_path / "new.pt")
    assert model.metadata == meta and meta.format_version == 2
    assert (meta.side, meta.elo, meta.elo_reference, meta.training_steps) == (
        3, 432.5, "random = 0", 99)
    assert (meta.source, meta.created_utc) == ("checkpoint runs/x/checkpoint.pt",
                                               "2026-01-02T03:04:05+00:00")
    planes, globals_ = _positions(3)
    with torch.no_grad():
        expected = tiny_network(3, seed=4)(torch.from_numpy(planes), torch.from_numpy(globals_))
    out = model.run(planes, globals_)
    for name in ("policy_logits", "value_logits", "score", "ownership"):
        np.testing.assert_allclose(out[name], getattr(expected, name).numpy(), atol=1e-5)


def test_cli_convert(old_file: Path, tmp_path: Path, capsys) -> None:
    output = tmp_path / "cli.pt"
    assert export_main([f"convert={old_file}", f"output={output}", "program=true"]) == 0
    assert "side 3 komi/standard, 99 training steps, Elo 432, format version 2" in \
        capsys.readouterr().out
    assert PROGRAM_MEMBER in zipfile.ZipFile(output).namelist()
    assert load_model_file(output, trust_program=True).program is not None
    assert export_main([f"convert={old_file}", f"output={tmp_path / 'plain.pt'}"]) == 0
    assert PROGRAM_MEMBER not in zipfile.ZipFile(tmp_path / "plain.pt").namelist()
    with pytest.raises(InputFileError, match="does not exist"):
        export_main([f"convert={tmp_path / 'missing.pt'}", f"output={tmp_path / 'x.pt'}"])
    with pytest.raises(ConfigError, match="keeps the file's own Elo"):
        export_main([f"convert={old_file}", "elo=100", f"output={tmp_path / 'x.pt'}"])
    with pytest.raises(ConfigError, match="exactly one source"):
        export_main([f"convert={old_file}", f"checkpoint={old_file}",
                     f"output={tmp_path / 'x.pt'}"])
    assert not (tmp_path / "x.pt").exists() and not (tmp_path / "again.pt").exists()


def test_converting_a_current_file_copies_its_metadata_and_weights_byte_for_byte(
        tmp_path: Path) -> None:
    """convert of a current-format file drops its program (or adds one with program=true)
    and copies the metadata and weights members unchanged: how the bundled files lost
    theirs. A trusted load of a file without a program says in one line how to add one."""
    source = tmp_path / "with-program.pt"
    source.write_bytes(tiny_model_file(3).read_bytes())
    stripped, restored = tmp_path / "stripped.pt", tmp_path / "restored.pt"
    assert export_main([f"convert={source}", f"output={stripped}"]) == 0
    assert export_main([f"convert={stripped}", f"output={restored}", "program=true"]) == 0
    members = {path: zipfile.ZipFile(path) for path in (source, stripped, restored)}
    assert members[stripped].namelist() == [METADATA_MEMBER, WEIGHTS_MEMBER]
    for name in (METADATA_MEMBER, WEIGHTS_MEMBER):
        assert members[source].read(name) == members[stripped].read(name) == \
            members[restored].read(name)
    assert load_model_file(restored, trust_program=True).program is not None
    with pytest.raises(ModelFileError, match=r"holds no program.pt2.*catena-zero export "
                       r"convert=.*program=true"):
        load_model_file(stripped, trust_program=True)
    in_place = tmp_path / "in-place.pt"
    in_place.write_bytes(source.read_bytes())
    assert export_main([f"convert={in_place}", f"output={in_place}"]) == 0
    assert in_place.read_bytes() == stripped.read_bytes()


def _edit_weights_config(change):
    def edit(name: str, data: bytes) -> bytes:
        if not name.endswith("model_weights_config.json"):
            return data
        config = json.loads(data)
        change(config["config"])
        return json.dumps(config).encode()

    return edit


def _first(entries: dict) -> dict:
    return entries["net.stem.weight"]


DAMAGED_LAYOUTS = {
    "view past its storage": (
        lambda entries: _first(entries)["tensor_meta"].update(storage_offset={"as_int": 7}),
        "reaches past its storage"),
    "negative stride": (
        lambda entries: _first(entries)["tensor_meta"]["strides"][0].update(as_int=-1),
        "only fixed non-negative integers"),
    "symbolic size": (
        lambda entries: _first(entries)["tensor_meta"]["sizes"].__setitem__(
            0, {"as_expr": "s0"}), "only fixed non-negative integers"),
    "other dtype": (lambda entries: _first(entries)["tensor_meta"].update(dtype=5),
                    "the network needs torch.float32"),
    "unknown storage": (lambda entries: _first(entries).update(path_name="../../etc/passwd"),
                        "names a missing storage"),
    "missing weight": (lambda entries: entries.pop("net.stem.weight"),
                       "has no weight net.stem.weight"),
}


@pytest.mark.parametrize("case", list(DAMAGED_LAYOUTS))
def test_damaged_format1_layouts_are_refused(old_file: Path, tmp_path: Path, case: str) -> None:
    change, message = DAMAGED_LAYOUTS[case]
    damaged = tmp_path / "damaged.pt"
    rewrite_archive(old_file, damaged, _edit_weights_config(change))
    with pytest.raises(ModelFileError, match=message):
        read_format1_network(damaged)


def test_conversion_refuses_what_is_not_format1(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="already in the current format"):
        read_format1_network(tiny_model_file(3, program=False))
    (tmp_path / "text.pt").write_text("hello")
    with pytest.raises(ModelFileError, match="not a zip archive"):
        read_format1_network(tmp_path / "text.pt")


# Outputs of the bundled champions' format-1 programs (before conversion) at two positions:
# an empty board with A1 (action 0) at komi 0 and with action 5 at komi 7.
BUNDLED = {
    4: {"elo": 679.65, "steps": 16128, "value_logits": [[-0.3527, -11.0697, 1.7984],
                                                        [0.9233, -13.6371, 0.1691]],
        "score": [-7.801, 4.046]},
    6: {"elo": 191.63, "steps": 12200, "value_logits": [[0.1434, -11.349, 0.0992],
                                                        [0.1232, -8.1045, -0.0019]],
        "score": [0.54, 0.854]},
}


@pytest.mark.parametrize("side", sorted(BUNDLED))
def test_bundled_champions_are_converted_with_their_outputs(side: int) -> None:
    assert side in bundled_sides()
    model = load_model_file(bundled_model_path(side))
    meta = model.metadata
    assert meta.format_version == 2 and (meta.elo, meta.training_steps) == (
        BUNDLED[side]["elo"], BUNDLED[side]["steps"])
    assert "arena ladder" in meta.elo_reference
    engine = Engine(Rules(side=side))
    states = engine.new_games(2, komi=np.array([0, 7]))
    engine.step(states, np.array([0, 5]))
    out = model.run(*observe(engine, states))
    np.testing.assert_allclose(out["value_logits"], BUNDLED[side]["value_logits"], atol=2e-4)
    np.testing.assert_allclose(out["score"], BUNDLED[side]["score"], atol=2e-3)
    assert PROGRAM_MEMBER not in zipfile.ZipFile(bundled_model_path(side)).namelist()
