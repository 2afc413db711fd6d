"""The arena's unpacker: an uploaded bot pack, from stdin into the working directory, or one line why not.

An upload comes from anyone, so the arena never unpacks one in its own process:
:func:`tournaments.arena.packs.unpack` runs this file as a process of its own, inside the
sandbox where there is one (its folder writable, no network), as
``python -I -S unpacker.py LIMITS``: the standard library only, no site packages, nothing of
nap's. ``LIMITS`` is :meth:`~tournaments.arena.packs.PackLimits.to_json` as JSON. It reads
the pack on stdin and unpacks it into its working directory, which is empty; then it
writes one JSON line on stdout, ``{"files": N, "bytes": N}`` (regular files, their bytes),
and exits 0. A pack it refuses leaves one line on stderr, for the submitter, and exit
status :data:`REFUSED`; anything else (a traceback) is the unpacker's own failure.

A pack is what ``nap bot submit`` makes (:func:`tournaments.plan.versions.pack`): a gzip
tar of regular files, ``nap-bot.toml`` at the top. The tar is read as a stream, member by
member, and refused, in one line each, when it is not gzip, not a tar, truncated or
corrupt; when a member is a link (symbolic or hard), a device, a fifo or anything but a
regular file or a folder; when a path is absolute, holds ``..``, is not UTF-8, is too long
or too deep; when it holds more files and folders than its limit, or more bytes. Bytes are
counted twice: a member's declared size before anything of it is written, and the whole
decompressed stream as it is inflated (headers and what follows the archive's end
included), so a gzip bomb stops at the limit, having written nothing past it. Finally the
top of the pack must hold ``nap-bot.toml`` (at most :data:`MANIFEST_BYTES`).

What it writes stays in its folder: every path is checked before use, it makes no link,
so no path can lead out, and it opens nothing it did not just make (``O_EXCL``,
``O_NOFOLLOW``). Files are 0644, or 0755 when the pack marks them executable; folders
are 0755: never setuid, setgid or sticky. Before it reads a byte it limits itself
(:func:`limit_self`: file size, memory, CPU, open files), which holds with or without a
sandbox.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import resource
import signal
import sys
import tarfile
import traceback
import zlib
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from collections.abc import Mapping

    from _typeshed import WriteableBuffer

MANIFEST = "nap-bot.toml"
"""The manifest a pack must hold at its top (:data:`tournaments.plan.manifest.MANIFEST`: this
file imports nothing of nap's)."""
MANIFEST_BYTES = 64 << 10
"""The largest manifest unpacked: the arena parses it in its own process, and a manifest is a few lines."""
LIMIT_KEYS = ("upload_bytes", "unpacked_bytes", "files", "path_length", "depth")
"""The keys of the ``LIMITS`` argument, each an int (:class:`tournaments.arena.packs.PackLimits`)."""
GZIP_MAGIC = b"\x1f\x8b"
NOT_GZIP = "not a bot pack: it is not gzip-compressed (make it with nap bot submit --arena)"
REFUSED = 65
"""The exit status of a refused pack (``EX_DATAERR``: the input was wrong); its line is on stderr."""
CPU_S = 60
"""The CPU seconds the unpacker may use: a pack within the limits takes well under one."""

_HOW = "(make it with nap bot submit --arena)"
_NOT_TAR = f"not a bot pack: it is gzip-compressed but not a tar archive {_HOW}"
_EMPTY = f"not a bot pack: it is empty {_HOW}"
_TRUNCATED = "not a bot pack: it is truncated (it stops before the end of its archive): upload it again"
_ONLY = "a pack holds regular files and folders only"
_CHUNK = 1 << 16
_HEADERS_PER_MEMBER = 4 * tarfile.BLOCKSIZE
"""A member's tar overhead beside its path: its header, a pax header, the padding of its data."""
_MEMORY_BASE = 256 << 20
"""The unpacker's memory beside what its stream may hold at once (tarfile reads a pax header whole)."""
_OPEN_FILES = 64
_SHOWN = 80
"""The characters of a member's path shown in a line."""


class Refused(Exception):  # noqa: N818 - a verdict on the pack, not a bug
    """The pack is refused; ``str()`` is the one line its submitter reads."""


def size_text(size: int) -> str:
    """``size`` bytes for people: ``16 MiB``, ``20.3 MiB``, ``512 bytes``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            whole = size % (1 << shift) == 0
            return f"{size >> shift} {unit}" if whole else f"{size / (1 << shift):.1f} {unit}"
    return f"{size} byte{'' if size == 1 else 's'}"


def _too_big(limits: Mapping[str, int]) -> str:
    """The line for a pack that unpacks past its byte limit."""
    return f"pack refused: it unpacks to more than {size_text(limits['unpacked_bytes'])} (the arena's limit)"


def _stream_bytes(limits: Mapping[str, int]) -> int:
    """The most the decompressed tar stream may hold: the files' bytes, each member's headers, a record."""
    per_member = _HEADERS_PER_MEMBER + 2 * limits["path_length"]
    return limits["unpacked_bytes"] + (limits["files"] + 1) * per_member + tarfile.RECORDSIZE


def _shown(path: str) -> str:
    """A member's path quoted for a line: control characters escaped, cut to :data:`_SHOWN` characters."""
    return repr(path if len(path) <= _SHOWN else path[:_SHOWN] + "...")


class _Inflated(io.RawIOBase):
    """The upload's decompressed bytes, counted: past ``cap`` in all, or on bad gzip, a :class:`Refused`."""

    def __init__(self, upload: bytes, *, cap: int, over: str) -> None:
        super().__init__()
        self._gzip = gzip.GzipFile(fileobj=io.BytesIO(upload), mode="rb")
        self._cap = cap
        self._over = over
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        try:
            data = self._gzip.read(min(len(view), _CHUNK))
        except gzip.BadGzipFile as exc:  # its magic, its flags, its CRC
            corrupt = f"not a bot pack: its gzip data is corrupt ({exc})"
            raise Refused(NOT_GZIP if self.count == 0 else corrupt) from None
        except zlib.error as exc:
            msg = f"not a bot pack: its gzip data is corrupt ({exc})"
            raise Refused(msg) from None
        except EOFError:
            raise Refused(_TRUNCATED) from None
        self.count += len(data)
        if self.count > self._cap:
            raise Refused(self._over)
        view[: len(data)] = data
        return len(data)


class _Header(tarfile.TarInfo):
    """A tar header whose faults are refusals in one line (tarfile ends the archive quietly at some)."""

    @classmethod
    def fromtarfile(cls, archive: tarfile.TarFile) -> Self:
        try:
            return super().fromtarfile(archive)
        except tarfile.HeaderError as exc:  # tarfile's kinds of header fault are private: named here
            kind = type(exc).__name__
            if kind == "EOFHeaderError":
                raise  # a block of zeros: the archive's end
            if kind in {"EmptyHeaderError", "TruncatedHeaderError"}:
                empty = kind == "EmptyHeaderError" and archive.offset == 0
                raise Refused(_EMPTY if empty else _TRUNCATED) from None
            if archive.offset == 0:
                raise Refused(_NOT_TAR) from None
            msg = f"not a bot pack: its tar data is corrupt at byte {archive.offset} ({exc})"
            raise Refused(msg) from None


class _Folder:
    """What has been unpacked into one folder (open as ``root``), and the rules each new member must pass."""

    def __init__(self, root: int, limits: Mapping[str, int]) -> None:
        self.root = root
        self.limits = limits
        self.files: set[tuple[str, ...]] = set()
        self.folders: set[tuple[str, ...]] = set()
        self.bytes = 0

    def member(self, header: tarfile.TarInfo, archive: tarfile.TarFile) -> None:
        """Unpack one member, or refuse it."""
        name = header.name
        _check_kind(header)
        parts = self.parts(name)
        if not parts:
            return  # the folder itself: "." or "./"
        if (parts in self.folders and not header.isdir()) or (parts in self.files and header.isdir()):
            msg = f"pack refused: {_shown(name)} is both a file and a folder"
            raise Refused(msg)
        if header.isdir():
            self.folder(parts, name)
            return
        if parts in self.files:
            msg = f"pack refused: {_shown(name)} is in the pack twice"
            raise Refused(msg)
        if self.bytes + header.size > self.limits["unpacked_bytes"]:
            raise Refused(_too_big(self.limits))
        if parts == (MANIFEST,) and header.size > MANIFEST_BYTES:
            msg = f"pack refused: its {MANIFEST} is larger than {size_text(MANIFEST_BYTES)}"
            raise Refused(msg)
        self.folder(parts[:-1], name)
        self.count()
        self.write(parts, header, archive)

    def parts(self, name: str) -> tuple[str, ...]:
        """``name``'s parts, "." and empty ones left out; refused if it is not a path inside the folder."""
        if "\0" in name:
            msg = f"pack refused: the name {_shown(name)} holds a NUL byte"
            raise Refused(msg)
        try:
            length = len(name.encode("utf-8"))
        except UnicodeEncodeError:
            msg = f"pack refused: the name {name!a} is not UTF-8"
            raise Refused(msg) from None
        if name.startswith("/"):
            msg = f"pack refused: {_shown(name)} is an absolute path; a pack's paths are in the bot's folder"
            raise Refused(msg)
        parts = tuple(part for part in name.split("/") if part not in {"", "."})
        if ".." in parts:
            msg = f"pack refused: {_shown(name)} leads out of the bot's folder (..)"
            raise Refused(msg)
        if length > self.limits["path_length"]:
            msg = f"pack refused: the path {_shown(name)} is longer than {self.limits['path_length']} bytes"
            raise Refused(msg)
        if len(parts) > self.limits["depth"]:
            msg = f"pack refused: the path {_shown(name)} is deeper than {self.limits['depth']} levels"
            raise Refused(msg)
        return parts

    def count(self) -> None:
        """Refuse one more file or folder past the limit."""
        if len(self.files) + len(self.folders) >= self.limits["files"]:
            limit = self.limits["files"]
            msg = f"pack refused: it holds more than {limit:,} files and folders (the arena's limit)"
            raise Refused(msg)

    def folder(self, parts: tuple[str, ...], name: str) -> None:
        """Make the folder ``parts`` and those above it (mode 0755), unless made already."""
        for end in range(1, len(parts) + 1):
            above = parts[:end]
            if above in self.folders:
                continue
            if above in self.files:
                msg = f"pack refused: {_shown(name)} is inside {_shown('/'.join(above))}, which is a file"
                raise Refused(msg)
            self.count()
            path = _fs(above)
            os.mkdir(path, 0o755, dir_fd=self.root)
            # Exactly 0755 whatever the umask (made just now: not a link); a bot reads its folder.
            os.chmod(path, 0o755, dir_fd=self.root)  # noqa: S103 - a bot's folder: readable, not writable
            self.folders.add(above)

    def write(self, parts: tuple[str, ...], header: tarfile.TarInfo, archive: tarfile.TarFile) -> None:
        """Write a regular file's bytes into a file made for it (0644, or 0755 if marked executable)."""
        mode = 0o755 if header.mode & 0o111 else 0o644
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        descriptor = os.open(_fs(parts), flags, mode, dir_fd=self.root)
        self.files.add(parts)
        self.bytes += header.size
        with os.fdopen(descriptor, "wb") as out:
            os.fchmod(descriptor, mode)
            source = archive.extractfile(header)
            if source is None:  # pragma: no cover - a regular file always has a reader
                return
            while chunk := source.read(_CHUNK):
                out.write(chunk)


def _check_kind(header: tarfile.TarInfo) -> None:
    """Refuse a member that is not a regular file or a folder."""
    name = _shown(header.name)
    if header.issym():
        msg = f"pack refused: {name} is a symbolic link (to {_shown(header.linkname)}); {_ONLY}"
    elif header.islnk():
        msg = f"pack refused: {name} is a hard link (to {_shown(header.linkname)}); {_ONLY}"
    elif header.ischr() or header.isblk():
        msg = f"pack refused: {name} is a device; {_ONLY}"
    elif header.isfifo():
        msg = f"pack refused: {name} is a fifo; {_ONLY}"
    elif header.issparse():
        msg = f"pack refused: {name} is a sparse file; {_ONLY}"
    elif not (header.isreg() or header.isdir()):
        msg = f"pack refused: {name} is not a regular file or folder (tar type {header.type!r}); {_ONLY}"
    else:
        return
    raise Refused(msg)


def _fs(parts: tuple[str, ...]) -> bytes:
    """A checked path's bytes (UTF-8, whatever this process's locale)."""
    return "/".join(parts).encode("utf-8")


def unpack_into(root: str | os.PathLike[str], upload: bytes, limits: Mapping[str, int]) -> tuple[int, int]:
    """Unpack ``upload`` into the empty folder ``root``: its (files, bytes), or :class:`Refused`.

    Refused too when the folder cannot take a member (a name too long for it, say). What
    it unpacked before a refusal stays: the caller empties the folder.
    """
    if len(upload) > limits["upload_bytes"]:
        msg = f"pack refused: it is larger than {size_text(limits['upload_bytes'])} (the arena's limit)"
        raise Refused(msg)
    stream = io.BufferedReader(_Inflated(upload, cap=_stream_bytes(limits), over=_too_big(limits)), _CHUNK)
    descriptor = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    folder = _Folder(descriptor, limits)
    try:
        with tarfile.open(fileobj=stream, mode="r|", tarinfo=_Header, encoding="utf-8") as archive:
            _unpack_members(archive, folder)
    except tarfile.ReadError as exc:
        said = str(exc)
        msg = _TRUNCATED if "unexpected end" in said else f"not a bot pack: its tar data is corrupt ({said})"
        raise Refused(msg) from None
    except OSError as exc:
        msg = f"pack refused: it cannot be unpacked ({exc.strerror or exc})"
        raise Refused(msg) from None
    finally:
        os.close(descriptor)
    if (MANIFEST,) not in folder.files:
        below = sorted("/".join(parts) for parts in folder.files if parts[-1] == MANIFEST and len(parts) == 2)
        hint = f" (it holds {below[0]}: pack the folder's content, not the folder)" if below else ""
        msg = f"not a bot pack: there is no {MANIFEST} at its top{hint}"
        raise Refused(msg)
    return len(folder.files), folder.bytes


def _unpack_members(archive: tarfile.TarFile, folder: _Folder) -> None:
    """Every member in turn, then the stream's end: nothing but zeros may follow the archive's end."""
    while (header := archive.next()) is not None:
        folder.member(header, archive)
    rest = archive.fileobj
    if rest is None:  # pragma: no cover - an open archive has its stream
        return
    while chunk := rest.read(_CHUNK):
        if chunk.count(0) != len(chunk):
            msg = "not a bot pack: data follows the end of its tar archive"
            raise Refused(msg)


def limit_self(limits: Mapping[str, int]) -> None:
    """Cap this process (and only lower its caps): file size, memory, CPU, open files, no core file.

    The file size cap is the unpacked limit (a write past it fails instead of killing the
    process); memory is what the largest stream needs; CPU is :data:`CPU_S` seconds.
    """
    caps = (
        (resource.RLIMIT_FSIZE, limits["unpacked_bytes"]),
        (resource.RLIMIT_DATA, _MEMORY_BASE + 3 * _stream_bytes(limits)),
        (resource.RLIMIT_CPU, CPU_S),
        (resource.RLIMIT_NOFILE, _OPEN_FILES),
        (resource.RLIMIT_CORE, 0),
    )
    for kind, cap in caps:
        _, hard = resource.getrlimit(kind)
        value = cap if hard == resource.RLIM_INFINITY else min(cap, hard)
        resource.setrlimit(kind, (value, value))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def read_limits(argument: str) -> dict[str, int]:
    """The ``LIMITS`` argument: a JSON object of positive ints under :data:`LIMIT_KEYS`; ValueError if not."""
    data = json.loads(argument)
    if not isinstance(data, dict) or sorted(data) != sorted(LIMIT_KEYS):
        msg = f"LIMITS must be a JSON object with the keys {', '.join(LIMIT_KEYS)}"
        raise ValueError(msg)
    if not all(isinstance(value, int) and value > 0 for value in data.values()):
        msg = "every limit must be a positive integer"
        raise ValueError(msg)
    return {key: int(value) for key, value in data.items()}


def main(argv: list[str]) -> int:
    """Unpack stdin into the working directory under the limits in ``argv``; the exit status."""
    limits = read_limits(argv[0])
    limit_self(limits)
    upload = sys.stdin.buffer.read(limits["upload_bytes"] + 1)
    try:
        files, size = unpack_into(".", upload, limits)
    except Refused as exc:
        sys.stderr.write(f"{exc}\n")
        return REFUSED
    sys.stdout.write(json.dumps({"files": files, "bytes": size}) + "\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception:  # noqa: BLE001 - the unpacker's own failure: its traceback, for the arena's log
        traceback.print_exc()
        sys.exit(1)
