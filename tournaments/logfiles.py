"""Per-session log files: one gzip-compressed JSON document per session.

A log sits at ``<logs_root>/t<tournament>/b<block>-r<rotation>.json.gz`` and holds::

    {
      "format": "nap-session-log",       # always this string
      "version": 1,                       # LOG_VERSION; readers refuse a newer one
      "tournament": 3, "block": 12, "rotation": 1,
      "board_seed": 8812734,
      "profile": "heather",
      "bots": [{"seat": 0, "bot": "greedy"}, ...],
      "record": {...},                    # the rules engine's session record
      "decisions": [[{"action": "bid:three", "seat": 1, "latency_ms": 0.8}, ...], ...],
      "faults": [{"kind": "late", "bot": ..., "seat": ..., "deal": ..., ...}, ...],
      "result": {...}                     # seat balances and win shares
    }

This module owns the file mechanics only: the path, the header (``format``, ``version``
and the session key, which :func:`write_log` fills in), compression and atomicity. The
rest of the payload is the caller's and is written as given. ``docs/logs.md`` describes
every field for people reading logs.

A log is written to a temporary file in the same folder, flushed to disk and renamed over
the final path, so a crash never leaves a half-written log under the final name. A log
written before a crash but never committed to the store is simply overwritten when the
session is replayed on resume: the store, not the presence of a file, says what counted.
The writer holds an advisory lock (``flock``) on its temporary file until the rename, so
:func:`remove_temporaries` deletes only what a dead writer left, never a live one's file.
"""

from __future__ import annotations

import fcntl
import gzip
import io
import json
import os
import tempfile
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

LOG_FORMAT = "nap-session-log"
LOG_VERSION = 1
"""The log format version this code writes and the highest it reads."""


class LogError(Exception):
    """A session log that cannot be written or read; ``str()`` is one clear line."""


def log_path(root: Path, *, tournament: int, block: int, rotation: int) -> Path:
    """Where the log of one session lives under ``root``."""
    return root / f"t{tournament}" / f"b{block}-r{rotation}.json.gz"


def _document(
    payload: Mapping[str, object], *, tournament: int, block: int, rotation: int
) -> dict[str, object]:
    header: dict[str, object] = {
        "format": LOG_FORMAT,
        "version": LOG_VERSION,
        "tournament": tournament,
        "block": block,
        "rotation": rotation,
    }
    for key, value in header.items():
        if key in payload and payload[key] != value:
            msg = f"payload has {key}={payload[key]!r}, the log is for {key}={value!r}"
            raise LogError(msg)
    return header | dict(payload)


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def encode_log(payload: Mapping[str, object], *, tournament: int, block: int, rotation: int) -> bytes:
    """One session's log file as bytes (gzip JSON, header filled in), ready for :func:`write_encoded_log`.

    A worker elsewhere (a Ray worker) encodes the log where the session was played and
    sends these bytes to the runner, which alone writes files; a payload that disagrees
    with the header is a LogError.
    """
    document = _document(payload, tournament=tournament, block=block, rotation=rotation)
    try:
        data = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()
    except (TypeError, ValueError) as exc:
        name = log_path(Path(), tournament=tournament, block=block, rotation=rotation).name
        msg = f"cannot write {name}: payload is not JSON: {exc}"
        raise LogError(msg) from exc
    buffer = io.BytesIO()
    # mtime=0 keeps the bytes a function of the content alone.
    with gzip.GzipFile(
        filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=6
    ) as gz:  # 9 costs twice the CPU for 2% less
        gz.write(data)
    return buffer.getvalue()


def write_log(
    root: Path, *, tournament: int, block: int, rotation: int, payload: Mapping[str, object]
) -> Path:
    """Write one session's log atomically and return its path.

    ``format``, ``version``, ``tournament``, ``block`` and ``rotation`` are filled in
    (a payload that disagrees with them is a LogError). An existing log for the same
    session is replaced.
    """
    data = encode_log(payload, tournament=tournament, block=block, rotation=rotation)
    return write_encoded_log(root, tournament=tournament, block=block, rotation=rotation, data=data)


def write_encoded_log(root: Path, *, tournament: int, block: int, rotation: int, data: bytes) -> Path:
    """Write a log made by :func:`encode_log` atomically (synced, then renamed) and return its path."""
    path = log_path(root, tournament=tournament, block=block, rotation=rotation)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = _locked_temporary(path)
        try:
            os.fchmod(fd, 0o644)  # mkstemp makes it private; a log is for anyone to read
            with os.fdopen(fd, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
                temp.replace(path)  # before the close, which ends the lock
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
    except OSError as exc:
        msg = f"cannot write {path}: {exc.strerror or exc}"
        raise LogError(msg) from exc
    _fsync_folder(path.parent)
    return path


def _locked_temporary(path: Path) -> tuple[int, Path]:
    """A new temporary file beside ``path``, locked for as long as its descriptor is open.

    A cleanup may delete the file between its creation and the lock; the lock is then on
    a file without a name (no link left), and another one is made.
    """
    while True:
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.fstat(fd).st_nlink:
                return fd, Path(name)
        except BaseException:
            os.close(fd)
            Path(name).unlink(missing_ok=True)
            raise
        os.close(fd)


def _check(document: object) -> str | None:
    """Say what is wrong with a decoded log document, or None when nothing is."""
    if not isinstance(document, dict) or document.get("format") != LOG_FORMAT:
        return f'no "format": "{LOG_FORMAT}"'
    version = document.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        return f"bad version {version!r}"
    if version > LOG_VERSION:
        return f"version {version} is newer than this reader ({LOG_VERSION})"
    return None


def read_log(path: Path) -> dict[str, object]:
    """Read one session log, checking that it is one and that this code can read it."""
    try:
        with gzip.open(path, "rb") as gz:
            document = json.loads(gz.read())
        reason = _check(document)
    except FileNotFoundError as exc:
        msg = f"no session log at {path}"
        raise LogError(msg) from exc
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        # Not gzip: BadGzipFile (an OSError); truncated: EOFError; not JSON: the last two.
        msg = f"{path.name} is not a valid session log: {str(exc) or type(exc).__name__}"
        raise LogError(msg) from exc
    if reason is not None:
        msg = f"{path.name} is not a valid session log: {reason}"
        raise LogError(msg)
    return dict(document)


def remove_temporaries(root: Path, *, tournament: int | None = None) -> int:
    """Delete the temporary files that writes cut short by a crash left under ``root``.

    Only ``tournament``'s folder is searched when it is given. A temporary file whose
    writer is alive is locked by it and left alone, so this is safe while others write.
    Returns how many were removed.
    """
    folders = "t*" if tournament is None else f"t{tournament}"
    removed = 0
    for temp in root.glob(f"{folders}/.*.json.gz.*.tmp"):
        removed += _remove_if_abandoned(temp)
    return removed


def _remove_if_abandoned(temp: Path) -> int:
    """Delete ``temp`` unless a live writer holds its lock; 1 if it was deleted."""
    try:
        fd = os.open(temp, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return 0  # gone already (renamed into place, or removed)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if not os.path.samestat(os.fstat(fd), temp.stat()):
            return 0  # the name now belongs to another file
        temp.unlink()
    except OSError:  # locked by its writer, or gone meanwhile
        return 0
    finally:
        os.close(fd)
    return 1
