"""The environment a bot process is started with: how it finds the referee and the protocol.

A tournament (:mod:`tournaments.play.bots`, :mod:`tournaments.play.sandbox`) sets these for every
bot it starts; the SDK (:mod:`clients.sdk.runner`) and the stdio bridge read them when
``--address`` and ``--token`` are not given. This module imports nothing, so that the
tournament's side can name them without importing the SDK (and so grpc).
"""

from __future__ import annotations

from typing import Final

__all__ = ["ADDRESS_ENV", "PROTO_ENV", "TOKEN_ENV"]

ADDRESS_ENV: Final = "NAP_REFEREE"
"""The referee's gRPC target: ``host:port``, or ``unix:/run/nap/referee.sock`` in a sandbox."""
TOKEN_ENV: Final = "NAP_TOKEN"  # noqa: S105 - the variable's name, not a secret
"""The bot entry's secret token (the stdio bridge keeps it from its program)."""
PROTO_ENV: Final = "NAP_PROTO"
"""Where ``nap.proto`` is, for bots that load it at run time (docs/writing-a-bot.md); the
Python SDK needs none."""
