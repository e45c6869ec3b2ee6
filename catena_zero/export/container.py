"""The zip container of model files: a bounded reader that never inflates, and the writer.

    members = [("catena_model.json", text_bytes), ("weights.safetensors", weight_bytes)]
    data = write_archive(members)               # bytes of a zip of stored members
    archive = read_archive(data)                 # ArchiveError if truncated or corrupt
    archive.names(), archive.read("catena_model.json")   # CRC-checked bytes

`zipfile` is not used to read: it decodes names with fallbacks that raise UnicodeDecodeError,
trusts declared sizes and inflates whatever a member claims to be. This reader takes the
whole file as bytes (the caller bounds their length), parses the end record and the central
directory with every offset checked against the data, accepts only stored (uncompressed)
members, so nothing is ever inflated and no declared size can exceed the file, refuses
overlapping members and members whose local header disagrees with the central directory,
and checks the CRC-32 of every member before any of it is used.

The archives torch writes (the format-1 model files) are read too: they mark sizes in a
data descriptor (flag bit 3), pad local headers with extra fields and put a zip64 end record
before the end record; none of that needs zip64 offsets, which are refused.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

LOCAL_SIGNATURE = b"PK\x03\x04"
CENTRAL_SIGNATURE = b"PK\x01\x02"
END_SIGNATURE = b"PK\x05\x06"
ZIP64_END_SIGNATURE = b"PK\x06\x06"
ZIP64_LOCATOR_SIGNATURE = b"PK\x06\x07"
END_SIZE = 22
LOCAL_SIZE = 30
CENTRAL_SIZE = 46
ZIP64_TRAILER_SIZE = 56 + 20  # zip64 end record (no extensible data) + its locator
MAX_COMMENT = 0xFFFF
FLAG_ENCRYPTED = 0x1
FLAG_DATA_DESCRIPTOR = 0x8
STORED = 0
# Fixed member times keep the bytes of a file a function of its contents.
MEMBER_TIME = (1980, 1, 1, 0, 0, 0)


class ArchiveError(ValueError):
    """The bytes are not a readable archive; the message says why (without the file name)."""


@dataclass(frozen=True)
class Member:
    """One stored member: its data lies at data[offset : offset + size]."""

    name: str
    header_offset: int  # where its local header starts
    offset: int  # where its data starts
    size: int  # bytes of data (stored: compressed size == size)
    crc: int  # CRC-32 of the data, from the central directory


class Archive:
    """A parsed archive over `data`: member names in file order and CRC-checked reads."""

    def __init__(self, data: bytes, members: list[Member]) -> None:
        self._data = data
        self._members = {member.name: member for member in members}

    def names(self) -> list[str]:
        return list(self._members)

    def __contains__(self, name: str) -> bool:
        return name in self._members

    def size(self, name: str) -> int:
        return self._members[name].size

    def read(self, name: str) -> bytes:
        """The member's bytes; ArchiveError when its CRC does not match."""
        member = self._members[name]
        data = self._data[member.offset: member.offset + member.size]
        if zlib.crc32(data) != member.crc:
            raise ArchiveError(f"is corrupt (bad CRC in member {name})")
        return data

    def check_all(self) -> None:
        """Check every member's CRC (a flipped byte anywhere in the data is found)."""
        for name in self._members:
            self.read(name)


def _unpack(layout: str, data: bytes, offset: int, what: str) -> tuple:
    """struct.unpack_from that reports running off the data as a truncated archive."""
    if offset < 0 or offset + struct.calcsize(layout) > len(data):
        raise ArchiveError(f"is truncated or corrupt ({what} lies outside the file)")
    return struct.unpack_from(layout, data, offset)


def _find_end_record(data: bytes) -> int:
    """Offset of the end-of-central-directory record, which must end the data exactly."""
    earliest = max(0, len(data) - END_SIZE - MAX_COMMENT)
    stop = len(data) - END_SIZE + len(END_SIGNATURE)  # a record starts at <= len - 22
    while (position := data.rfind(END_SIGNATURE, earliest, stop)) >= 0:
        (comment_length,) = struct.unpack_from("<H", data, position + 20)
        if position + END_SIZE + comment_length == len(data):
            return position
        stop = position + len(END_SIGNATURE) - 1  # look further back
    if data.startswith(LOCAL_SIGNATURE):
        raise ArchiveError(f"is truncated (its zip end record is missing; {len(data)} bytes)")
    raise ArchiveError("is truncated or not a model archive (it is not a zip archive)")


