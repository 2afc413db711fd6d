"""The ``nap`` commands that messages tell the user to type, and the defaults they leave out.

A message that stops a tournament ends with the exact command that plays the rest; it
names ``--db`` and ``--out`` only where they are not what ``nap`` takes without them.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["DB_VARIABLE", "DEFAULT_DB", "DEFAULT_OUT", "resume_command", "standings_command"]

DEFAULT_DB = Path("nap.db")
"""The database of a ``nap`` command given no ``--db`` (and no ``NAP_DB``)."""
DEFAULT_OUT = Path("nap-out")
"""The output folder of a ``nap`` command given no ``--out``: a folder per tournament
(:mod:`tournaments.report.outfolder`)."""
DB_VARIABLE = "NAP_DB"
"""The environment variable that ``--db`` defaults to."""


def resume_command(
    tournament: int, *, db: Path, logs_root: Path | None = None, flags: Sequence[str] = ()
) -> str:
    """The command that plays the rest of ``tournament``, ready to paste into a shell.

    ``--db`` is named unless ``db`` is the file ``nap`` opens without it (``NAP_DB``, else
    ``nap.db`` in the current folder); ``--out`` unless ``logs_root`` (the ``<out>`` folder,
    which holds ``t<N>/`` with the logs) is None or the default folder; ``flags`` come last
    (the executor's: ``--executor ray --ray-address ...``).
    """
    words = _with_places(["nap", "tournament", "resume", str(tournament)], db, logs_root)
    return shlex.join([*words, *flags])


def standings_command(tournament: int, *, db: Path, out: Path) -> str:
    """The command that writes ``tournament``'s standings files into ``out`` again (``--db`` as above)."""
    words = _with_places(["nap", "standings", str(tournament)], db, None)
    return shlex.join([*words, "--out", str(out)])


def _with_places(words: list[str], db: Path, out: Path | None) -> list[str]:
    """``words`` with ``--db`` and ``--out`` where they are not what ``nap`` takes without them."""
    if not _same_path(db, Path(os.environ.get(DB_VARIABLE) or DEFAULT_DB)):
        words += ["--db", str(db)]
    if out is not None and not _same_path(out, DEFAULT_OUT):
        words += ["--out", str(out)]
    return words


def _same_path(first: Path, second: Path) -> bool:
    return first.resolve() == second.resolve()
