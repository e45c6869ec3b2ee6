"""Versioned, atomic, checksummed training checkpoints and exact resume.

A checkpoint file is `MAGIC`, a format-version line, the SHA-256 of the payload, then the
payload (`torch.save` of plain data and tensors, loaded with `weights_only=True`). Each save
writes a new file `checkpoint-step<step>-iter<iteration>.pt` through a temp file and
`os.replace`, then deletes all but the newest `keep` files, so the newest good checkpoint is
never overwritten in place. `load_checkpoint` refuses a truncated, corrupt, foreign or
wrong-version file with `CheckpointError` (one line naming the file and the problem) before
anything is restored; `load_latest_intact_checkpoint` falls back past damaged newest files.

Something other than a regular file under a checkpoint's name (a directory, a FIFO, a
symbolic link loop) is never read, replaced or deleted: resuming names it and passes over
it, and a save whose name it holds goes to `checkpoint-step<step>-iter<iteration>-2.pt`
(then -3, ...), which sorts right after it.

Example (what `train_loop` does)::

    from catena_zero.train import (Counters, Trainer, build_network, latest_checkpoint,
                                   load_checkpoint, restore_rng_states, save_checkpoint)

    # fresh run
    trainer = Trainer(net, train_config, device)
    counters = Counters()
    ...
    save_checkpoint(run_dir / "checkpoints", trainer, counters, config=resolved_config_dict,
                    rules={"side": 4, "game_type": "komi", "scoring": "standard"},
                    generators={"selfplay": selfplay_rng}, keep=loop_config.keep_checkpoints)

    # resume=true
    checkpoint = load_checkpoint(latest_checkpoint(run_dir / "checkpoints"))
    trainer = Trainer(build_network(checkpoint), TrainConfig.from_dict(checkpoint.train_config),
                      device)
    restore_trainer(checkpoint, trainer)                    # model, optimiser, step
    counters = checkpoint.counters
    restore_rng_states(checkpoint.rng_states, {"selfplay": selfplay_rng})
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from catena_zero.data.atomic import (
    NotRegularFileError,
    atomic_open,
    read_regular_file,
    write_target,
)
from catena_zero.network.model import PolicyValueNet
from catena_zero.train.trainer import Trainer

CHECKPOINT_FORMAT_VERSION = 2
MAGIC = b"CATENA-ZERO-CHECKPOINT\n"
# The name of a checkpoint; a second one of the same step and iteration, saved where the
# first name is held by something that is not a regular file, ends "-2.pt" (then "-3.pt", ...).
CHECKPOINT_PATTERN = re.compile(r"^checkpoint-step(\d{9,})-iter(\d{6,})(?:-(\d+))?\.pt$")
MAX_NAME_VARIANTS = 100
# Version 2 added "ema_model" (the averaged weights, or None); version 1 files still load.
_PAYLOAD_KEYS = {
    1: {"model", "optimizer", "trainer_step", "counters", "rng_states", "config", "network",
        "train_config", "rules", "created_time", "extra"},
}
_PAYLOAD_KEYS[2] = _PAYLOAD_KEYS[1] | {"ema_model"}
_ZIP_END_RECORD = b"PK\x05\x06"


class CheckpointError(ValueError):
    """A checkpoint is missing, truncated, corrupt, foreign, of another version or mismatched."""


@dataclass
class Counters:
    step: int = 0  # optimiser steps taken
    iteration: int = 0  # completed self-play + training iterations
    games: int = 0  # self-play games finished
    positions: int = 0  # self-play positions generated (before augmentation)

    def to_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)


@dataclass
class Checkpoint:
    """Contents of a checkpoint file, as loaded (plain data and tensors)."""

    path: Path
    format_version: int
    model_state: dict[str, torch.Tensor]  # net.state_dict(): the trained weights
    optimizer_state: dict[str, Any]  # optimizer.state_dict()
    trainer_step: int  # Trainer.step (drives the lr schedule)
    counters: Counters
    rng_states: dict[str, Any]  # see capture_rng_states
    config: Any  # the run's resolved config, plain data (dict or YAML text)
    network_args: dict[str, Any]  # PolicyValueNet.init_args (shapes + NetworkConfig dict)
    train_config: dict[str, Any]  # TrainConfig.to_dict()
    rules: dict[str, Any]  # e.g. {"side": 4, "game_type": "komi", "scoring": "standard"}
    created_time: float
    extra: dict[str, Any] = field(default_factory=dict)
    ema_state: dict[str, torch.Tensor] | None = None  # averaged weights (train.ema_decay > 0)

    @property
    def published_state(self) -> dict[str, torch.Tensor]:
        """The weights to play with: the average when the run kept one, else the trained."""
        return self.ema_state if self.ema_state is not None else self.model_state

    @property
    def net(self) -> PolicyValueNet:
        """The network with the checkpoint's published weights (built on first access, then
        cached)."""
        cached = self.__dict__.get("_net")
        if cached is None:
            cached = build_network(self)
            self.__dict__["_net"] = cached
        return cached


def _plain(value: Any) -> Any:
    """Replace numpy arrays/scalars inside nested containers by tagged lists / Python scalars."""
    if isinstance(value, np.ndarray):
        return {"__ndarray__": value.tolist(), "dtype": str(value.dtype)}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_plain(item) for item in value)
    return value


def _unplain(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"__ndarray__", "dtype"}:
            return np.asarray(value["__ndarray__"], dtype=value["dtype"])
        return {key: _unplain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_unplain(item) for item in value)
    return value


def capture_rng_states(generators: dict[str, np.random.Generator] | None = None) -> dict[str, Any]:
    """States of python `random`, numpy's global RNG, torch (CPU and CUDA) and `generators`."""
    states: dict[str, Any] = {
        "python": random.getstate(),
        "numpy_global": _plain(np.random.get_state(legacy=False)),
        "torch": torch.get_rng_state(),
        "torch_cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        "generators": {
            name: _plain(generator.bit_generator.state)
            for name, generator in (generators or {}).items()
        },
    }
    return states


