"""Choosing entrants: built-in bots, registered bots and bot folders, resolved to entries.

On the command line an entrant is written ``BOT`` or ``ALIAS=BOT``, where ``BOT`` is a
built-in bot (``random``, ``peel``, ...), a bot registered with ``nap bot submit`` (its
latest version), or a folder holding a ``nap-bot.toml``. ``ALIAS`` enters the same bot
again under another name (``peel-2=peel``), e.g. to fill a table or to check that clones
tie.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from tournaments.bots import BUILTIN_BOTS, BotEntry, RunnerError
from tournaments.manifest import Manifest, content_hash, read_manifest

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tournaments.sandbox import Sandbox
    from tournaments.store import BotRow, Store

DEFAULT_ENTRANTS = ("peel", "random", "peel-2=peel", "random-2=random")
"""What ``nap tournament run`` plays with no ``--bot``: the example bots, each twice."""

_BUILD_TIMEOUT_S = 600


def entry_from_manifest(manifest: Manifest, *, digest: str | None = None) -> BotEntry:
    """The entry that starts a bot folder's command in that folder."""
    return BotEntry(
        name=manifest.name,
        version=manifest.version,
        command=manifest.argv(),
        cwd=manifest.folder,
        content_hash=digest if digest is not None else content_hash(manifest.folder),
    )


def entry_from_row(row: BotRow) -> BotEntry:
    """The entry of a registered bot version (run from its folder)."""
    manifest = Manifest(Path(row.folder or "."), row.name, row.version, row.command)
    return BotEntry(
        name=row.name,
        version=row.version,
        command=manifest.argv(),
        cwd=Path(row.folder) if row.folder else None,
        content_hash=row.content_hash,
    )


def build(manifest: Manifest, *, sandbox: Sandbox | None = None) -> None:
    """Run the manifest's build command once in its folder; BuildError with all its output on failure.

    With ``sandbox`` the build runs in it: its folder writable, the network reachable, and
    nothing else of nap's in view (not the database, not other bots).
    """
    argv = manifest.build_argv()
    if argv is None:
        return
    env: dict[str, str] | None = None
    cwd: Path | None = manifest.folder
    if sandbox is not None:
        wrapped, env = sandbox.build(argv, name=manifest.name, folder=manifest.folder)
        argv, cwd = tuple(wrapped), None
    try:
        done = subprocess.run(  # noqa: S603 - the bot author's own build command, no shell
            argv,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=_BUILD_TIMEOUT_S,
        )
    except FileNotFoundError:
        msg = f"bot {manifest.name}: build command not found: {argv[0]}"
        raise RunnerError(msg) from None
    except subprocess.TimeoutExpired:
        msg = f"bot {manifest.name}: build took longer than {_BUILD_TIMEOUT_S} s"
        raise RunnerError(msg) from None
    if done.returncode != 0:
        output = "\n".join(part.strip() for part in (done.stdout, done.stderr) if part.strip())
        last = output.splitlines()[-1] if output else "no output"
        msg = f"bot {manifest.name}: build failed with status {done.returncode}: {last}"
        raise BuildError(msg, bot=manifest.name, status=done.returncode, output=output or "no output")


class BuildError(RunnerError):
    """A bot's build command failed; ``output`` is everything it wrote (stdout, then stderr).

    The message ends with the output's last line, for callers that show one line only.
    """

    def __init__(self, message: str, *, bot: str, status: int, output: str) -> None:
        super().__init__(message)
        self.bot = bot
        self.status = status
        self.output = output


def resolve(spec: str, *, store: Store | None, sandbox: Sandbox | None = None) -> BotEntry:
    """One entrant from its command-line form (see the module docstring); a folder is built in ``sandbox``."""
    alias, sep, target = spec.partition("=")
    if not sep:
        alias, target = "", spec
    entry = _resolve_target(target.strip(), store=store, sandbox=sandbox)
    return entry.renamed(alias.strip()) if alias.strip() else entry


def resolve_all(
    specs: Sequence[str], *, store: Store | None, sandbox: Sandbox | None = None
) -> tuple[BotEntry, ...]:
    """Every entrant, with a clear error for an unknown bot or two entrants of one name."""
    entries = tuple(resolve(spec, store=store, sandbox=sandbox) for spec in specs)
    seen: set[str] = set()
    for entry in entries:
        if entry.name in seen:
            msg = f"two entrants are named {entry.name}; enter the second as {entry.name}-2={entry.name}"
            raise RunnerError(msg)
        seen.add(entry.name)
    return entries


def _resolve_target(target: str, *, store: Store | None, sandbox: Sandbox | None) -> BotEntry:
    path = Path(target)
    if path.is_dir():
        manifest = read_manifest(path)
        build(manifest, sandbox=sandbox)
        return entry_from_manifest(manifest)
    if target in BUILTIN_BOTS:
        return BUILTIN_BOTS[target]
    if store is not None:
        registered = {row.name: row for row in store.bots()}
        if target in registered:
            return entry_from_row(store.bot(target))
    known = ", ".join(sorted(BUILTIN_BOTS))
    msg = (
        f"unknown bot {target!r}: not a built-in bot ({known}), not registered "
        "(nap bot list), and not a folder with a nap-bot.toml"
    )
    raise RunnerError(msg)
