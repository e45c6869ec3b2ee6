"""Atomic writes and safe reads against special files: a write never replaces something
that is not a regular file, a symbolic link is followed, and a read of a FIFO or device
is refused at once instead of blocking."""

from __future__ import annotations

import os
import stat
import threading

import pytest

from catena_zero.data.atomic import (
    NotRegularFileError,
    atomic_write_text,
    read_regular_file,
    write_target,
)


def _special_files(tmp_path):
    """(name, path, kind) of every special file this machine lets the test make."""
    made = []
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    made.append((fifo, "a FIFO"))
    directory = tmp_path / "directory"
    directory.mkdir()
    made.append((directory, "a directory"))
    device = tmp_path / "null-device"
    try:  # a copy of /dev/null (character device 1, 3); needs root
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        made.append((device, "a character device"))
    except (PermissionError, OSError):
        pass
    import socket
    sock_path = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(sock_path))
        made.append((sock_path, "a socket"))
    except OSError:
        pass
    finally:
        server.close()
    return made


def test_a_write_refuses_every_special_file_and_leaves_it_as_it_was(tmp_path) -> None:
    for path, kind in _special_files(tmp_path):
        mode_before = os.lstat(path).st_mode
        with pytest.raises(NotRegularFileError) as caught:
            atomic_write_text(path, "data")
        assert kind in str(caught.value) and str(path) in str(caught.value)
        assert os.lstat(path).st_mode == mode_before, kind
        leftovers = [name for name in os.listdir(tmp_path) if ".tmp-" in name]
        assert leftovers == []


def test_a_symbolic_link_is_followed_to_a_regular_file(tmp_path) -> None:
    target = tmp_path / "real.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    atomic_write_text(link, "new")
    assert link.is_symlink() and target.read_text() == "new"
    dangling = tmp_path / "dangling.txt"
    dangling.symlink_to(tmp_path / "later.txt")
    atomic_write_text(dangling, "made")
    assert dangling.is_symlink() and (tmp_path / "later.txt").read_text() == "made"


def test_a_symbolic_link_to_a_special_file_is_refused(tmp_path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(fifo)
    with pytest.raises(NotRegularFileError, match="FIFO"):
        atomic_write_text(link, "data")
    assert link.is_symlink() and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_the_root_and_dot_names_are_directories() -> None:
    for name in ("/", ".", ".."):
        with pytest.raises(NotRegularFileError, match="a directory"):
            write_target(name)


def test_a_regular_file_is_replaced(tmp_path) -> None:
    path = tmp_path / "sub" / "file.txt"
    atomic_write_text(path, "one")
    atomic_write_text(path, "two")
    assert path.read_text() == "two"


def _read_with_deadline(path, seconds: float = 5.0):
    """read_regular_file in a thread; fails the test if it blocks past `seconds`."""
    outcome: dict = {}

    def read() -> None:
        try:
            outcome["data"] = read_regular_file(path, 100)
        except Exception as error:  # noqa: BLE001 - handed back to the test
            outcome["error"] = error

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"reading {path} blocked"
    return outcome


def test_a_read_refuses_special_files_without_blocking(tmp_path) -> None:
    for path, kind in _special_files(tmp_path):
        outcome = _read_with_deadline(path)
        if kind == "a socket":  # a socket cannot be opened at all: refused as an OSError
            assert isinstance(outcome.get("error"), OSError)
            continue
        assert isinstance(outcome.get("error"), NotRegularFileError), kind
        assert kind in str(outcome["error"])


def test_a_read_returns_at_most_one_byte_past_the_limit(tmp_path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"x" * 1000)
    assert read_regular_file(path, 100) == b"x" * 101
    assert read_regular_file(path, 5000) == b"x" * 1000
