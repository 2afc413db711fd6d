"""Choosing entrants: built-in bots, submitted bot versions and bot folders, resolved to entries.

On the command line an entrant is written ``BOT`` or ``ALIAS=BOT``, where ``BOT`` is a
built-in bot (``random``, ``peel``, ...), a bot submitted with ``nap bot submit``
(``NAME``: its latest version; ``NAME@VERSION`` or ``NAME@HASH``: that one; played from
the content stored at submission, :mod:`tournaments.plan.versions`), or the path of a
folder holding a ``nap-bot.toml`` (built and played where it is). ``ALIAS`` enters the
same bot again under another name (``peel-2=peel``), e.g. to fill a table or to check
that clones tie.

The rule (:data:`WHICH_PLAYS`): a name names a bot, a path a folder. A ``BOT`` with a
``/`` in it (``./mybot``, ``bots/mybot``, an absolute path) is a folder; a bare ``NAME``
is the built-in or submitted bot of that name, and a folder only when no bot has that
name. When a bare ``NAME`` is both a bot and a bot folder in the current folder whose
content differs, the bot plays and the caller is told so in one line (which one played,
and how to play the other).

Every entry carries the content hash of what it plays; :func:`recheck` refuses, in one
line, an entry whose content has changed since (a resume after the bot's folder was
edited).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from referee.rules.errors import did_you_mean
from tournaments.errors import BuildError, RunnerError
from tournaments.plan.entries import BUILTIN_BOTS, BotEntry, example_hash
from tournaments.plan.manifest import MANIFEST, Manifest, content_hash, read_manifest
from tournaments.plan.versions import VersionSpec, parse_version, unpacked

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from tournaments.play.sandbox import Sandbox
    from tournaments.store.database import BotRow, Store

WHICH_PLAYS = (
    "NAME plays the built-in or submitted bot of that name (the latest version submitted; "
    "NAME@VERSION an older one), and a bot folder NAME only where no bot has that name; "
    "a path (./mybot) plays that folder as it is now"
)
"""The rule for what ``--bot NAME`` plays, in the words every ``--help`` and doc uses."""

DEFAULT_ENTRANTS = ("peel", "random", "peel-2=peel", "random-2=random")
"""What ``nap tournament run`` plays with no ``--bot``: the example bots, each twice."""

BUILD_TIMEOUT_S = 600.0
"""How long a bot's build may run (wall clock) before it is stopped."""


def entry_from_manifest(manifest: Manifest, *, digest: str | None = None) -> BotEntry:
    """The entry that starts a bot folder's command in that folder."""
    return BotEntry(
        name=manifest.name,
        version=manifest.version,
        command=manifest.argv(),
        cwd=manifest.folder,
        content_hash=digest if digest is not None else content_hash(manifest.folder),
    )


def entry_from_row(row: BotRow, folder: Path) -> BotEntry:
    """The entry of a registered bot version, played from ``folder`` (its unpacked content)."""
    manifest = Manifest(folder, row.name, row.version, row.command)
    return BotEntry(
        name=row.name,
        version=row.version,
        command=manifest.argv(),
        cwd=folder,
        content_hash=row.content_hash,
    )


def bots_folder(store: Store) -> Path:
    """Where the submitted versions of ``store``'s bots are unpacked to be played: ``<db>-bots/``."""
    real = store.path.resolve()
    return real.with_name(f"{real.name}-bots")


def _submitted(spec: VersionSpec, store: Store) -> BotEntry | None:
    """The entry of a submitted version ``spec`` names, unpacked beside the database; None if none.

    A bot registered before versions were kept (no stored content) is played from its
    folder only while that folder still holds the registered content.
    """
    row = store.submitted(spec.name, spec.which)
    if row is not None:
        pack = store.bot_pack(row.content_hash)
        folder = unpacked(pack, name=row.name, digest=row.content_hash, root=bots_folder(store))
        return entry_from_row(row, folder)
    if spec.which is not None:
        return None
    registered = {row.name: row for row in store.bots()}.get(spec.name)
    if registered is None or not registered.folder:
        return None
    folder = Path(registered.folder)
    if not folder.is_dir() or content_hash(folder) != registered.content_hash:
        msg = (
            f"bot {spec.name} {registered.version} ({registered.content_hash[:12]}) was registered before "
            f"versions were kept, and its folder {folder} no longer holds it: nap bot submit it again"
        )
        raise RunnerError(msg)
    return entry_from_row(registered, folder)


