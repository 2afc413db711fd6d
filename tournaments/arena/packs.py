"""Uploaded bot packs: checked cheaply in the arena's process, unpacked only in a process of their own.

A pack is what ``nap bot submit`` makes (:func:`tournaments.plan.versions.pack`): a gzip
tar of a bot's folder. An upload comes from anyone, so the arena takes it in two steps:

1. :func:`check_upload`, in the server's process, reads no more than the upload's length
   and first bytes: within :attr:`PackLimits.upload_bytes`, gzip-compressed. It never
   decompresses.
2. :func:`unpack` runs the standalone :mod:`tournaments.arena.unpacker` as a process of
   its own, inside the sandbox where there is one (bubblewrap: the target folder writable,
   nothing else, no network, the sandbox's memory, process and file limits), else as a
   plain process; either way the unpacker caps its own file size, memory and CPU before it
   reads a byte, and a wall clock (:data:`UNPACK_TIMEOUT_S`) ends one that hangs. It streams
   the tar and refuses, in one line, anything but regular files and folders inside the
   folder, within the limits (links, devices, ``..``, gzip bombs: see its docstring). The
   arena then walks what it left, without following a link, before reading any of it.

Then the arena reads its ``nap-bot.toml`` (:func:`tournaments.plan.manifest.read_manifest`:
at most :data:`~tournaments.arena.unpacker.MANIFEST_BYTES`), and
:func:`tournaments.plan.manifest.content_hash` of the folder is the version's hash: the
round trip pack -> unpack is exact. Every refusal is a :class:`PackError`, whose ``str()``
is the line its submitter reads.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tournaments.arena import unpacker
from tournaments.errors import ArenaError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from tournaments.play.sandbox import Sandbox

__all__ = [
    "UNPACKER",
    "UNPACK_TIMEOUT_S",
    "PackError",
    "PackLimits",
    "PackTooLargeError",
    "UnpackReport",
    "check_upload",
    "unpack",
]

UNPACKER = Path(unpacker.__file__).resolve()
"""The unpacker's script, run as ``python -I -S UNPACKER LIMITS`` in the target folder."""
_UNPACKER_INSIDE = "/run/nap/unpacker.py"
"""Where the sandbox shows the unpacker's script, read-only (beside its init script)."""
UNPACK_TIMEOUT_S = 120.0
"""The wall clock after which a hung unpacker is killed: a pack within the limits takes a second or two."""
_FILE_MODES = frozenset({0o644, 0o755})
_FOLDER_MODE = 0o755


class PackError(ArenaError):
    """An upload refused as a bot pack; ``str()`` is one line for its submitter.

    ``log`` is what the unpacker wrote when it failed on its own (not a verdict on the
    pack): for the organiser, not the submitter.
    """

    def __init__(self, message: str, *, log: str = "") -> None:
        super().__init__(message)
        self.log = log


class PackTooLargeError(PackError):
    """An upload over :attr:`PackLimits.upload_bytes` (HTTP 413): refused before anything of it is read."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PackLimits:
    """How large an uploaded pack may be, packed and unpacked; the arena's settings keep one.

    - ``upload_bytes``: the upload itself, compressed (16 MiB);
    - ``unpacked_bytes``: its files' bytes once unpacked (64 MiB), counted as the stream
      is inflated, so a gzip bomb stops there;
    - ``files``: the files and folders it may hold (5,000; a Node.js bot's ``node_modules``
      counts, as the pack holds it);
    - ``path_length``: a path in the pack, in UTF-8 bytes (256);
    - ``depth``: a path's parts, its file's name included (32: ``a/b/c.py`` has 3).
    """

    upload_bytes: int = 16 << 20
    unpacked_bytes: int = 64 << 20
    files: int = 5000
    path_length: int = 256
    depth: int = 32

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                msg = f"pack limit {field.name} must be a positive integer, got {value!r}"
                raise ArenaError(msg)

    def to_json(self) -> dict[str, int]:
        """JSON-ready data: as the arena's settings store it, and the unpacker's ``LIMITS`` argument."""
        return {field.name: getattr(self, field.name) for field in fields(self)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> PackLimits:
        """Read :meth:`to_json`'s data; a missing key takes the default, an unknown one is refused."""
        known = {field.name for field in fields(cls)}
        for key in data or {}:
            if key not in known:
                msg = f"unknown pack limit {key!r} (known: {', '.join(sorted(known))})"
                raise ArenaError(msg)
        return cls(**{key: int(value) for key, value in (data or {}).items()})


@dataclass(frozen=True, slots=True, kw_only=True)
class UnpackReport:
    """What a pack unpacked to: its regular files, and their bytes."""

    files: int
    bytes: int


