"""Submitted bot versions: a folder's content kept as it was checked, and played exactly so.

A version is what fishtest and OpenBench mean by a commit: fixed. ``nap bot submit`` packs
the bot's folder, built and checked (:func:`pack`), into the database with its content
hash (:func:`tournaments.plan.manifest.content_hash`); ``--bot NAME`` (the latest version),
``--bot NAME@VERSION`` or ``--bot NAME@HASH`` (a prefix of six or more hex digits) then
plays that content, unpacked once beside the database (:func:`unpacked`:
``<db>-bots/<name>-<hash>/``) and checked against its hash every time it is used. Editing
the bot's folder afterwards changes nothing until it is submitted again, as a new version.

The pack holds every file of the folder but version control and caches (``.git``,
``__pycache__``, ``.venv``, the type checkers' and test runners' caches), build products
included (``node_modules``, a compiled program): a version plays without building again,
exactly as it was checked.
"""

from __future__ import annotations

import gzip
import io
import re
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tournaments.errors import RunnerError
from tournaments.plan.manifest import SKIPPED, content_hash

__all__ = ["VersionSpec", "pack", "parse_version", "unpacked"]

_NOT_PACKED = SKIPPED - {"node_modules"}
"""What a pack leaves out: version control and caches, never what the bot runs (its build's
``node_modules`` included, which the content hash leaves out as a build product)."""
_HASH_PREFIX = re.compile(r"[0-9a-f]{6,64}")
_SHOWN_HASH = 12
"""Hex digits of a content hash in a version's folder name and in messages."""


@dataclass(frozen=True, slots=True)
class VersionSpec:
    """``NAME`` or ``NAME@WHICH`` as given on the command line: ``which`` is a version or a hash prefix."""

    name: str
    which: str | None = None

    @property
    def by_hash(self) -> bool:
        """Whether ``which`` reads as a content hash (six or more lowercase hex digits)."""
        return self.which is not None and _HASH_PREFIX.fullmatch(self.which) is not None


def parse_version(text: str) -> VersionSpec:
    """``mybot`` or ``mybot@0.2`` or ``mybot@755f51``: the bot and which of its versions."""
    name, sep, which = text.partition("@")
    if sep and not which:
        msg = f"{text!r}: give a version or a content hash after @ (mybot@0.2, mybot@755f51)"
        raise RunnerError(msg)
    return VersionSpec(name, which or None)


def pack(folder: Path) -> bytes:
    """The folder's content as a gzip tar: every file but version control and caches, in path order.

    The same folder always packs to the same bytes (no times, neither the files' nor the gzip
    header's; no owners; a link packs as the file it points to, as the content hash reads
    it), so a pack is stored once per content.
    """
    data = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=data, mode="wb", compresslevel=6, mtime=0) as compressed,
        tarfile.open(fileobj=compressed, mode="w") as tar,
    ):
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            relative = path.relative_to(folder)
            if _NOT_PACKED.intersection(relative.parts):
                continue
            content = path.read_bytes()
            info = tarfile.TarInfo(relative.as_posix())
            info.size = len(content)
            info.mode = 0o755 if path.stat().st_mode & 0o111 else 0o644
            tar.addfile(info, io.BytesIO(content))
    return data.getvalue()


def unpacked(data: bytes, *, name: str, digest: str, root: Path) -> Path:
    """The folder under ``root`` holding version ``digest`` of bot ``name``, unpacked from ``data`` if needed.

    An existing folder is used when its content still has the version's hash; otherwise
    (absent, or changed by hand) it is unpacked again, into a fresh folder moved into
    place, so that a half-written copy is never played. Raises RunnerError when the pack
    does not hold the version it claims.
    """
    folder = root / f"{name}-{digest[:_SHOWN_HASH]}"
    if folder.is_dir() and content_hash(folder) == digest:
        return folder
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=root))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            tar.extractall(staging, filter="data")
        found = content_hash(staging)
        if found == digest:
            staging.chmod(0o755)
            shutil.rmtree(folder, ignore_errors=True)
            staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if found != digest:
        msg = f"bot {name}: the stored pack of version {digest[:_SHOWN_HASH]} holds {found[:_SHOWN_HASH]}"
        raise RunnerError(msg)
    return folder