def build(manifest: Manifest, *, sandbox: Sandbox | None = None) -> None:
    """:func:`build_async` in a fresh event loop (for the command line)."""
    asyncio.run(build_async(manifest, sandbox=sandbox))


async def build_async(
    manifest: Manifest,
    *,
    sandbox: Sandbox | None = None,
    network: bool = True,
    timeout_s: float = BUILD_TIMEOUT_S,
) -> str:
    """Run the manifest's build command once in its folder; what it wrote (stdout, then stderr).

    With ``sandbox`` the build runs in it: its folder writable, the network reachable unless
    ``network`` is False, and nothing else of nap's in view (not the database, not other
    bots). Raises BuildError with all its output when it fails, and RunnerError (one line)
    when its program is missing or it runs past ``timeout_s`` (it is killed, its children
    with it). Cancelled, it kills the build too.
    """
    argv = manifest.build_argv()
    if argv is None:
        return ""
    env: dict[str, str] | None = None
    cwd: Path | None = manifest.folder
    if sandbox is not None:
        wrapped, env = sandbox.build(argv, name=manifest.name, folder=manifest.folder, network=network)
        argv, cwd = tuple(wrapped), None
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # its children are killed with it
        )
    except FileNotFoundError:
        msg = f"bot {manifest.name}: build command not found: {argv[0]}"
        raise RunnerError(msg) from None
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout_s)
    except TimeoutError:
        msg = f"bot {manifest.name}: build took longer than {timeout_s:g} s"
        raise RunnerError(msg) from None
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
    output = "\n".join(part.decode(errors="replace").strip() for part in (out, err) if part.strip())
    if process.returncode != 0:
        last = output.splitlines()[-1] if output else "no output"
        msg = f"bot {manifest.name}: build failed with status {process.returncode}: {last}"
        raise BuildError(msg, bot=manifest.name, status=process.returncode or 0, output=output or "no output")
    return output


def resolve(
    spec: str, *, store: Store | None, say: Callable[[str], None], sandbox: Sandbox | None = None
) -> BotEntry:
    """One entrant from its command-line form (see the module docstring); a folder is built in ``sandbox``.

    ``say`` is told, in one line, when a bare name played a bot although a different bot
    folder of that name is in the current folder.
    """
    alias, sep, target = spec.partition("=")
    if not sep:
        alias, target = "", spec
    entry = _resolve_target(target.strip(), store=store, sandbox=sandbox, say=say)
    return entry.renamed(alias.strip()) if alias.strip() else entry


def resolve_all(
    specs: Sequence[str], *, store: Store | None, say: Callable[[str], None], sandbox: Sandbox | None = None
) -> tuple[BotEntry, ...]:
    """Every entrant, with a clear error for an unknown bot or two entrants of one name."""
    entries = tuple(resolve(spec, store=store, sandbox=sandbox, say=say) for spec in specs)
    seen: set[str] = set()
    for entry in entries:
        if entry.name in seen:
            msg = f"two entrants are named {entry.name}; enter the second as {entry.name}-2={entry.name}"
            raise RunnerError(msg)
        seen.add(entry.name)
    return entries


def is_path(target: str) -> bool:
    """Whether ``target`` is written as a path (a folder), not a bot's name: it has a ``/`` in it."""
    return "/" in target or target in {".", ".."}


def _resolve_target(
    target: str, *, store: Store | None, sandbox: Sandbox | None, say: Callable[[str], None]
) -> BotEntry:
    path = Path(target)
    if is_path(target):
        if not path.is_dir():
            msg = f"{target}: no such folder (a bot folder holds a nap-bot.toml)"
            raise RunnerError(msg)
        return _folder(path, sandbox=sandbox)
    named = _named(target, store=store)
    if named is None:
        if path.is_dir():
            return _folder(path, sandbox=sandbox)
        _unknown(target, store=store)
    note = _folder_beside(target, named)
    if note is not None:
        say(note)
    return named