def check_upload(data: bytes, *, limits: PackLimits) -> None:
    """Refuse an upload that cannot be a pack, from its length and first bytes only: never decompressed.

    Raises :class:`PackTooLargeError` over the size limit, :class:`PackError` when it is
    empty or not gzip-compressed.
    """
    if len(data) > limits.upload_bytes:
        size, limit = unpacker.size_text(len(data)), unpacker.size_text(limits.upload_bytes)
        msg = f"pack refused: it is {size}, over the arena's limit of {limit}"
        raise PackTooLargeError(msg)
    if not data:
        msg = "not a bot pack: the upload is empty (make it with nap bot submit --arena)"
        raise PackError(msg)
    if not data.startswith(unpacker.GZIP_MAGIC):
        raise PackError(unpacker.NOT_GZIP)


def unpack(
    data: bytes,
    *,
    into: Path,
    limits: PackLimits,
    sandbox: Sandbox | None,
    timeout_s: float = UNPACK_TIMEOUT_S,
) -> UnpackReport:
    """Unpack the pack ``data`` into the empty folder ``into`` (made if absent), in a process of its own.

    Inside ``sandbox`` when one is given (its folder writable, no network), else as a
    plain process. Raises :class:`PackError` (one line) when the pack is refused, the
    unpacker fails or takes longer than ``timeout_s``; the folder is then left empty (or not
    made, when the upload is refused before unpacking).
    ValueError when ``into`` is not empty (the caller's mistake, not the pack's).
    """
    check_upload(data, limits=limits)
    into.mkdir(mode=_FOLDER_MODE, parents=True, exist_ok=True)
    if any(into.iterdir()):
        msg = f"{into} is not empty: a pack is unpacked into an empty folder"
        raise ValueError(msg)
    try:
        return _run_unpacker(data, into=into, limits=limits, sandbox=sandbox, timeout_s=timeout_s)
    except BaseException:
        _empty(into)
        raise


def _run_unpacker(
    data: bytes, *, into: Path, limits: PackLimits, sandbox: Sandbox | None, timeout_s: float
) -> UnpackReport:
    """Run the unpacker on ``data`` in ``into``; what it unpacked, checked by a walk of the folder."""
    argument = json.dumps(limits.to_json())
    env: dict[str, str] = {}
    cwd: Path | None = into
    if sandbox is None:
        argv = [sys.executable, "-I", "-S", str(UNPACKER), argument]
    else:
        command = [sys.executable, "-I", "-S", _UNPACKER_INSIDE, argument]
        argv, env = sandbox.build(
            command, name="upload", folder=into, network=False, tools={_UNPACKER_INSIDE: UNPACKER}
        )
        cwd = None
    try:
        done = subprocess.run(  # noqa: S603 - our own unpacker, no shell; the pack goes in on stdin
            argv, input=data, capture_output=True, cwd=cwd, env=env, timeout=timeout_s, check=False
        )
    except subprocess.TimeoutExpired:
        msg = f"pack refused: unpacking it took longer than {timeout_s:g} s"
        raise PackError(msg) from None
    said = done.stderr.decode("utf-8", "replace").strip()
    last = said.splitlines()[-1] if said else ""
    if done.returncode == unpacker.REFUSED and last:
        raise PackError(last)
    if done.returncode == -signal.SIGXCPU:
        msg = f"pack refused: unpacking it took more than {unpacker.CPU_S} s of CPU"
        raise PackError(msg, log=said)
    if done.returncode != 0:
        why = _killed(-done.returncode) if done.returncode < 0 else last or f"status {done.returncode}"
        msg = f"the arena could not unpack it ({why}); tell the organiser"
        raise PackError(msg, log=said)
    found = _walk(into)
    try:
        told = json.loads(done.stdout)
        reported = UnpackReport(files=int(told["files"]), bytes=int(told["bytes"]))
    except (ValueError, KeyError, TypeError):
        reported = None
    if reported != found:
        msg = "the arena could not unpack it (its unpacker's count is not the folder's); tell the organiser"
        raise PackError(msg, log=f"{done.stdout!r}\n{said}")
    return found


def _walk(folder: Path) -> UnpackReport:
    """Count the regular files under ``folder`` and their bytes, never following a link.

    Anything the unpacker never makes (a link, a device, another mode) means it did not do
    its work: refused, before the arena reads a byte of it.
    """
    files = size = 0
    pending = [folder]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                info = entry.stat(follow_symlinks=False)
                mode = stat.S_IMODE(info.st_mode)
                if stat.S_ISDIR(info.st_mode) and mode == _FOLDER_MODE:
                    pending.append(Path(entry.path))
                elif stat.S_ISREG(info.st_mode) and mode in _FILE_MODES:
                    files += 1
                    size += info.st_size
                else:
                    relative = Path(entry.path).relative_to(folder)
                    msg = (
                        f"the arena could not unpack it (its unpacker left {str(relative)!r}, "
                        f"mode {info.st_mode:o}, which it never makes); tell the organiser"
                    )
                    raise PackError(msg)
    return UnpackReport(files=files, bytes=size)


def _killed(number: int) -> str:
    """``killed by SIGKILL``: a signal's name where it has one."""
    try:
        return f"killed by {signal.Signals(number).name}"
    except ValueError:
        return f"killed by signal {number}"


def _empty(folder: Path) -> None:
    """Remove everything in ``folder`` (which the unpacker filled), never following a link."""
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
