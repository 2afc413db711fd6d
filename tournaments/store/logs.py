"""Session logs: one gzip-compressed JSON document per session.

A log holds::

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

This module owns the format's mechanics: the header (``format``, ``version`` and the
session key, which :func:`encode_log` fills in), compression, reading back, and plain
files. The rest of the payload is the caller's and is written as given. ``docs/logs.md``
describes every field for people reading logs.

Logs live in the database, each committed with its session (:mod:`tournaments.store.database`);
``nap log export`` writes them out as files at :func:`log_path`
(``<folder>/t<tournament>/b<block>-r<rotation>.json.gz``), each written to a temporary
file and renamed, so an interrupted export never leaves a half-written log under its name.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import tempfile
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

from tournaments.errors import LogError

if TYPE_CHECKING:
    from collections.abc import Mapping

LOG_FORMAT = "nap-session-log"
LOG_VERSION = 1
"""The log format version this code writes and the highest it reads."""


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


def encode_log(payload: Mapping[str, object], *, tournament: int, block: int, rotation: int) -> bytes:
    """One session's log as bytes (gzip JSON, header filled in), as the store keeps it.

    A worker encodes the log where the session was played and sends these bytes to the
    runner, which alone writes the store; a payload that disagrees with the header is a
    LogError.
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


def write_encoded_log(root: Path, *, tournament: int, block: int, rotation: int, data: bytes) -> Path:
    """Write a log made by :func:`encode_log` under ``root`` (a temporary file, renamed); give its path."""
    path = log_path(root, tournament=tournament, block=block, rotation=rotation)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        temp = Path(name)
        try:
            os.fchmod(fd, 0o644)  # mkstemp makes it private; a log is for anyone to read
            with os.fdopen(fd, "wb") as file:
                file.write(data)
            temp.replace(path)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
    except OSError as exc:
        msg = f"cannot write {path}: {exc.strerror or exc}"
        raise LogError(msg) from exc
    return path


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
    """Read one session log file (as ``nap log export`` writes them), checking that this code can read it."""
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        msg = f"no session log at {path}"
        raise LogError(msg) from exc
    except OSError as exc:
        msg = f"cannot read {path}: {exc.strerror or exc}"
        raise LogError(msg) from exc
    return decode_log(data, name=path.name)


def decode_log(data: bytes, *, name: str) -> dict[str, object]:
    """Read one session log from its bytes; ``name`` says which log in errors (one line)."""
    try:
        document = json.loads(gzip.decompress(data))
        reason = _check(document)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        # Not gzip: BadGzipFile (an OSError); truncated: EOFError; not JSON: the last two.
        msg = f"{name} is not a valid session log: {str(exc) or type(exc).__name__}"
        raise LogError(msg) from exc
    if reason is not None:
        msg = f"{name} is not a valid session log: {reason}"
        raise LogError(msg)
    return dict(document)