def _folder(path: Path, *, sandbox: Sandbox | None) -> BotEntry:
    manifest = read_manifest(path)
    build(manifest, sandbox=sandbox)
    return entry_from_manifest(manifest)


def _named(target: str, *, store: Store | None) -> BotEntry | None:
    """The built-in or submitted bot ``target`` names (``NAME`` or ``NAME@WHICH``); None if none."""
    if target in BUILTIN_BOTS:
        return BUILTIN_BOTS[target]
    return None if store is None else _submitted(parse_version(target), store)


def _unknown(target: str, *, store: Store | None) -> NoReturn:
    """Raise the one-line error for a ``target`` that names no bot and no folder."""
    spec = parse_version(target)
    if spec.which is not None and store is not None:
        versions = [
            f"{row.version} ({row.content_hash[:12]})" for row in store.bots() if row.name == spec.name
        ]
        have = f"its versions: {', '.join(versions)}" if versions else "it was never submitted (nap bot list)"
        msg = f"bot {spec.name} has no submitted version {spec.which!r}; {have}"
        raise RunnerError(msg)
    known = ", ".join(sorted(BUILTIN_BOTS))
    names = {*BUILTIN_BOTS, *(row.name for row in store.bots())} if store is not None else set(BUILTIN_BOTS)
    msg = (
        f"unknown bot {target!r}: not a built-in bot ({known}), not submitted "
        f"(nap bot list), and not a folder with a nap-bot.toml{did_you_mean(spec.name, sorted(names))}"
    )
    raise RunnerError(msg)


def _folder_beside(name: str, entry: BotEntry) -> str | None:
    """The line saying which played when bot ``name`` did and a different bot folder ``./name`` is here."""
    folder = Path(name)
    if not (folder / MANIFEST).is_file() or content_hash(folder) == entry.content_hash:
        return None
    if entry.in_process is not None:
        played = f"the built-in {name}"
    else:
        played = f"the submitted {name} {entry.version} ({entry.content_hash[:12]})"
    return (
        f"--bot {name} plays {played}, not the folder ./{name}, which differs "
        f"(--bot ./{name} plays the folder; nap bot submit ./{name} keeps it as a new version)"
    )


def recheck(entries: Sequence[BotEntry], *, tournament: int, store: Store) -> tuple[BotEntry, ...]:
    """The entries of a stored tournament, each checked to play what it played before (for a resume).

    A submitted version whose unpacked folder is gone is unpacked again; any other folder
    must still have the content hash stored with the entry, and a built-in bot its code's.
    Raises RunnerError (one line: what changed, what to do) otherwise.
    """
    checked = []
    for stored in entries:
        entry = _unpacked_again(stored, store)
        now = _hash_now(entry)
        if now is not None and now != entry.content_hash:
            msg = (
                f"bot {entry.name} changed since tournament {tournament} started ({what_changed(entry)} "
                f"now hashes {now[:12]}, not {entry.content_hash[:12]}): undo the change to finish the "
                "tournament as it began, or start a new one (nap bot submit keeps each version)"
            )
            raise RunnerError(msg)
        checked.append(entry)
    return tuple(checked)


def _unpacked_again(entry: BotEntry, store: Store) -> BotEntry:
    """``entry``, its folder unpacked again when it was a submitted version's and is gone."""
    if entry.cwd is None or entry.cwd.is_dir():
        return entry
    row = store.submitted(entry.name, entry.content_hash)
    if row is None or row.content_hash != entry.content_hash:
        return entry
    pack = store.bot_pack(row.content_hash)
    folder = unpacked(pack, name=row.name, digest=row.content_hash, root=bots_folder(store))
    return dataclasses.replace(entry, cwd=folder)


def _hash_now(entry: BotEntry) -> str | None:
    """The content hash of what ``entry`` would play now (None: nothing to hash, a remote bot)."""
    if entry.cwd is not None:
        return content_hash(entry.cwd) if entry.cwd.is_dir() else "(folder gone)"
    return example_hash(entry.in_process) if entry.in_process is not None else None


def what_changed(entry: BotEntry) -> str:
    """What of ``entry`` the content hash covers, in words."""
    return f"its folder {entry.cwd}" if entry.cwd is not None else "its code in this nap-arena"
