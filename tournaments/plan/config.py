"""What defines a tournament: :class:`TournamentConfig`, and its JSON form in the store.

The config is stored with the tournament when it is created, so a resume needs only the
tournament's id. Every default is the dataclass field's: :meth:`TournamentConfig.from_json`
leaves a key that a config stored by an older version lacks to that default, so old
tournaments still load and a default changed here changes everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Final

from referee.match import TimeLimits
from referee.rules import DEFAULT_PROFILE, PROFILES, FaultPolicy, Profile, ProfileError, get_profile
from tournaments.errors import RunnerError
from tournaments.plan.candidate_match import MatchPlan
from tournaments.plan.entries import BotEntry
from tournaments.plan.isolation import SANDBOX_MODES, BotLimits

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["DEFAULT_CONCURRENCY", "TournamentConfig", "stored_profile", "time_limits_from_json"]

DEFAULT_CONCURRENCY = 512
"""Blocks in flight on each referee by default: enough tables for full batches to every bot
(bench/tournament.py: 10,000 sessions take 47.5 s with 512, 54.6 s with 256)."""


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    """Everything that defines a tournament; stored with it, so a resume needs only its id.

    ``sessions`` is rounded up to whole blocks of ``table_size`` sessions. ``concurrency``
    is the number of blocks in flight at once on each worker's referee (each block plays
    its rotations in turn); many tables in flight let a referee batch many decisions per
    message to each bot.
    ``ask_forced`` False (the default): a seat whose only legal action is forced is not
    asked; the referee plays it (see docs/protocol.md).
    ``max_restarts`` bounds the restarts of each bot process after a crash.
    ``connect_timeout_s`` is how long a bot process may take to connect.
    ``workers`` is the number of processes that play blocks, each with its own referee and
    bot processes (:mod:`tournaments.play.executors.workers`); None means one per two cores. With one worker,
    or with remote bots, the referee runs in the runner's own process.
    ``match`` makes the tournament a match (:mod:`tournaments.plan.candidate_match`): every block seats
    the candidate with ``table_size - 1`` of the other entrants, and a sequential test,
    if it has one, ends the tournament as soon as it decides; ``sessions`` is then the
    most it may play.
    ``sandbox`` says whether the bot processes run isolated (:mod:`tournaments.play.sandbox`:
    ``auto``, ``on`` or ``off``) and ``bot_limits`` what each may use there.
    ``profile`` is the rules as a value, resolved once where the user named them (a
    built-in name or a house-rules file): it is stored whole (name, source and every
    parameter), so nothing after the command line reads a rules file, and a resume, a
    status or a remote worker needs only the database.
    ``person`` names the seat a person played through a page (``nap play``): each block
    is then one session, its rotation 0, with the person in the seat they chose, and the
    tournament is not resumed (the seat was a page, now closed).
    """

    name: str
    bots: tuple[BotEntry, ...]
    table_size: int
    sessions: int
    seed: int
    profile: Profile = DEFAULT_PROFILE
    concurrency: int = DEFAULT_CONCURRENCY
    time_limits: TimeLimits = field(default_factory=TimeLimits)
    max_restarts: int = 3
    connect_timeout_s: float = 30.0
    fault_policy: FaultPolicy | None = None
    ask_forced: bool = False
    workers: int | None = None
    match: MatchPlan | None = None
    sandbox: str = "auto"
    bot_limits: BotLimits = field(default_factory=BotLimits)
    person: str | None = None

    def __post_init__(self) -> None:
        if self.sandbox not in SANDBOX_MODES:
            msg = f"sandbox must be one of {', '.join(SANDBOX_MODES)}, got {self.sandbox!r}"
            raise RunnerError(msg)
        if self.workers is not None and self.workers < 1:
            msg = f"workers must be at least 1, got {self.workers}"
            raise RunnerError(msg)
        if self.concurrency < 1:
            msg = f"concurrency must be at least 1, got {self.concurrency}"
            raise RunnerError(msg)
        if self.max_restarts < 0:
            msg = f"max_restarts must not be negative, got {self.max_restarts}"
            raise RunnerError(msg)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data, as the store keeps it: one key per field, in field order."""
        return {f.name: _WRITE.get(f.name, _same)(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TournamentConfig:
        """Read a config written by :meth:`to_json`; a missing key takes the field's default."""
        return cls(**{f.name: _READ[f.name](data[f.name]) for f in fields(cls) if f.name in data})


def time_limits_from_json(data: Mapping[str, Any] | None) -> TimeLimits:
    """Read stored ``time_limits``: a missing key takes :class:`TimeLimits`' default.

    So a config stored before ``margin_ms`` was written loads with no margin (0 ms), and
    one without ``backstop_ms`` (written only when it is set) with the default backstop.
    """
    return TimeLimits(**(data or {}))


def stored_profile(data: object) -> Profile:
    """The stored rules: every parameter, or the name or file path an older Nap Arena stored.

    A built-in name stays readable as it was. An old tournament stored its house rules as
    the file's path: that file is read once more here (the only read of a rules file after
    the command line), and a file gone is one line that says so.
    """
    if isinstance(data, str):
        if data in PROFILES:
            return PROFILES[data]
        try:
            return get_profile(data)
        except (ProfileError, OSError) as exc:
            msg = f"rules {data}: stored as a file's path by an older version, and {exc}"
            raise RunnerError(msg) from exc
    try:
        return Profile.from_json(data)
    except ProfileError as exc:
        msg = f"the stored rules cannot be read: {exc}"
        raise RunnerError(msg) from exc


def _same(value: object) -> object:
    return value


def _optional(read: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else read(value)


_WRITE: Final[Mapping[str, Callable[[Any], object]]] = {
    "bots": lambda bots: [bot.to_json() for bot in bots],
    "time_limits": lambda limits: {
        "decision_ms": limits.decision_ms,
        "session_bank_ms": limits.session_bank_ms,
        "margin_ms": limits.margin_ms,
        **({"backstop_ms": limits.backstop_ms} if limits.backstop_ms else {}),
    },
    "profile": lambda profile: profile.to_json(ladder_as_list=True),  # the store sorts keys
    "fault_policy": lambda policy: None if policy is None else policy.value,
    "match": lambda plan: None if plan is None else plan.to_json(),
    "bot_limits": lambda limits: limits.to_json(),
}
"""How a field that is not plain JSON is written (the others are written as they are)."""

_READ: Final[Mapping[str, Callable[[Any], Any]]] = {
    "name": str,
    "bots": lambda bots: tuple(BotEntry.from_json(bot) for bot in bots),
    "table_size": int,
    "sessions": int,
    "seed": int,
    "profile": stored_profile,
    "concurrency": int,
    "time_limits": time_limits_from_json,
    "max_restarts": int,
    "connect_timeout_s": float,
    "fault_policy": _optional(FaultPolicy),
    "ask_forced": bool,
    "workers": _optional(int),
    "match": _optional(MatchPlan.from_json),
    "sandbox": str,
    "bot_limits": BotLimits.from_json,
    "person": _optional(str),
}
"""How each field is read back from JSON; every field of :class:`TournamentConfig` has one."""
