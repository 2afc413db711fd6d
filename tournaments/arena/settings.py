"""What an arena is: its rules and tables, fixed at its first start, and its house rules for people.

An :class:`ArenaSettings` is made from ``nap arena serve``'s options the first time an
arena starts and stored in its database; every later start reads it back, so the ladder
keeps one set of rules and table sizes for its whole life (its ratings compare blocks
played under them). A later start that asks for other rules or table sizes is refused in
one line (:meth:`ArenaSettings.differences`); the house rules for people (how many
versions stay on the ladder, how many submissions a day) may change at any start.

The ladder itself is a tournament of the store (:meth:`ArenaSettings.ladder_config`): the
same config a tournament has, with the anchors as its entries at first.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Final

from referee.match import TimeLimits
from referee.rules import DEFAULT_PROFILE, Profile
from tournaments.arena.packs import PackLimits
from tournaments.errors import RunnerError
from tournaments.plan.config import TournamentConfig
from tournaments.plan.entries import BUILTIN_BOTS
from tournaments.plan.isolation import SANDBOX_MODES, BotLimits

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["ANCHORS", "ArenaSettings"]

ANCHORS: Final = ("random", "peel", "pimc")
"""The built-in bots every rating is measured against: they never change, and belong to nobody."""

_FIXED: Final = ("profile", "table_sizes", "decision_ms")
"""What a later start may not change: the ladder's ratings compare blocks played under them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ArenaSettings:
    """An arena's rules, tables and house rules.

    ``table_sizes`` are the tables the ladder seats, in turn (3 to 7 seats, within the
    profile's); ``decision_ms`` each decision's time limit. ``keep`` is how many versions
    of one bot of one owner stay on the ladder (older ones retire, their results kept);
    ``quota`` how many submissions a person may make in 24 hours (refused ones count);
    ``placement_blocks`` how many blocks against the anchors place a new entry;
    ``tables`` how many blocks each worker plays at once (more batch better; fewer finish
    sooner, so a new entry is placed sooner).
    ``sandbox`` and ``bot_limits`` as a tournament's, but ``on`` by default: an arena runs
    anyone's code, so it refuses to start where it cannot isolate it, unless told
    ``off`` (for a trusted test on a machine without bubblewrap). ``build_network`` lets a
    bot's build reach the network (off by default), ``build_timeout_s`` is how long it may run.
    """

    profile: Profile = DEFAULT_PROFILE
    table_sizes: tuple[int, ...] = (4,)
    decision_ms: int = field(default_factory=lambda: TimeLimits().decision_ms)
    keep: int = 2
    quota: int = 10
    placement_blocks: int = 4
    tables: int = 16
    sandbox: str = "on"
    bot_limits: BotLimits = field(default_factory=BotLimits)
    build_network: bool = False
    build_timeout_s: float = 300.0
    pack_limits: PackLimits = field(default_factory=PackLimits)

    def __post_init__(self) -> None:
        if not self.table_sizes:
            msg = "an arena needs at least one table size"
            raise RunnerError(msg)
        low, high = self.profile.min_players, self.profile.max_players
        for size in self.table_sizes:
            if not low <= size <= high:
                msg = f"{self.profile.name} is played by {low} to {high} players, not {size}"
                raise RunnerError(msg)
        for name, least in (
            ("keep", 1),
            ("quota", 1),
            ("placement_blocks", 2),
            ("decision_ms", 1),
            ("tables", 1),
        ):
            if getattr(self, name) < least:
                msg = f"{name} must be at least {least}, got {getattr(self, name)}"
                raise RunnerError(msg)
        if self.sandbox not in SANDBOX_MODES:
            msg = f"sandbox must be one of {', '.join(SANDBOX_MODES)}, got {self.sandbox!r}"
            raise RunnerError(msg)

    @property
    def largest_table(self) -> int:
        """The most seats at any table of the ladder."""
        return max(self.table_sizes)

    def ladder_config(self, *, seed: int, workers: int | None = None) -> TournamentConfig:
        """The ladder's tournament config: the anchors as entries, the largest table, these rules."""
        return TournamentConfig(
            name="arena ladder",
            bots=tuple(BUILTIN_BOTS[name] for name in ANCHORS),
            table_size=self.largest_table,
            sessions=0,
            seed=seed,
            profile=self.profile,
            time_limits=TimeLimits(decision_ms=self.decision_ms),
            concurrency=self.tables,
            workers=workers,
            sandbox=self.sandbox,
            bot_limits=self.bot_limits,
        )

    def differences(self, other: ArenaSettings) -> list[str]:
        """What ``other`` changes of what is fixed for the arena's life, in words (empty: nothing)."""
        return [
            f"{name}: {_shown(getattr(self, name))}, not {_shown(getattr(other, name))}"
            for name in _FIXED
            if getattr(self, name) != getattr(other, name)
        ]

    def with_house_rules(self, other: ArenaSettings) -> ArenaSettings:
        """These settings with ``other``'s house rules (everything but what is fixed)."""
        return replace(other, **{name: getattr(self, name) for name in _FIXED})

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data, as the arena's database keeps it."""
        data: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        data["profile"] = self.profile.to_json(ladder_as_list=True)
        data["table_sizes"] = list(self.table_sizes)
        data["bot_limits"] = self.bot_limits.to_json()
        data["pack_limits"] = self.pack_limits.to_json()
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ArenaSettings:
        """Read :meth:`to_json`'s data (a missing key takes its default)."""
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {key: value for key, value in data.items() if key in known}
        if "profile" in values:
            values["profile"] = Profile.from_json(values["profile"], where="the arena's rules")
        if "table_sizes" in values:
            values["table_sizes"] = tuple(int(size) for size in values["table_sizes"])
        if "bot_limits" in values:
            values["bot_limits"] = BotLimits.from_json(values["bot_limits"])
        if "pack_limits" in values:
            values["pack_limits"] = PackLimits.from_json(values["pack_limits"])
        return cls(**values)


def _shown(value: object) -> str:
    if isinstance(value, Profile):
        return value.name
    if isinstance(value, tuple):
        return ", ".join(str(part) for part in value)
    return str(value)
