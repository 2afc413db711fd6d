"""A submission's way onto the ladder: unpacked, built and checked in the sandbox, then placed.

:func:`admit` takes one queued submission through its steps, each written to its
admission log (:meth:`ArenaStore.add_step <tournaments.store.arena.ArenaStore.add_step>`;
what the bot or its build printed goes to the owner's private lines only):

1. ``building``: the upload is unpacked by the sandboxed unpacker
   (:func:`tournaments.arena.packs.unpack`) into a fresh folder, its manifest read, its
   content hashed, and its build command (if any) run in the sandbox, without network
   unless the arena allows it. The same content as one of the owner's versions is refused:
   versions never change, so it would be the same entry again.
2. ``checking``: the practice sessions ``nap bot check`` plays (against ``random`` and
   ``peel``, in the sandbox, on a secret seed); any fault or exit refuses it.
3. ``placing``: it is registered as entry ``<bot>.<submission>`` and the ladder seats it
   at its placement tables against the anchors (:mod:`tournaments.arena.ladder`), which
   then marks it ``placed`` with its provisional rating.

A refusal is one line for the person (never a path of the host's) with the details in the
private log. Whatever the step, a failure of the arena itself (a full disk) is raised as it
is: the submission stays where it was, and the next start admits it again from the start.
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from tournaments.arena.packs import PackError, unpack
from tournaments.errors import BuildError, ManifestError, RunnerError
from tournaments.plan.manifest import content_hash, read_manifest
from tournaments.play.entrants import build_async, entry_from_manifest
from tournaments.play.practice import check_bot_async
from tournaments.play.sandbox import SandboxSpec, sandbox_for
from tournaments.report.check import check_lines

if TYPE_CHECKING:
    from tournaments.arena.packs import UnpackReport
    from tournaments.arena.settings import ArenaSettings
    from tournaments.plan.manifest import Manifest
    from tournaments.play.sandbox import Sandbox
    from tournaments.store.arena import ArenaStore, Submission

__all__ = ["CHECK_SESSIONS", "AdmissionRefusedError", "admit", "entry_name"]

CHECK_SESSIONS = 6
"""Practice sessions a submission plays before it is placed (as ``nap bot check``'s default)."""
_OUTPUT_KEPT = 16 << 10
"""Of a build's output, the last this many characters go to the owner's log."""


class AdmissionRefusedError(RunnerError):
    """A submission that cannot be admitted: ``str()`` is the line its owner reads, ``details`` the rest."""

    def __init__(self, message: str, *, details: str = "") -> None:
        super().__init__(message)
        self.details = details


def entry_name(bot: str, submission: int) -> str:
    """The ladder's name for submission ``submission`` of bot ``bot``: ``mybot.17``, unique and readable."""
    return f"{bot}.{submission}"


async def admit(
    submission: Submission, *, store: ArenaStore, settings: ArenaSettings, folder: Path
) -> Submission:
    """Take ``submission`` through building and checking to placing (or refused); the submission then.

    ``folder`` is the arena's files folder: the entry's folder goes in ``bots/``.
    """
    try:
        store.update_submission(submission.id, status="building")
        manifest, digest = await _unpack(submission, store=store, settings=settings, folder=folder)
        await _build(manifest, submission, store=store, settings=settings, folder=folder)
        entry = entry_from_manifest(manifest, digest=digest)
        store.update_submission(submission.id, status="checking")
        report = await check_bot_async(
            entry,
            sessions=CHECK_SESSIONS,
            table_size=min(settings.table_sizes),
            profile=settings.profile,
            decision_ms=settings.decision_ms,
            baseline=None,
            seed=secrets.randbits(63),
            sandbox=settings.sandbox,
            bot_limits=settings.bot_limits,
            signals=False,  # the arena's own: SIGTERM stops the arena, not one check
        )
        lines = check_lines(report)
        store.add_step(submission.id, "check", "\n".join(lines), private=True)
        _passed(lines, passed=report.passed)
        store.add_step(submission.id, "check", f"{report.sessions} practice sessions, no fault: passed")
        name = entry_name(manifest.name, submission.id)
        store.register_bot(
            name=name,
            version=manifest.version,
            command=manifest.command,
            language=manifest.language,
            folder=str(manifest.folder),
            content_hash=digest,
        )
        store.add_step(
            submission.id, "placing", f"{settings.placement_blocks} placement blocks against the anchors"
        )
        return store.update_submission(submission.id, status="placing", entry=name)
    except AdmissionRefusedError as refused:
        if refused.details:
            store.add_step(submission.id, "refused", refused.details, private=True)
        store.add_step(submission.id, "refused", str(refused))
        return store.update_submission(submission.id, status="refused", reason=str(refused))


async def _unpack(
    submission: Submission, *, store: ArenaStore, settings: ArenaSettings, folder: Path
) -> tuple[Manifest, str]:
    """The upload unpacked in the sandbox into the entry's folder; its manifest and content hash."""
    data = store.upload(submission.upload)
    sandbox = _sandbox(settings, store, folder)
    staging, report, digest = await asyncio.to_thread(
        _unpacked, data, bots=folder / "bots", submission=submission.id, settings=settings, sandbox=sandbox
    )
    same = [
        s
        for s in store.submissions(owner=submission.owner, statuses=("placing", "placed", "retired"))
        if s.content_hash == digest
    ]
    if same:
        await asyncio.to_thread(shutil.rmtree, staging, ignore_errors=True)
        msg = (
            f"the same content as your submission {same[0].id} ({same[0].entry}): versions never change, "
            "so change something to submit a new one"
        )
        raise AdmissionRefusedError(msg)
    target = folder / "bots" / str(submission.id)
    await asyncio.to_thread(_move, staging, target)
    manifest = read_manifest(target)
    store.update_submission(
        submission.id,
        status="building",
        name=manifest.name,
        version=manifest.version,
        language=manifest.language,
        command=list(manifest.command),
        content_hash=digest,
    )
    store.add_step(
        submission.id,
        "unpack",
        f"{report.files} files, {report.bytes:,} bytes: {manifest.name} {manifest.version}"
        + (f" ({manifest.language})" if manifest.language else ""),
    )
    return manifest, digest


def _unpacked(
    data: bytes, *, bots: Path, submission: int, settings: ArenaSettings, sandbox: Sandbox | None
) -> tuple[Path, UnpackReport, str]:
    """``data`` unpacked into a fresh folder under ``bots``, its manifest checked: the folder, report, hash.

    Refused (the folder removed) when it is not a pack, unpacks past the limits, or holds
    no readable manifest; the messages name no path of the host's.
    """
    staging = Path(tempfile.mkdtemp(prefix=f".s{submission}-", dir=bots))
    try:
        staging.chmod(0o755)
        report = unpack(data, into=staging, limits=settings.pack_limits, sandbox=sandbox)
        read_manifest(staging)
        return staging, report, content_hash(staging)
    except PackError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise AdmissionRefusedError(str(exc)) from None
    except ManifestError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise AdmissionRefusedError(str(exc).replace(str(staging), "the pack")) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _move(staging: Path, target: Path) -> None:
    """Put an unpacked folder in its place (a leftover of an interrupted admission is replaced)."""
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)


