"""Which executor played a tournament's latest run, kept beside the database for ``nap tournament status``.

The runner records the :class:`~tournaments.play.executors.base.Usage` in
``<db>-t<N>.executor.json`` (beside the lock file, :mod:`tournaments.play.locks`) when a run
starts playing and whenever its workers change: a Ray worker lost, or one more placed by
the cluster. It is for people only: the store, not this file, says what was played, and a
database moved without it loses nothing but this line of ``nap tournament status``.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

from tournaments.play.executors.base import Usage

__all__ = ["record_usage", "recorded_usage", "usage_path"]


def usage_path(db: Path, tournament: int) -> Path:
    """Where the executor of ``tournament``'s latest run is recorded, beside the database's real file."""
    real = db.resolve()
    return real.with_name(f"{real.name}-t{tournament}.executor.json")


def record_usage(db: Path, tournament: int, usage: Usage) -> None:
    """Replace the record at once (a reader never sees half of it); a failure to write is ignored."""
    path = usage_path(db, tournament)
    data = json.dumps(
        {
            "executor": usage.executor,
            "workers": usage.workers,
            "description": usage.description,
            "lost": usage.lost,
            "resume_flags": list(usage.resume_flags),
        }
    )
    with contextlib.suppress(OSError):
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(data + "\n")
            Path(temp).replace(path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise


def recorded_usage(db: Path, tournament: int) -> Usage | None:
    """The executor recorded for ``tournament``'s latest run, or None when there is no readable record."""
    try:
        data = json.loads(usage_path(db, tournament).read_text(encoding="utf-8"))
        return Usage(
            executor=str(data["executor"]),
            workers=int(data["workers"]),
            description=str(data["description"]),
            lost=int(data.get("lost", 0)),
            resume_flags=tuple(str(flag) for flag in data.get("resume_flags", ())),
        )
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
