"""Test support: a real referee on 127.0.0.1:0 with real bot processes around it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from referee.rules import PROFILES, Profile
from referee.server import Referee, ServerLimits, SessionSpec, TimeLimits
from referee.wire import nap_pb2

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

BOTS = Path(__file__).resolve().parent
REPO = BOTS.parent.parent


def script(name: str, *args: str) -> list[str]:
    """The command that runs test bot ``name`` (tests/bots/<name>.py)."""
    return [sys.executable, str(BOTS / f"{name}.py"), *args]


def sdk_random_bot(*args: str) -> list[str]:
    """The SDK's example random bot."""
    return [sys.executable, "-m", "clients.bots.random_bot", *args]


@dataclass
class Arena:
    """A running referee, its port and the bot processes started for it."""

    referee: Referee
    port: int
    processes: list[asyncio.subprocess.Process] = field(default_factory=list)

    async def bot(self, name: str, command: list[str], *, wait: bool = True) -> None:
        """Register ``name`` and start its process; wait for its hello unless told not to."""
        token = f"token-{name}"
        self.referee.add_bot(name=name, token=token)
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        process = await asyncio.create_subprocess_exec(
            *command,
            "--address",
            f"127.0.0.1:{self.port}",
            "--token",
            token,
            cwd=REPO,
            env=env,
            stdout=asyncio.subprocess.DEVNULL,
        )
        self.processes.append(process)
        if wait:
            await self.referee.wait_for_bot(name, timeout=20)


@contextlib.asynccontextmanager
async def arena(
    limits: ServerLimits | None = None, *, profile: Profile | None = None
) -> AsyncIterator[Arena]:
    """A referee on an ephemeral port, announcing ``profile`` (heather by default).

    Every bot process is killed on the way out.
    """
    referee = Referee(limits=limits or ServerLimits(), profile=profile or PROFILES["heather"])
    port = await referee.start()
    ring = Arena(referee, port)
    try:
        yield ring
    finally:
        for process in ring.processes:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
        await referee.stop(0.2)


def spec(
    table: str,
    seats: tuple[str, ...],
    *,
    seed: int = 1,
    profile: Profile | None = None,
    decision_ms: int = 2000,
    bank_ms: int = 0,
) -> SessionSpec:
    """A session spec with test-friendly defaults (heather, no bank)."""
    return SessionSpec(
        table=table,
        profile=profile or PROFILES["heather"],
        seed=seed,
        seats=seats,
        time_limits=TimeLimits(decision_ms, bank_ms),
    )


def read_dump(path: Path) -> list[nap_pb2.RefereeMessage]:
    """The messages a test bot recorded with ``--dump``."""
    data = path.read_bytes()
    out, at = [], 0
    while at < len(data):
        (size,) = struct.unpack_from("<I", data, at)
        out.append(nap_pb2.RefereeMessage.FromString(data[at + 4 : at + 4 + size]))
        at += 4 + size
    return out