def restore_rng_states(
    states: dict[str, Any], generators: dict[str, np.random.Generator] | None = None
) -> None:
    """Inverse of `capture_rng_states`; each of `generators` must have a saved state."""
    missing = sorted(set(generators or {}) - set(states["generators"]))
    if missing:
        raise CheckpointError(f"checkpoint holds no RNG state for generator(s) {missing}")
    python_state = states["python"]
    random.setstate((python_state[0], tuple(python_state[1]), python_state[2]))
    np.random.set_state(_unplain(states["numpy_global"]))
    torch.set_rng_state(states["torch"])
    if states["torch_cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["torch_cuda"])
    for name, generator in (generators or {}).items():
        generator.bit_generator.state = _unplain(states["generators"][name])


def checkpoint_filename(step: int, iteration: int, variant: int = 1) -> str:
    """The file name of a checkpoint; `variant` 2, 3, ... names the one saved where the
    names before it are held by something that is not a regular file."""
    suffix = "" if variant == 1 else f"-{variant}"
    return f"checkpoint-step{step:09d}-iter{iteration:06d}{suffix}.pt"


def _named_checkpoints(directory: Path) -> list[Path]:
    """Everything in `directory` with a checkpoint's name, regular file or not, oldest first
    by (step, iteration, variant)."""
    if not directory.is_dir():
        return []
    found = []
    for path in directory.iterdir():
        match = CHECKPOINT_PATTERN.match(path.name)
        if match:
            key = (int(match.group(1)), int(match.group(2)), int(match.group(3) or 1))
            found.append((key, path))
    return [path for _, path in sorted(found)]


def list_checkpoints(directory: str | os.PathLike) -> list[Path]:
    """Checkpoint files in `directory`, oldest first by (step, iteration); never temp files,
    nor what has a checkpoint's name but is not a regular file (a directory, a FIFO)."""
    return [path for path in _named_checkpoints(Path(directory)) if path.is_file()]


def latest_checkpoint(directory: str | os.PathLike) -> Path | None:
    """The newest checkpoint file in `directory`, or None when there is none."""
    paths = list_checkpoints(directory)
    return paths[-1] if paths else None


def save_checkpoint(
    directory: str | os.PathLike,
    trainer: Trainer,
    counters: Counters,
    *,
    config: Any,
    rules: dict[str, Any],
    generators: dict[str, np.random.Generator] | None = None,
    extra: dict[str, Any] | None = None,
    keep: int = 3,
    log: Callable[[str], None] | None = None,
) -> Path:
    """Write a new checkpoint atomically into `directory`; returns its path.

    `counters.step` is set from `trainer.step`. `config` (e.g. the resolved config as a dict
    or YAML text), `rules` and `extra` must be plain data (dicts, lists, str, numbers, bool,
    None, numpy arrays; tensors too in `extra`). The `keep` newest checkpoint files are kept
    and older ones deleted (0 keeps all); the new file is never among the deleted. When the
    checkpoint's name is held by something that is not a regular file, that is left as it is
    and the checkpoint is saved under the next free variant of the name, said through `log`.
    """
    if not isinstance(trainer.net, PolicyValueNet):
        raise ValueError(f"save_checkpoint needs a PolicyValueNet, got {type(trainer.net)}")
    if not isinstance(keep, int) or keep < 0:
        raise ValueError(f"keep must be an int >= 0 (0 = keep all), got {keep!r}")
    counters = dataclasses.replace(counters, step=trainer.step)
    payload = {
        "model": _to_cpu(trainer.net.state_dict()),
        "ema_model": None if trainer.ema_net is None else _to_cpu(trainer.ema_net.state_dict()),
        "optimizer": _to_cpu(trainer.optimizer.state_dict()),
        "trainer_step": trainer.step,
        "counters": counters.to_dict(),
        "rng_states": capture_rng_states(generators),
        "config": _plain(config),
        "network": trainer.net.init_args,
        "train_config": trainer.config.to_dict(),
        "rules": _plain(rules),
        "created_time": time.time(),
        "extra": _plain(extra or {}),
    }
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    body = buffer.getvalue()
    header = MAGIC + f"{CHECKPOINT_FORMAT_VERSION}\n".encode() + (
        hashlib.sha256(body).hexdigest().encode() + b"\n"
    )
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = _save_path(directory, counters.step, counters.iteration, log)
    with atomic_open(path) as handle:
        handle.write(header)
        handle.write(body)
    if keep:
        for old in list_checkpoints(directory)[:-keep]:
            if old != path:
                old.unlink(missing_ok=True)
    return path


def _save_path(directory: Path, step: int, iteration: int,
               log: Callable[[str], None] | None) -> Path:
    """The first name of the checkpoint (step, iteration) that a save may write: free, or a
    regular file (a damaged checkpoint a resumed run passed over is replaced)."""
    for variant in range(1, MAX_NAME_VARIANTS + 1):
        path = directory / checkpoint_filename(step, iteration, variant)
        try:
            write_target(path)
        except NotRegularFileError as error:
            if variant == 1:
                first = path, error.kind
            continue
        if variant > 1 and log is not None:
            log(f"warning: {first[0]} is {first[1]}, not a checkpoint file; left as it is, "
                f"this checkpoint is saved as {path.name}")
        return path
    raise NotRegularFileError(directory / checkpoint_filename(step, iteration),
                              f"{first[1]}, and so are {MAX_NAME_VARIANTS - 1} variants")


def _to_cpu(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, dict):
        return {key: _to_cpu(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_to_cpu(item) for item in value)
    return value


def load_checkpoint(path: str | os.PathLike | None, map_location: str = "cpu") -> Checkpoint:
    """Read and verify a checkpoint. Raises CheckpointError on any defect (nothing restored):
    one line, "checkpoint PATH: problem", for a missing, empty, truncated or corrupt file, a
    directory, a foreign file or another format version."""
    if path is None:
        raise CheckpointError("no checkpoint to load (latest_checkpoint found none)")
    path = Path(path)
    body, version = _verified_body(path, _read_file(path))
    try:
        payload = torch.load(io.BytesIO(body), map_location=map_location, weights_only=True)
    except Exception as error:  # the digest matched, so this is a foreign or damaged writer
        raise CheckpointError(f"checkpoint {path}: payload cannot be unpickled "
                              f"({_first_line(error)})") from None
    if not isinstance(payload, dict) or set(payload) != _PAYLOAD_KEYS[version]:
        keys = sorted(payload) if isinstance(payload, dict) else type(payload).__name__
        raise CheckpointError(f"checkpoint {path}: unexpected contents {keys}")
    try:
        counters = Counters(**payload["counters"])
    except TypeError as error:
        raise CheckpointError(f"checkpoint {path}: bad counters ({error})") from None
    try:
        return Checkpoint(
            path=path,
            format_version=version,
            model_state=payload["model"],
            optimizer_state=payload["optimizer"],
            trainer_step=int(payload["trainer_step"]),
            counters=counters,
            rng_states=payload["rng_states"],
            config=_unplain(payload["config"]),
            network_args=payload["network"],
            train_config=payload["train_config"],
            rules=_unplain(payload["rules"]),
            created_time=float(payload["created_time"]),
            extra=_unplain(payload["extra"]),
            ema_state=payload.get("ema_model"),
        )
    except (TypeError, ValueError, KeyError) as error:  # a foreign writer's values
        raise CheckpointError(f"checkpoint {path}: malformed contents "
                              f"({type(error).__name__}: {error})") from None


def _read_file(path: Path) -> bytes:
    try:  # never opened for a blocking read when it is not a regular file (a FIFO)
        data = read_regular_file(path)
    except NotRegularFileError as error:
        raise CheckpointError(f"checkpoint {path}: is {error.kind}, not a checkpoint "
                              f"file") from None
    except OSError as error:
        raise CheckpointError(f"checkpoint {path}: cannot read "
                              f"({error.strerror or type(error).__name__})") from None
    if not data:
        raise CheckpointError(f"checkpoint {path}: empty file (0 bytes)")
    return data


def _verified_body(path: Path, data: bytes) -> tuple[bytes, int]:
    """(payload bytes, format version) of a file whose header and SHA-256 check out."""
    if not data.startswith(MAGIC):
        if MAGIC.startswith(data):
            raise CheckpointError(f"checkpoint {path}: truncated (header incomplete, "
                                  f"{len(data)} bytes)")
        raise CheckpointError(f"checkpoint {path}: not a catena_zero checkpoint (bad magic)")
    header = data[len(MAGIC):].split(b"\n", 2)
    if len(header) < 3:
        raise CheckpointError(f"checkpoint {path}: truncated (header incomplete, "
                              f"{len(data)} bytes)")
    version_line, digest_line, body = header
    if not version_line.isdigit():
        raise CheckpointError(f"checkpoint {path}: damaged header (version {version_line!r})")
    version = int(version_line)
    if version not in _PAYLOAD_KEYS:
        raise CheckpointError(
            f"checkpoint {path}: format version {version}, this code reads versions"
            f" {', '.join(map(str, sorted(_PAYLOAD_KEYS)))}"
        )
    if hashlib.sha256(body).hexdigest().encode() != digest_line:
        # torch.save writes a zip archive, which ends with its end-of-central-directory record.
        if body[-22:-18] != _ZIP_END_RECORD:
            raise CheckpointError(f"checkpoint {path}: truncated (zip archive incomplete, "
                                  f"{len(data)} bytes)")
        raise CheckpointError(f"checkpoint {path}: corrupt (SHA-256 mismatch, "
                              f"{len(data)} bytes)")
    return body, version


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def load_latest_intact_checkpoint(directory: str | os.PathLike
                                  ) -> tuple[Checkpoint | None, list[str]]:
    """The newest checkpoint in `directory` that loads, and one line for each newer file that
    did not (newest first), naming it and its problem: a damaged newest file, or something
    with a checkpoint's name that is not a regular file (a directory, a FIFO: never read),
    falls back to the one before it. (None, []) when the directory holds no checkpoint;
    CheckpointError (one line naming every damaged file) when it holds some but none is
    intact."""
    refused: list[str] = []
    for path in reversed(_named_checkpoints(Path(directory))):
        try:
            return load_checkpoint(path), refused
        except CheckpointError as error:
            refused.append(str(error))
    if refused:
        raise CheckpointError(f"no intact checkpoint in {directory}: {'; '.join(refused)}")
    return None, refused


def build_network(checkpoint: Checkpoint, load_weights: bool = True,
                  weights: str = "published") -> PolicyValueNet:
    """A PolicyValueNet with the checkpoint's shapes and config, and with its weights unless
    `load_weights` is false: the published ones (the average when kept) or, with
    `weights="trained"`, the optimiser's latest."""
    if weights not in ("published", "trained"):
        raise ValueError(f"weights must be 'published' or 'trained', got {weights!r}")
    try:
        net = PolicyValueNet.from_init_args(checkpoint.network_args)
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError(
            f"checkpoint {str(checkpoint.path)!r} has a bad network description: {error}"
        ) from None
    if load_weights:
        state = checkpoint.published_state if weights == "published" else checkpoint.model_state
        _check_model_state(net, checkpoint, state)
        net.load_state_dict(state)
    return net


def _check_model_state(net: torch.nn.Module, checkpoint: Checkpoint,
                       state: dict[str, torch.Tensor]) -> None:
    expected = {key: tuple(value.shape) for key, value in net.state_dict().items()}
    found = {key: tuple(value.shape) for key, value in state.items()}
    if expected != found:
        differing = sorted(set(expected) ^ set(found)) or sorted(
            key for key in expected if expected[key] != found[key]
        )
        raise CheckpointError(
            f"checkpoint {str(checkpoint.path)!r} does not fit this network:"
            f" mismatched tensors {differing[:5]}"
        )


def restore_trainer(checkpoint: Checkpoint, trainer: Trainer) -> None:
    """Load model weights, optimiser state and step into `trainer` (checked first: the
    network's shapes, board and config must equal the checkpoint's)."""
    if isinstance(trainer.net, PolicyValueNet):
        mine, saved = trainer.net.init_args, checkpoint.network_args
        differing = sorted(key for key in set(mine) | set(saved) if mine.get(key) != saved.get(key))
        if differing:
            raise CheckpointError(
                f"checkpoint {str(checkpoint.path)!r} does not fit this network: different"
                f" {', '.join(differing)}"
            )
    _check_model_state(trainer.net, checkpoint, checkpoint.model_state)
    if checkpoint.ema_state is not None:
        _check_model_state(trainer.net, checkpoint, checkpoint.ema_state)
    saved_groups = checkpoint.optimizer_state.get("param_groups", [])
    groups = trainer.optimizer.param_groups
    if len(saved_groups) != len(groups) or any(
        len(saved["params"]) != len(group["params"])
        for saved, group in zip(saved_groups, groups, strict=False)
    ):
        raise CheckpointError(
            f"checkpoint {str(checkpoint.path)!r} optimiser state does not fit this network"
        )
    trainer.load_state_dict(
        {"model": checkpoint.model_state, "ema_model": checkpoint.ema_state,
         "optimizer": checkpoint.optimizer_state, "step": checkpoint.trainer_step}
    )
