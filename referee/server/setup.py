"""Process setup for a program that hosts a referee: logs, the garbage collector, a port check."""

from __future__ import annotations

import gc
import logging
import socket
import sys
from typing import Any

import structlog


def configure_logging(*, json: bool = False, level: int = logging.INFO) -> None:
    """Set up structlog for the server: human-readable lines by default, JSON on request."""
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if json
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )


def tune_collector() -> None:
    """Tune CPython's garbage collector for a process that hosts a referee (call it once).

    A referee makes a few small objects per decision, nearly all freed by reference
    counting: in a tournament the collector finds no garbage at all, and its passes only
    cost time. With the default thresholds it runs every 700 allocations and walks the
    long-lived objects again and again (a tenth of a referee's CPU, bench/tournament.py),
    and its full passes over the tables in flight paused a worker for over a second. So
    what is loaded so far is frozen (never walked again); the youngest generation is
    collected every 20,000 allocations (cheap: little of it survives), the middle one
    every second time (so that it stays small), and the oldest rarely.
    """
    gc.freeze()
    gc.set_threshold(20_000, 2, 10)


def port_in_use(host: str, port: int) -> bool:
    """Whether ``host:port`` cannot be bound; probe first, as gRPC core prints a multi-line complaint."""
    if port == 0:
        return False
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False
