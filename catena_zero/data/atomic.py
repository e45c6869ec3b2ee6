"""Atomic file writes and safe reads of files a person names.

Every file another process may read is written to a new temporary file beside it,
`<name>.tmp-<random token>`, fsynced, then renamed over its final name, so a reader sees the
old file or the new one, never half of one. Readers ignore `*.tmp-*` names (see
`list_shards`). The temporary file is created exclusively (O_CREAT | O_EXCL | O_NOFOLLOW): a
FIFO, a symbolic link or any file already at a name is never opened, followed or replaced;
another random name is tried instead. The file written keeps the permissions of the file it
replaces (a new file gets 0o666 less the umask, as `open` would give it).

A rename replaces whatever the name pointed at, so a target that exists and is not a regular
file (a directory, a FIFO, a device such as /dev/null, a socket, a symbolic link loop) is
refused before anything is written. A symbolic link is followed: its final target is the
file written (and refused in the same way when it is not a regular file). Reads of a named
file open it without blocking and refuse anything but a regular file, so a FIFO cannot hang
the reader.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


class NotRegularFileError(OSError):
    """A path that names something other than a regular file where one is needed."""

    def __init__(self, path: str | os.PathLike, kind: str):
        super().__init__(errno.EINVAL, f"not a regular file ({kind})", str(path))
        self.kind = kind  # "a FIFO", "a directory", ...

    def __str__(self) -> str:
        return f"{self.filename} is {self.strerror}"


def file_kind(mode: int) -> str:
    """'a directory', 'a FIFO', ... for a st_mode that is not a regular file's."""
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return "not a regular file"


def write_target(path: str | os.PathLike) -> Path:
    """The file a write to `path` replaces: `path` itself, or the final target of a symbolic
    link. NotRegularFileError if that exists and is not a regular file, or if the link is a
    loop (it has no final target)."""
    path = Path(path)
    target = _link_target(path) if path.is_symlink() else path
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError:
        mode = None  # unreachable parents etc.: the write itself says why
    if mode is not None and not stat.S_ISREG(mode):
        raise NotRegularFileError(path, file_kind(mode))
    if not target.name or target.name in (".", ".."):
        raise NotRegularFileError(path, "a directory")
    return target


def _link_target(link: Path) -> Path:
    """The final target of the symbolic link `link` (which need not exist yet)."""
    try:
        return Path(os.path.realpath(link, strict=True))
    except FileNotFoundError:  # a dangling link: the write makes its target
        return Path(os.path.realpath(link))
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise NotRegularFileError(link, "a symbolic link loop") from None
        return Path(os.path.realpath(link))  # the write itself says why


TEMPORARY_MARKER = ".tmp-"  # `<name>.tmp-<token>`: what readers and cleanups pass over
_CREATE_TRIES = 100


def _temporary_token() -> str:
    return secrets.token_hex(8)


def _create_temporary(path: Path, mode: int) -> tuple[int, Path]:
    """A new, empty file `<name>.tmp-<random token>` beside `path`, opened for writing, made
    by this call (never a file, FIFO or link that was there): (descriptor, its path)."""
    flags = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0))
    for _ in range(_CREATE_TRIES):
        temporary = path.with_name(f"{path.name}{TEMPORARY_MARKER}{_temporary_token()}")
        try:
            return os.open(temporary, flags, mode), temporary
        except FileExistsError:
            continue  # something is there already: leave it alone, draw another name
    raise FileExistsError(errno.EEXIST, f"no free temporary name after {_CREATE_TRIES} tries",
                          str(path))


def _replaced_mode(path: Path) -> int | None:
    """The permission bits of the regular file at `path`, None when there is none."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return stat.S_IMODE(status.st_mode) & 0o777 if stat.S_ISREG(status.st_mode) else None


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary handle whose contents replace `path` atomically when the block ends without
    an exception (parent directories are created); on an exception `path` is untouched.
    NotRegularFileError, before anything is written, when `path` (or the target of a
    symbolic link there) exists and is not a regular file. The file written keeps the
    permissions of the file it replaces; a new one gets 0o666 less the umask."""
    path = write_target(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _replaced_mode(path)
    # A new file: the kernel applies the umask to 0o666, as for open(). A replacement: the
    # temporary file stays private to its owner until it is given the old file's bits.
    descriptor, temporary = _create_temporary(path, 0o666 if mode is None else 0o600)
    renamed = False
    try:
        with os.fdopen(descriptor, "wb") as handle:
            yield handle
            handle.flush()
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        try:
            os.replace(temporary, path)
        except OSError as error:  # name the file asked for, not the temporary one
            raise OSError(error.errno, error.strerror, str(path)) from None
        renamed = True
    finally:
        if not renamed:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    with atomic_open(path) as handle:
        handle.write(data)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def read_regular_file(path: str | os.PathLike, max_bytes: int | None = None) -> bytes:
    """The bytes of the regular file at `path`: with `max_bytes`, at most `max_bytes + 1`
    (so a caller can tell a file that is too large). Refused as by `open_regular_file`."""
    with open_regular_file(path) as handle:
        return handle.read() if max_bytes is None else handle.read(max_bytes + 1)


@contextlib.contextmanager
def open_regular_file(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A buffered binary handle for reading the regular file at `path`. Anything but a
    regular file (a FIFO, a device, a directory, a socket) is refused with
    NotRegularFileError before it is opened for reading; the open does not block either and
    is checked again, in case the file was swapped between the two looks. Other failures are
    OSError (FileNotFoundError when there is no file)."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise NotRegularFileError(path, file_kind(mode))
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(path, file_kind(mode))
        os.set_blocking(descriptor, True)
        handle = os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise
    with handle:
        yield handle