async def _build(
    manifest: Manifest, submission: Submission, *, store: ArenaStore, settings: ArenaSettings, folder: Path
) -> None:
    """Run the manifest's build in the sandbox (no network unless allowed), bounded in time."""
    if manifest.build_argv() is None:
        store.add_step(submission.id, "build", "nothing to build")
        return
    try:
        output = await build_async(
            manifest,
            sandbox=_sandbox(settings, store, folder),
            network=settings.build_network,
            timeout_s=settings.build_timeout_s,
        )
    except BuildError as exc:
        raise AdmissionRefusedError(
            _unnamed(str(exc), manifest.name), details=exc.output[-_OUTPUT_KEPT:]
        ) from None
    except RunnerError as exc:
        raise AdmissionRefusedError(_unnamed(str(exc), manifest.name)) from None
    store.add_step(submission.id, "build", output[-_OUTPUT_KEPT:] or "no output", private=True)
    store.add_step(submission.id, "build", "built")


def _unnamed(line: str, bot: str) -> str:
    """A build's line without the bot's name before it (the submission says whose it is)."""
    return line.removeprefix(f"bot {bot}: ")


def _passed(lines: list[str], *, passed: bool) -> None:
    """Refuse a submission whose check did not pass, with the check's verdict and why."""
    if not passed:
        verdict = lines[-1].strip()
        msg = f"its check failed: {verdict.removeprefix('verdict: ')}"
        raise AdmissionRefusedError(msg)


def _sandbox(settings: ArenaSettings, store: ArenaStore, folder: Path) -> Sandbox | None:
    """The sandbox uploads are unpacked and built in (None only with ``--sandbox off``).

    Neither the database nor the bots' logs are in its view; nor, since it shows a bot only
    its own folder, are the other entries.
    """
    return sandbox_for(
        settings.sandbox, SandboxSpec(limits=settings.bot_limits, hidden=(store.path, folder / "logs"))
    )
