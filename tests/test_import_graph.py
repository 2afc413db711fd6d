"""In-process play and a Python bot's own search import no gRPC.

A bot that searches with :mod:`referee.rules` and plays through :mod:`clients.sdk`, and a
tournament's in-process player (:func:`tournaments.play.blocks.play_block_in_process`),
never open a network stream: importing them must not load grpc (a large extension
module, slow to import and a process-wide thread pool). Only the SDK's connection
(:mod:`clients.sdk.connection`) and :mod:`referee.server` import it.

The quick test reads the import statements that run when a module is imported (at module
level, outside ``if TYPE_CHECKING:``; imports inside functions run only when called) and
follows them through the project's own modules; the slow one imports the modules in a
fresh interpreter and looks at ``sys.modules``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ("referee", "clients", "tournaments")
"""The project's top-level packages (the modules the walk follows)."""

WITHOUT_GRPC = (
    "referee.rules",
    "referee.match",
    "referee.wire.codec",
    "referee.wire.fastdecode",
    "clients.sdk",
    "clients.sdk.local",
    "clients.bots.peel",
    "clients.bots.pimc",
    "clients.bots.random_bot",
    "tournaments.play.blocks",
)
"""What a bot's own search and in-process play import (the SDK's ``run`` included, unstarted)."""


def _source(module: str) -> Path | None:
    """The file of a project module (a package's ``__init__.py``), None if there is none."""
    base = ROOT.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported_at_import(body: list[ast.stmt], package: str) -> list[str]:
    """The modules ``body``'s statements import when they run at import time (not inside functions)."""
    found: list[str] = []
    for node in body:
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.append(base)
            found += [f"{base}.{alias.name}" for alias in node.names]  # a submodule, if it is one
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                found += _imported_at_import(node.body, package)
            found += _imported_at_import(node.orelse, package)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                found += _imported_at_import(block, package)
        elif isinstance(node, (ast.With, ast.ClassDef)):
            found += _imported_at_import(node.body, package)
    return found


def imported_by(root: str) -> set[str]:
    """Every module importing ``root`` loads, as far as the project's own sources tell.

    Importing ``a.b.c`` runs ``a``, ``a.b`` and ``a.b.c``; third-party and standard modules
    are leaves (their own imports are not read).
    """
    seen: set[str] = set()
    pending = [root]
    while pending:
        module = pending.pop()
        parts = module.split(".")
        for end in range(1, len(parts) + 1):
            name = ".".join(parts[:end])
            if name in seen:
                continue
            if parts[0] in PROJECT:
                path = _source(name)
                if path is None:
                    continue  # a name imported from a module, not a submodule
                seen.add(name)
                package = name if path.name == "__init__.py" else name.rpartition(".")[0]
                pending += _imported_at_import(ast.parse(path.read_text()).body, package)
            else:
                seen.add(name)
    return seen


@pytest.mark.parametrize("module", WITHOUT_GRPC)
def test_a_bots_search_and_in_process_play_import_no_grpc(module: str) -> None:
    """No import that runs when the module is imported reaches grpc (or the referee's server)."""
    reached = imported_by(module)
    assert module in reached
    assert not {name for name in reached if name.split(".")[0] == "grpc" or name.startswith("referee.server")}


def test_the_walk_sees_grpc_where_it_is() -> None:
    """The SDK's connection and the referee's server do import grpc (the walk finds imports)."""
    assert "grpc.aio" in imported_by("clients.sdk.connection")
    assert "grpc" in imported_by("referee.server")


@pytest.mark.slow
def test_no_grpc_in_a_fresh_interpreter() -> None:
    """Imported for real: grpc is not among the loaded modules."""
    code = f"import sys, {', '.join(WITHOUT_GRPC)}; print(sorted(m for m in sys.modules if 'grpc' in m))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_in_process_play_has_the_referees_limits_by_default() -> None:
    """Without the server's limits, in-process play's match core keeps the referee's defaults."""
    from referee.match import Simulation  # noqa: PLC0415
    from referee.server import ServerLimits  # noqa: PLC0415

    arbiter, limits = Simulation().arbiter, ServerLimits()
    assert arbiter.fault_limit == limits.fault_limit
    assert arbiter.reconnect_grace_ms == limits.reconnect_grace_s * 1000
    assert arbiter.max_outstanding == limits.max_outstanding
    assert arbiter.max_unknown_answers == limits.max_unknown_answers
