"""Atomic writes and safe reads against special files: a write never replaces something
that is not a regular file, a symbolic link is followed (a loop is refused), the temporary
file is a new one that nothing placed beforehand can stand in for, the file written keeps
the permissions of the one it replaces, and a read of a FIFO or device is refused at once
instead of blocking."""

from __future__ import annotations

import fnmatch
import os
import stat
import threading

import pytest

from catena_zero.data import atomic
from catena_zero.data.atomic import (
    NotRegularFileError,
    atomic_open,
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


def _write_with_deadline(path, text: str, seconds: float = 5.0) -> dict:
    """atomic_write_text in a thread; fails the test if it blocks past `seconds` (a FIFO
    opened for writing waits for a reader: one is opened here to let the thread go)."""
    outcome: dict = {}

    def write() -> None:
        try:
            atomic_write_text(path, text)
        except Exception as error:  # noqa: BLE001 - handed back to the test
            outcome["error"] = error

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        for fifo in path.parent.iterdir():
            if stat.S_ISFIFO(os.lstat(fifo).st_mode):
                os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        thread.join(seconds)
        pytest.fail(f"writing {path} blocked on a FIFO at a temporary name")
    return outcome


def _traps(path) -> dict:
    """A FIFO and symbolic links at the temporary names a writer could guess: the process
    id's and the `tmp-` prefix's; each link points at a file that must stay as it is."""
    victim = path.parent / "victim"
    victim.write_text("keep me")
    fifo = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    os.mkfifo(fifo)
    links = [path.with_name(f"tmp-{path.name}"),
             path.with_name(f"{path.stem}.tmp-{os.getpid()}{path.suffix}")]
    for link in links:
        link.symlink_to(victim)
    return {"fifo": fifo, "links": links, "victim": victim}


def _untouched(traps: dict) -> None:
    assert stat.S_ISFIFO(os.lstat(traps["fifo"]).st_mode)
    for link in traps["links"]:
        assert link.is_symlink() and os.readlink(link) == str(traps["victim"])
    assert traps["victim"].read_text() == "keep me"


def test_a_fifo_or_a_link_at_a_guessable_temporary_name_is_never_used(tmp_path) -> None:
    path = tmp_path / "game.sgf"
    traps = _traps(path)
    assert _write_with_deadline(path, "(;GM[1])") == {}
    assert path.read_text() == "(;GM[1])" and not path.is_symlink()
    _untouched(traps)


def test_a_taken_random_name_is_passed_over(tmp_path, monkeypatch) -> None:
    path = tmp_path / "ratings.json"
    taken = path.with_name(f"{path.name}.tmp-taken")
    os.mkfifo(taken)
    linked = path.with_name(f"{path.name}.tmp-linked")
    linked.symlink_to(tmp_path / "elsewhere")
    tokens = iter(["taken", "linked", "free"])
    monkeypatch.setattr(atomic, "_temporary_token", lambda: next(tokens))
    assert _write_with_deadline(path, "{}") == {}
    assert path.read_text() == "{}"
    assert stat.S_ISFIFO(os.lstat(taken).st_mode) and linked.is_symlink()
    assert not (tmp_path / "elsewhere").exists()
    assert sorted(os.listdir(tmp_path)) == ["ratings.json", "ratings.json.tmp-linked",
                                            "ratings.json.tmp-taken"]


def test_the_temporary_file_is_new_random_and_marked_for_readers_to_skip(tmp_path) -> None:
    path = tmp_path / "shard.npz"
    names = []
    for _ in range(2):
        with atomic_open(path) as handle:
            handle.write(b"data")
            (temporary,) = [name for name in os.listdir(tmp_path) if name != "shard.npz"]
            names.append(temporary)
            assert fnmatch.fnmatch(temporary, "shard.npz.tmp-*")
            assert str(os.getpid()) not in temporary.split(".tmp-")[1]
    assert names[0] != names[1] and os.listdir(tmp_path) == ["shard.npz"]


def test_a_failed_write_leaves_no_temporary_file_and_the_old_file(tmp_path) -> None:
    path = tmp_path / "atlas.json"
    path.write_text("old")
    with pytest.raises(RuntimeError), atomic_open(path) as handle:
        handle.write(b"half")
        raise RuntimeError("stopped")
    assert os.listdir(tmp_path) == ["atlas.json"] and path.read_text() == "old"


@pytest.mark.parametrize("mode", [0o000, 0o600, 0o640, 0o444, 0o755], ids=oct)
def test_a_save_keeps_the_mode_of_the_file_it_replaces(tmp_path, mode) -> None:
    path = tmp_path / "model.pt"
    path.write_text("old")
    os.chmod(path, mode)
    atomic_write_text(path, "new")
    assert stat.S_IMODE(os.stat(path).st_mode) == mode
    os.chmod(path, 0o600)
    assert path.read_text() == "new"


def test_a_save_through_a_link_keeps_the_mode_of_its_target(tmp_path) -> None:
    target = tmp_path / "real.json"
    target.write_text("old")
    os.chmod(target, 0o600)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    atomic_write_text(link, "new")
    assert link.is_symlink() and target.read_text() == "new"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002], ids=oct)
def test_a_new_file_gets_the_umask_s_mode(tmp_path, umask) -> None:
    previous = os.umask(umask)
    try:
        atomic_write_text(tmp_path / "new.txt", "made")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(tmp_path / "new.txt").st_mode) == 0o666 & ~umask


def test_a_symbolic_link_loop_is_refused_and_left_as_it_was(tmp_path) -> None:
    first, second, itself = tmp_path / "first", tmp_path / "second", tmp_path / "itself"
    first.symlink_to(second)
    second.symlink_to(first)
    itself.symlink_to(itself)
    for path in (first, itself):
        with pytest.raises(NotRegularFileError) as caught:
            atomic_write_text(path, "data")
        assert str(caught.value) == f"{path} is not a regular file (a symbolic link loop)"
    assert all(link.is_symlink() for link in (first, second, itself))
    assert sorted(os.listdir(tmp_path)) == ["first", "itself", "second"]