def read_archive(data: bytes, max_members: int = 4096) -> Archive:
    """Parse `data` as a zip of stored members; ArchiveError naming the first problem."""
    end = _find_end_record(data)
    (_, disk, cd_disk, disk_entries, entries, cd_size, cd_offset,
     _) = _unpack("<4sHHHHIIH", data, end, "the end record")
    if 0xFFFF in (disk_entries, entries) or 0xFFFFFFFF in (cd_size, cd_offset):
        raise ArchiveError("is corrupt or too large (zip64 archives are not model files)")
    if disk != 0 or cd_disk != 0 or disk_entries != entries:
        raise ArchiveError("is corrupt (its end record describes a multi-part archive)")
    if entries > max_members:
        raise ArchiveError(f"is not a model archive ({entries} members, at most "
                           f"{max_members} allowed)")
    cd_end = cd_offset + cd_size
    trailer = end - cd_end
    if not (trailer == 0 or (trailer == ZIP64_TRAILER_SIZE
                             and data[cd_end: cd_end + 4] == ZIP64_END_SIGNATURE
                             and data[end - 20: end - 16] == ZIP64_LOCATOR_SIGNATURE)):
        raise ArchiveError("is truncated or corrupt (its central directory does not end "
                           "where the end record says)")
    members = []
    position = cd_offset
    for _ in range(entries):
        member, position = _central_entry(data, position, cd_end)
        members.append(member)
    if position != cd_end:
        raise ArchiveError("is corrupt (its central directory has bytes after the last entry)")
    names = [member.name for member in members]
    if len(set(names)) != len(names):
        raise ArchiveError("is corrupt (a member name appears twice)")
    _check_layout(members, cd_offset)
    return Archive(data, members)


def _central_entry(data: bytes, position: int, cd_end: int) -> tuple[Member, int]:
    """The member described at `position` of the central directory, and the next position."""
    (signature, _, needed, flags, method, time, date, crc, compressed, size, name_length,
     extra_length, comment_length, disk_start, _, _, header_offset) = _unpack(
        "<4sHHHHHHIIIHHHHHII", data, position, "a central directory entry")
    if signature != CENTRAL_SIGNATURE:
        raise ArchiveError("is corrupt (a central directory entry has no signature)")
    name_start = position + CENTRAL_SIZE
    following = name_start + name_length + extra_length + comment_length
    if following > cd_end:
        raise ArchiveError("is corrupt (a central directory entry runs past the directory)")
    name = _decode_name(data[name_start: name_start + name_length])
    if disk_start != 0:
        raise ArchiveError(f"is corrupt (member {name} starts on disk {disk_start})")
    if flags & FLAG_ENCRYPTED:
        raise ArchiveError(f"is not a model archive (member {name} is encrypted)")
    if method != STORED or compressed != size:
        raise ArchiveError(f"is not a model archive (member {name} is compressed; model "
                           "files store members uncompressed)")
    (local_signature, local_needed, local_flags, local_method, local_time, local_date,
     local_crc, local_compressed, local_size, local_name_length, local_extra_length) = _unpack(
        "<4sHHHHHIIIHH", data, header_offset, f"the local header of member {name}")
    local_name_start = header_offset + LOCAL_SIZE
    local_name = data[local_name_start: local_name_start + local_name_length]
    # Every field the two copies share must agree, so a flipped byte in either is found.
    agrees = (local_signature == LOCAL_SIGNATURE
              and (local_needed, local_flags, local_method, local_time, local_date)
              == (needed, flags, method, time, date)
              and local_name == data[name_start: name_start + name_length])
    if not flags & FLAG_DATA_DESCRIPTOR:  # otherwise the local sizes and CRC are zero
        agrees = agrees and (local_crc, local_compressed, local_size) == (crc, compressed, size)
    if not agrees:
        raise ArchiveError(f"is corrupt (the local header of member {name} disagrees with "
                           "the central directory)")
    offset = local_name_start + local_name_length + local_extra_length
    return Member(name, header_offset, offset, size, crc), following


def _decode_name(raw: bytes) -> str:
    try:
        name = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ArchiveError(f"is corrupt (member name {raw!r} is not valid UTF-8)") from None
    if not name or "\x00" in name:
        raise ArchiveError(f"is corrupt (member name {name!r} is empty or holds NUL)")
    return name


def _check_layout(members: list[Member], cd_offset: int) -> None:
    """Members start at 0, follow one another without overlapping, and end before the
    central directory (so no member can be read twice or reach into another's bytes)."""
    previous_end = 0
    for member in sorted(members, key=lambda item: item.header_offset):
        if member.header_offset < previous_end:
            raise ArchiveError(f"is corrupt (member {member.name} overlaps another member)")
        if not previous_end and member.header_offset != 0:
            raise ArchiveError("is corrupt (it has bytes before its first member)")
        previous_end = member.offset + member.size
        if previous_end > cd_offset:
            raise ArchiveError(f"is truncated or corrupt (member {member.name} runs into "
                               "the central directory)")


def write_archive(members: Iterable[tuple[str, bytes]]) -> bytes:
    """A zip of the members, stored in order (what `read_archive` reads)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=MEMBER_TIME)
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()
