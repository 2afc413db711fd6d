"""Bots on Ray workers: bot folders travel in Ray's runtime environment and are built once per node.

A command run by nap's own interpreter (the built-in bots, ``{python}`` in a manifest) is
written with ``{python}`` on the way out and runs with the interpreter of the Ray worker
that starts it, so the built-in bots run from the nap-arena installed on each node. A bot
folder is copied into one staging folder, without the caches and build products that its
content hash leaves out (:func:`~tournaments.plan.manifest.content_hash`), and that folder
becomes the Ray workers' ``working_dir``: Ray uploads it once per run and unpacks it once
per node (a copy per content, cached). There the first Ray worker to need a folder runs
its manifest's build (``cc``, ``npm ci``, ...); the others on the node wait for it on a
lock and find it done.

The protocol travels with the folders. A bot that loads ``nap.proto`` at run time finds
it at ``$NAP_PROTO`` or at a path relative to its folder (the Node.js example looks in the
checkout's ``proto/``), which a copy on another machine leaves behind. So the ``nap.proto``
this machine's bots would find (``$NAP_PROTO``, else this checkout's) is shipped beside the
folders, and a Ray worker points ``$NAP_PROTO`` at it unless its node sets one.
"""

from __future__ import annotations

import dataclasses
import fcntl
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tournaments.plan.manifest import MANIFEST, read_manifest
from tournaments.play.entrants import build
from tournaments.play.sandbox import NAP_PROTO, this_machine_proto

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tournaments.plan.entries import BotEntry
    from tournaments.play.sandbox import Sandbox

__all__ = ["NAP_PROTO", "PYTHON", "build_once", "local_bots", "portable_bots", "shipped_proto"]

PYTHON = "{python}"
"""Stands for the interpreter that runs nap-arena, in a command on its way to a Ray worker."""
_NOT_SHIPPED = shutil.ignore_patterns(
    "__pycache__", ".git", "node_modules", ".venv", ".mypy_cache", ".pytest_cache"
)
"""What a bot folder leaves behind: the folders its content hash skips (its build makes them again)."""
_BUILT = ".nap-built"
_LOCK = ".nap-build.lock"
_PROTO = "nap.proto"
"""The shipped protocol's name in the staging folder (a bot folder's is ``<n>-<name>``)."""


def portable_bots(bots: Sequence[BotEntry], stage: Path) -> tuple[BotEntry, ...]:
    """The entries as a Ray worker gets them, each distinct bot folder copied under ``stage``.

    In the entries returned, ``cwd`` is a folder relative to ``stage`` (which Ray unpacks
    on each node) and this interpreter is written ``{python}``.
    """
    folders: dict[Path, Path] = {}
    portable = []
    for entry in bots:
        cwd = None
        if entry.cwd is not None:
            source = entry.cwd.resolve()
            if source not in folders:
                folders[source] = Path(f"{len(folders)}-{source.name}")
                shutil.copytree(source, stage / folders[source], ignore=_NOT_SHIPPED, symlinks=True)
            cwd = folders[source]
        command = tuple(PYTHON if part == sys.executable else part for part in entry.command)
        portable.append(dataclasses.replace(entry, command=command, cwd=cwd))
    proto = this_machine_proto()
    if folders and proto is not None:
        shutil.copy2(proto, stage / _PROTO)
    return tuple(portable)


def shipped_proto(root: Path) -> Path | None:
    """On a Ray worker: the ``nap.proto`` shipped with the bot folders unpacked at ``root``, if one was."""
    path = root / _PROTO
    return path if path.is_file() else None


def local_bots(bots: Sequence[BotEntry], root: Path, *, sandbox: Sandbox | None) -> tuple[BotEntry, ...]:
    """On a Ray worker: the entries with this interpreter and their folders under ``root``, built.

    Each folder's manifest build runs once per node (:func:`build_once`, in ``sandbox``); a
    failed build is a RunnerError naming the bot.
    """
    local = []
    for entry in bots:
        cwd = None if entry.cwd is None else root / entry.cwd
        if cwd is not None:
            build_once(cwd, sandbox=sandbox)
        command = tuple(sys.executable if part == PYTHON else part for part in entry.command)
        local.append(dataclasses.replace(entry, command=command, cwd=cwd))
    return tuple(local)


def build_once(folder: Path, *, sandbox: Sandbox | None = None) -> None:
    """Run the folder's manifest build unless it ran already here; concurrent callers wait for the first.

    A folder without a manifest, or whose manifest has no build, needs nothing. With
    ``sandbox`` the build runs in it.
    """
    with (folder / _LOCK).open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if (folder / _BUILT).exists():
            return
        if (folder / MANIFEST).is_file():
            build(read_manifest(folder), sandbox=sandbox)
        (folder / _BUILT).touch()
