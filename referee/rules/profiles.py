"""Rules profiles: one frozen value per seed document or variation, plus house rules from TOML.

A profile holds every parameter on which the source documents differ. The engine reads
nothing else, so a house rule is a profile with some parameters changed.

Readings we settled where the seeds are terse (see ``docs/rules.md``):

- All pass: the deal scores zero, still counts as one of the session's deals, and the
  deal passes to the next dealer (seeds 000 and 001 agree).
- Wellington and Blücher are "only over" the contract below them: they can be bid only
  when the current highest bid is exactly Nap (resp. Wellington).
- Seed 002 leaves Blücher's value to the table: we default to triple Nap (30 won, 15
  lost), as seed 001 has it.
- First dealer: seed 001 says lowest card of a draw, Ace low; seed 000 and 002 only say
  "draw", and we use the same rule for them so that every profile draws the same way.
- Seven-card Nap (seed 001's variation): bids Three, Misère, Four, Nap, Six, Seven; the
  seed gives only "Seven pays 24 per opponent". The other stakes are ours: Three to Nap
  as in full-ladder, Six 18/9 and Seven 24/12 (won / lost, lost half of won as for Nap).
- Short packs (seed 001: "28 to 40 cards depending on the number of players") strip
  the lowest ranks; a profile names its pack by its size (``pack_size``), or by the size
  of the table (``pack_sizes``; house rules' ``pack_size = "by-table"`` is
  :data:`PACKS_BY_TABLE`: 28 cards for 3 or 4 players, then 4 more a player, 40 for 7).
- Purchase, Écarté and Peep Nap (seed 001's variations) are full-ladder with an exchange
  round before the auction (``exchange_max`` cards at most, a fee per exchange or per
  card) or a widow card to peep at and take (``widow``, ``peep_fee``). The fees go into a
  pool that the next declarer to make ``pool_claim`` (Nap) or higher takes; what is left
  at the session's end goes back to those who paid it in.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Collection, Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from enum import Enum
from pathlib import Path
from types import UnionType
from typing import Any, Final, get_args, get_type_hints

from referee.rules.cards import Card, pack_of
from referee.rules.errors import RulesError, did_you_mean

PACK_SIZES: Final = (28, 32, 36, 40, 52)
"""The packs a profile may use: the whole pack, or a short pack of seed 001 (28 to 40 cards)."""

PACKS_BY_TABLE: Final = ((3, 28), (4, 28), (5, 32), (6, 36), (7, 40))
"""Our reading of seed 001's "28 a 40 cartas dependendo do número de jogadores": (players, cards).

28 cards (Ace down to 8) for 3 or 4 players, then one rank more (4 cards) for each player
more: 32 for 5, 36 for 6, 40 (Ace down to 5) for 7. Five-card hands and a widow always
leave an undealt stock (13, 8, 7, 6 and 5 cards without the widow). What house rules'
``pack_size = "by-table"`` gives, for the table sizes the profile seats.
"""

BY_TABLE: Final = "by-table"
"""The house rule ``pack_size = "by-table"``: the pack of :data:`PACKS_BY_TABLE`."""


class FaultPolicy(Enum):
    """What happens to the game when a bot faults (late, illegal, malformed, gone)."""

    SUBSTITUTE = "substitute"
    """The referee plays for the bot: pass in bidding, the lowest legal card in play."""
    REVOKE = "revoke"
    """Seed 001's revoke settlement: a faulting declarer settles as failed; a faulting
    defender alone pays the declarer what all opponents would pay for a made contract.
    Either way the deal stops there."""


_ALWAYS_WRITTEN: Final = frozenset(
    {"name", "source", "summary", "min_players", "max_players", "deals_per_session", "hand_size"}
    | {"deal_pattern", "pack_size", "starting_chips", "rebuy", "tie_break_deal", "fault_policy"}
)
"""The parameters every record's ``rules`` holds (:meth:`Profile.to_json`), the ladder aside.

Any other parameter is written only where it differs from its default (with its group,
:data:`_POOL_GROUP`): one added later leaves the records of the profiles that do not use
it as they were, and a record without it reads with its default (``docs/rules.md``).
"""

_POOL_GROUP: Final = {"group": "pool"}
"""Field metadata of a pool variant's parameter (:data:`POOL_PARAMETERS`): they are written
together, where one of them differs from its default."""


@dataclass(frozen=True, slots=True)
class Contract:
    """One rung of the bidding ladder.

    ``tricks`` is how many tricks the declarer promises (at least); for a misère it is 0
    and the declarer must take none. ``win`` is what each opponent pays the declarer when
    the contract is made, ``lose`` what the declarer pays each opponent when it fails
    (chips per opponent). ``over`` names the contract that must be the current highest
    bid for this one to be allowed (Wellington over Nap, Blücher over Wellington).
    """

    name: str
    label: str
    tricks: int
    win: int
    lose: int
    misere: bool = False
    over: str | None = None

    def made(self, tricks_taken: int) -> bool:
        """Whether a declarer who took ``tricks_taken`` tricks fulfilled this contract."""
        return tricks_taken == 0 if self.misere else tricks_taken >= self.tricks

    def to_json(self) -> dict[str, object]:
        """Every field by name, in order (all plain JSON values)."""
        return {name: getattr(self, name) for name in _CONTRACT_FIELDS}

    @classmethod
    def from_json(cls, data: object, *, where: str) -> Contract:
        """Read :meth:`to_json`'s data; a ProfileError names the field, after ``where``."""
        return cls(**_read_fields(data, _CONTRACT_FIELDS, where=where))


@dataclass(frozen=True, slots=True)
class Profile:
    """A complete set of rules for a table.

    Every parameter is a field with its default, and its type annotation is all that its
    readers and writers need: :meth:`to_json` and :meth:`from_json` (records, the
    tournament store, standings), house rules (:func:`load_profile`: every parameter but
    ``name`` and ``source`` may be set) and the wire's text (:func:`parameter_texts`). A
    new parameter is one field here, with its default and its docstring (and, where a
    check spans fields, a line of :func:`_validate`).

    A table plays :meth:`at_table`, this profile with its table's pack as ``pack_size``
    (a session, a deal and a record do that themselves).
    """

    name: str
    source: str
    """Where the rules come from: a seed document, or the house-rules file and its base."""
    summary: str
    """The rules in one paragraph, for people."""
    contracts: tuple[Contract, ...]
    """The ladder from lowest to highest; every bid must be strictly higher than the current highest."""
    min_players: int = 3
    max_players: int = 7
    deals_per_session: int = 8
    hand_size: int = 5
    deal_pattern: tuple[int, ...] = (3, 2)
    """How a hand is dealt: 3 cards to each seat, then 2 (it adds up to ``hand_size``)."""
    pack_size: int = 52
    """The cards in the pack: 52, or a short pack (:data:`PACK_SIZES`) without its lowest
    ranks (32 is Ace down to 7)."""
    pack_sizes: tuple[tuple[int, int], ...] = ()
    """The pack sized by the table instead: (players, cards) pairs, fewest players first; a
    table of a size listed there plays that pack, any other ``pack_size``. In JSON a table
    from the players (text) to the cards: ``{"3": 28, "4": 28}``."""
    starting_chips: int | None = None
    """None: unlimited accounting units (balances may go negative). A number: finite
    stacks; a seat whose stack falls to zero or below is eliminated (or rebuys)."""
    rebuy: bool = False
    """A seat out of chips stakes the starting chips again, as many times as it takes to
    have chips (seed 001's "nova aposta inicial para voltar ao jogo")."""
    tie_break_deal: bool = False
    """One more deal among the seats tied for the lead after the last deal (seed 001)."""
    fault_policy: FaultPolicy = FaultPolicy.SUBSTITUTE
    """What happens to the game when a bot faults."""
    exchange_max: int = field(default=0, metadata=_POOL_GROUP)
    """The most cards a seat may exchange with the undealt stock before the auction (0: no
    exchange round; seed 001's Purchase and Écarté Nap)."""
    exchange_fee_per_card: bool = field(default=False, metadata=_POOL_GROUP)
    """An exchange costs ``exchange_fee`` per card given up, not per exchange."""
    exchange_fee: int = field(default=1, metadata=_POOL_GROUP)
    """Chips an exchange costs, into the pool."""
    widow: bool = field(default=False, metadata=_POOL_GROUP)
    """One card is dealt face down after the hands (seed 001's Peep Nap): a seat may pay
    ``peep_fee`` at its turn in the auction to look at it, and the declarer may take it
    for a card of its hand."""
    peep_fee: int = field(default=1, metadata=_POOL_GROUP)
    """Chips a look at the widow costs, into the pool."""
    pool_claim: str = field(default="nap", metadata=_POOL_GROUP)
    """The lowest contract whose making takes the pool (fees not yet claimed); what is left
    at the session's end goes back to those who paid it in."""
    _by_name: dict[str, Contract] = field(init=False, repr=False, compare=False, hash=False)
    _tables: dict[int, Profile] = field(init=False, repr=False, compare=False, hash=False)
    """:meth:`at_table`'s profiles, made once per table size (a cache: not part of the value)."""
    _ladder: object = field(init=False, repr=False, compare=False, hash=False)
    """The engine's :class:`~referee.rules.deal.Ladder` of this profile, once a deal made it
    (None before; opaque here, so that the rules' values do not depend on the engine).

    A cache owned by the profile (not part of its value, never pickled): an equal profile
    from another process or an unpickling makes its own, and it goes when the profile goes.
    """

    def __post_init__(self) -> None:
        self._fill_caches()
        _validate(self)

    def _fill_caches(self) -> None:
        object.__setattr__(self, "_by_name", {c.name: c for c in self.contracts})
        object.__setattr__(self, "_tables", {})
        object.__setattr__(self, "_ladder", None)

    def __getstate__(self) -> tuple[object, ...]:
        """The parameters only: the caches are made again where the profile is unpickled."""
        return tuple(getattr(self, f.name) for f in fields(self) if f.init)

    def __setstate__(self, state: tuple[object, ...]) -> None:
        for f, value in zip((f for f in fields(self) if f.init), state, strict=True):
            object.__setattr__(self, f.name, value)
        self._fill_caches()

    @property
    def pack(self) -> tuple[Card, ...]:
        """The cards of this profile's pack, in sorted order (``CARDS`` for 52).

        With ``pack_sizes``, the pack of the table sizes not listed there: a table's pack
        is :meth:`pack_at` (or the ``pack`` of :meth:`at_table`).
        """
        return pack_of(self.pack_size)

    def pack_size_at(self, players: int) -> int:
        """The number of cards in the pack of a table of ``players`` seats."""
        for size, cards in self.pack_sizes:
            if size == players:
                return cards
        return self.pack_size

    def pack_at(self, players: int) -> tuple[Card, ...]:
        """The cards of the pack of a table of ``players`` seats, in sorted order."""
        return pack_of(self.pack_size_at(players))

    def at_table(self, players: int) -> Profile:
        """The profile a table of ``players`` seats plays: this one, with that table's pack as ``pack_size``.

        This very profile when its ``pack_size`` is that table's already (always without
        ``pack_sizes``); otherwise one profile per table size, made once. It keeps
        ``pack_sizes``, so that its own :meth:`at_table` of the same size is itself and its
        parameters (a record's rules) say both the table's pack and the rule that chose it.
        """
        size = self.pack_size_at(players)
        if size == self.pack_size:
            return self
        table = self._tables.get(players)
        if table is None:
            table = self._tables[players] = replace(self, pack_size=size)
        return table

    def contract(self, name: str) -> Contract:
        """The contract called ``name``; KeyError if this profile has none."""
        return self._by_name[name]

    def has(self, name: str) -> bool:
        """Whether this profile's ladder has a contract called ``name``."""
        return name in self._by_name

    def rank_of(self, name: str) -> int:
        """Position of a contract on the ladder (0 = lowest)."""
        return self.contracts.index(self._by_name[name])

    @property
    def has_pool(self) -> bool:
        """Whether seats pay into a pool in this profile: an exchange round or a widow."""
        return self.exchange_max > 0 or self.widow

    def claims_pool(self, contract: str) -> bool:
        """Whether making ``contract`` takes the pool: it is ``pool_claim`` or higher on the ladder."""
        if not self.has(self.pool_claim) or not self.has(contract):
            return False
        return self.rank_of(contract) >= self.rank_of(self.pool_claim)

    def exchange_cost(self, cards: int) -> int:
        """Chips an exchange of ``cards`` cards costs (0 for declining)."""
        if not cards:
            return 0
        return self.exchange_fee * cards if self.exchange_fee_per_card else self.exchange_fee

    def to_json(self, *, ladder_as_list: bool = False) -> dict[str, object]:
        """Every parameter as JSON-ready data, in field order, the ladder last.

        The ladder is a table from each contract's name to its other fields, lowest first,
        as records have it. ``ladder_as_list`` writes it as a list of the contracts instead
        (:meth:`Contract.to_json`, each with its name): JSON's tables have no order, and a
        writer that sorts keys (the tournament store does) would reorder the ladder.
        A parameter not in :data:`_ALWAYS_WRITTEN` is left out where it (and its group: the
        pool variants') has its default, so the record of a profile that does not use a
        later parameter is what it was before the parameter existed; :meth:`from_json`
        gives every profile back exactly.
        """
        used = {f.group for f in _PROFILE_FIELDS.values() if getattr(self, f.name) != f.default}
        out = {
            name: f.kind.write(getattr(self, name))
            for name, f in _PROFILE_FIELDS.items()
            if f.group is None or f.group in used
        }
        ladder = [contract.to_json() for contract in self.contracts]
        out["contracts"] = (
            ladder
            if ladder_as_list
            else {entry["name"]: {k: v for k, v in entry.items() if k != "name"} for entry in ladder}
        )
        return out

    @classmethod
    def from_json(cls, data: object, *, where: str = "rules") -> Profile:
        """Read :meth:`to_json`'s data, the ladder in either shape; a missing parameter takes its default.

        So a record or a config written before a parameter existed reads as the rules it
        was played by. A ProfileError names what is wrong, after ``where``.
        """
        if not isinstance(data, Mapping):
            msg = f"{where}: a profile's parameters are missing"
            raise ProfileError(msg)
        given = dict(data)
        if "contracts" not in given:
            msg = f"{where}: missing field 'contracts'"
            raise ProfileError(msg)
        contracts = _ladder_from_json(given.pop("contracts"), where=where)
        return cls(contracts=contracts, **_read_fields(given, _PROFILE_FIELDS, where=where))


class ProfileError(RulesError):
    """A profile (usually a house-rules file) is invalid; the message names the field."""


@dataclass(frozen=True, slots=True)
class _Kind:
    """How the values of one type annotation are checked, read and written, as JSON (or TOML) and as text."""

    problem: Callable[[object, str], str | None]
    """What is wrong with a JSON or TOML value for the field named (a message naming it), or None."""
    read: Callable[[Any], object] = lambda value: value
    """The field's value from a JSON value without a problem."""
    write: Callable[[Any], object] = lambda value: value
    """The JSON value of the field's value."""
    text: Callable[[Any], str] = str
    """The field's value as one line of text (the wire's ``Profile.parameters``)."""
    parse: Callable[[str], object] = str
    """The field's value from its text; ValueError where the text says none."""


@dataclass(frozen=True, slots=True)
class _Field:
    """A field of :class:`Profile` or :class:`Contract`, with its kind, default and group."""

    name: str
    kind: _Kind
    default: object
    """The field's default (``MISSING``: the field is required)."""
    group: str | None
    """The parameters written together (their own name, or :data:`_POOL_GROUP`'s), or None: always written."""

    def read(self, value: object, *, where: str) -> object:
        """The field's value from a JSON or TOML value; ProfileError naming the field, after ``where``."""
        problem = self.kind.problem(value, self.name)
        if problem is not None:
            msg = f"{where}: {problem}"
            raise ProfileError(msg)
        return self.kind.read(value)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _must_be(expected: str, accepts: Callable[[object], bool]) -> Callable[[object, str], str | None]:
    def problem(value: object, key: str) -> str | None:
        return None if accepts(value) else f"field {key!r} must be {expected}, got {value!r}"

    return problem


def _pack_sizes_problem(value: object, key: str) -> str | None:
    if not isinstance(value, Mapping):
        return f"field {key!r} must be a table from the number of players to the cards (3 = 28)"
    for players, cards in value.items():
        if not (isinstance(players, str) and players.isdigit()):
            return f"field '{key}.{players}': a number of players, not {players!r}"
        if not _is_int(cards):
            return f"field '{key}.{players}' must be an integer, got {cards!r}"
    return None


def _parse_pack_sizes(text: str) -> tuple[tuple[int, int], ...]:
    """``"3:28,7:40"``: a table of 3 plays 28 cards, of 7 40 cards (``""``: none)."""
    pairs = (part.partition(":") for part in text.split(",")) if text else ()
    return tuple((int(players), int(cards)) for players, _, cards in pairs)


def _optional(kind: _Kind) -> _Kind:
    """``kind`` or None (``null`` in JSON, ``""`` as text)."""
    return _Kind(
        problem=lambda value, key: None if value is None else kind.problem(value, key),
        read=lambda value: None if value is None else kind.read(value),
        write=lambda value: None if value is None else kind.write(value),
        text=lambda value: "" if value is None else kind.text(value),
        parse=lambda text: None if not text else kind.parse(text),
    )


def _enum(kind: type[Enum]) -> _Kind:
    """One of the enumeration's members, by its value."""
    values = [member.value for member in kind]
    choices = ", ".join(map(str, values))
    return _Kind(
        problem=lambda value, key: None if value in values else f"field {key!r} must be one of: {choices}",
        read=kind,
        write=lambda member: member.value,
        text=lambda member: str(member.value),
        parse=kind,
    )


_KINDS: Final[dict[object, _Kind]] = {
    int: _Kind(_must_be("an integer", _is_int), parse=int),
    bool: _Kind(
        _must_be("bool", lambda value: isinstance(value, bool)),
        text=lambda value: "true" if value else "false",
        parse=lambda text: text == "true",
    ),
    str: _Kind(_must_be("str", lambda value: isinstance(value, str))),
    tuple[int, ...]: _Kind(
        _must_be(
            "a list of integers",
            lambda value: isinstance(value, list | tuple) and all(map(_is_int, value)),
        ),
        read=tuple,
        write=list,
        text=lambda value: ",".join(map(str, value)),
        parse=lambda text: tuple(int(part) for part in text.split(",")),
    ),
    tuple[tuple[int, int], ...]: _Kind(
        _pack_sizes_problem,
        read=lambda value: tuple(sorted((int(players), cards) for players, cards in value.items())),
        write=lambda value: {str(players): cards for players, cards in value},
        text=lambda value: ",".join(f"{players}:{cards}" for players, cards in value),
        parse=_parse_pack_sizes,
    ),
}
"""The kind of each type annotation a field may have (enumerations and ``X | None`` aside)."""


def _kind_of(hint: object) -> _Kind:
    """The kind of a field's type annotation; TypeError for a type that has none yet."""
    if hint in _KINDS:
        return _KINDS[hint]
    if isinstance(hint, type) and issubclass(hint, Enum):
        return _enum(hint)
    args = get_args(hint)
    if isinstance(hint, UnionType) and len(args) == 2 and type(None) in args:
        return _optional(_kind_of(next(arg for arg in args if arg is not type(None))))
    msg = f"a profile's fields may not be of type {hint} (no JSON and text form in _KINDS)"
    raise TypeError(msg)


def _fields_of(cls: type, *, always: Collection[str] | None = None, but: str = "") -> dict[str, _Field]:
    """The fields of ``cls`` given to its constructor (but the one named ``but``), by name, in order.

    ``always`` names the fields always written; the others are written where they (or
    their group) differ from their defaults. None: every field is always written.
    """
    hints = get_type_hints(cls)
    return {
        f.name: _Field(
            f.name,
            _kind_of(hints[f.name]),
            f.default,
            None if always is None or f.name in always else f.metadata.get("group", f.name),
        )
        for f in fields(cls)
        if f.init and f.name != but
    }


_CONTRACT_FIELDS: Final = _fields_of(Contract)
_PROFILE_FIELDS: Final = _fields_of(Profile, always=_ALWAYS_WRITTEN, but="contracts")
"""Every parameter of a profile but its ladder, by name, in field order."""

POOL_PARAMETERS: Final = tuple(name for name, f in _PROFILE_FIELDS.items() if f.group == _POOL_GROUP["group"])
"""The parameters of the pool variants (Purchase, Écarté, Peep Nap)."""


def _read_fields(data: object, known: Mapping[str, _Field], *, where: str) -> dict[str, Any]:
    """The values of the fields ``data`` gives; a field it lacks takes its default, if it has one.

    ProfileError, after ``where``, for data that is no table, an unknown field, a value of
    the wrong type or a required field missing.
    """
    if not isinstance(data, Mapping):
        msg = f"{where}: a table of fields, not {data!r}"
        raise ProfileError(msg)
    values = {}
    for key, value in data.items():
        known_field = known.get(key)
        if known_field is None:
            msg = f"{where}: unknown field {key!r}"
            raise ProfileError(msg)
        values[key] = known_field.read(value, where=where)
    for name, known_field in known.items():
        if known_field.default is MISSING and name not in values:
            msg = f"{where}: missing field {name!r}"
            raise ProfileError(msg)
    return values


def _ladder_from_json(ladder: object, *, where: str) -> tuple[Contract, ...]:
    """The contracts of a ladder written by :meth:`Profile.to_json`: a table by name, or a list."""
    if isinstance(ladder, Mapping):
        ladder = [
            {"name": name, **entry} if isinstance(entry, Mapping) else entry for name, entry in ladder.items()
        ]
    if not isinstance(ladder, list):
        msg = f"{where}: field 'contracts' must be a list of contracts, or a table of them by name"
        raise ProfileError(msg)
    return tuple(
        Contract.from_json(entry, where=f"{where}: contracts[{index}]") for index, entry in enumerate(ladder)
    )


def _validate(profile: Profile) -> None:
    if not 2 <= profile.min_players <= profile.max_players:
        msg = f"{profile.name}: min_players must be 2..max_players"
        raise ProfileError(msg)
    if profile.pack_size not in PACK_SIZES:
        msg = (
            f"{profile.name}: pack_size must be 52, or 28, 32, 36 or 40 for a short pack "
            f"(the lowest ranks stripped), not {profile.pack_size}"
        )
        raise ProfileError(msg)
    if profile.pack_sizes:
        _validate_pack_sizes(profile)
    elif pack_shortfall(profile, profile.max_players) is not None:
        widow = " and a widow" if profile.widow else ""
        msg = (
            f"{profile.name}: pack_size {profile.pack_size} is too small for max_players "
            f"{profile.max_players} with hand_size {profile.hand_size}{widow}: "
            f"{profile.max_players * profile.hand_size + profile.widow} cards needed"
        )
        raise ProfileError(msg)
    if sum(profile.deal_pattern) != profile.hand_size:
        msg = f"{profile.name}: deal_pattern must add up to hand_size ({profile.hand_size})"
        raise ProfileError(msg)
    if profile.deals_per_session < 1:
        msg = f"{profile.name}: deals_per_session must be at least 1"
        raise ProfileError(msg)
    if profile.starting_chips is not None and profile.starting_chips < 1:
        msg = f"{profile.name}: starting_chips must be positive (or absent for unlimited)"
        raise ProfileError(msg)
    _validate_ladder(profile)
    _validate_pool(profile)


def _validate_pack_sizes(profile: Profile) -> None:
    """Each pack of ``pack_sizes`` is a pack, for a table size the profile seats, and deals every table."""
    seats = range(profile.min_players, profile.max_players + 1)
    listed = [players for players, _ in profile.pack_sizes]
    if listed != sorted(set(listed)):
        msg = f"{profile.name}: pack_sizes: one pack per table size, fewest players first, not {listed}"
        raise ProfileError(msg)
    for players, cards in profile.pack_sizes:
        if players not in seats:
            msg = (
                f"{profile.name}: pack_sizes: no table of {players} players in {profile.name} "
                f"({profile.min_players} to {profile.max_players} players)"
            )
            raise ProfileError(msg)
        if cards not in PACK_SIZES:
            msg = (
                f"{profile.name}: pack_sizes: the pack for {players} players must be 52, or 28, 32, "
                f"36 or 40 cards for a short pack, not {cards}"
            )
            raise ProfileError(msg)
    for players in seats:
        shortfall = pack_shortfall(profile, players)
        if shortfall is not None:
            which = "pack_sizes" if players in listed else "pack_size (the tables pack_sizes does not list)"
            msg = f"{profile.name}: {which}: {shortfall}"
            raise ProfileError(msg)


def _validate_pool(profile: Profile) -> None:
    if not 0 <= profile.exchange_max <= profile.hand_size:
        msg = (
            f"{profile.name}: exchange_max must be 0 (no exchange) to hand_size "
            f"({profile.hand_size}), not {profile.exchange_max}"
        )
        raise ProfileError(msg)
    for name in ("exchange_fee", "peep_fee"):
        if getattr(profile, name) < 0:
            msg = f"{profile.name}: {name} must not be negative"
            raise ProfileError(msg)
    if profile.has_pool and not profile.has(profile.pool_claim):
        ladder = ", ".join(c.name for c in profile.contracts)
        msg = f"{profile.name}: pool_claim: no contract {profile.pool_claim!r} in the ladder ({ladder})"
        raise ProfileError(msg)


def pack_shortfall(profile: Profile, players: int) -> str | None:
    """Why the pack of ``players`` seats of ``profile`` cannot deal each a hand (and the widow), or None."""
    needed = players * profile.hand_size + profile.widow
    pack_size = profile.pack_size_at(players)
    if needed <= pack_size:
        return None
    widow = " and the widow" if profile.widow else ""
    return (
        f"a {pack_size}-card pack is too small for {players} players of "
        f"{profile.hand_size} cards{widow}: {needed} cards needed"
    )


def _validate_ladder(profile: Profile) -> None:
    if not profile.contracts:
        msg = f"{profile.name}: contracts: a ladder needs at least one contract"
        raise ProfileError(msg)
    names = [c.name for c in profile.contracts]
    for contract in profile.contracts:
        if contract.over is not None and contract.over not in names[: names.index(contract.name)]:
            msg = f"{profile.name}: contracts.{contract.name}.over: no lower contract {contract.over!r}"
            raise ProfileError(msg)
        if contract.win < 0 or contract.lose < 0:
            msg = f"{profile.name}: contracts.{contract.name}: stakes must not be negative"
            raise ProfileError(msg)
        if not 0 <= contract.tricks <= profile.hand_size:
            msg = f"{profile.name}: contracts.{contract.name}.tricks must be 0..{profile.hand_size}"
            raise ProfileError(msg)


def _c(  # noqa: PLR0913 - a contract's fields, the last ones by keyword
    name: str,
    label: str,
    tricks: int,
    win: int,
    lose: int | None = None,
    *,
    misere: bool = False,
    over: str | None = None,
) -> Contract:
    """A contract of a built-in ladder; ``lose`` defaults to ``win`` (the stake won or lost alike)."""
    return Contract(name, label, tricks, win, win if lose is None else lose, misere, over)


HEATHER: Final = Profile(
    name="heather",
    source="seed 000 (H. E. Heather, The Bazaar, October 1875)",
    summary="Three / Four / Nap / Wellington (only over Nap); 3/4/5/10 per opponent, "
    "won or lost alike; unlimited accounting units.",
    contracts=(
        _c("three", "Three", 3, 3),
        _c("four", "Four", 4, 4),
        _c("nap", "Nap", 5, 5),
        _c("wellington", "Wellington", 5, 10, over="nap"),
    ),
)

_PUB_LADDER: Final = (
    _c("three", "Three", 3, 3),
    _c("misere", "Misère", 0, 3, misere=True),
    _c("four", "Four", 4, 4),
    _c("nap", "Nap", 5, 10, 5),
    _c("wellington", "Wellington", 5, 20, 10, over="nap"),
    _c("blucher", "Blücher", 5, 30, 15, over="wellington"),
)
"""Seeds 001 and 002 agree from Three up: Misère 3/3, Nap 10/5, Wellington and Blücher 2x and 3x Nap."""

FULL_LADDER: Final = Profile(
    name="full-ladder",
    source="seed 001 (pub rules: Misère, Wellington, Blücher, revokes, finite chips)",
    summary="Three / Misère / Four / Nap / Wellington / Blücher; Nap 10/5, Wellington 20/10, "
    "Blücher 30/15, Misère 3/3; equal finite stacks with elimination; tied leaders play "
    "one extra deal.",
    contracts=_PUB_LADDER,
    starting_chips=200,
    tie_break_deal=True,
    fault_policy=FaultPolicy.REVOKE,
)

SEVEN_CARD: Final = Profile(
    name="seven-card",
    source="seed 001, common variations (seven-card Nap: 'Seven pays 24'; the other stakes are ours)",
    summary="Seven cards each, dealt 4 then 3; Three / Misère / Four / Nap (five tricks) / Six / "
    "Seven, no Wellington or Blücher; Three 3/3, Misère 3/3, Four 4/4, Nap 10/5, Six 18/9, "
    "Seven 24/12; full-ladder's chips, tie-break and revoke.",
    contracts=(
        _c("three", "Three", 3, 3),
        _c("misere", "Misère", 0, 3, misere=True),
        _c("four", "Four", 4, 4),
        _c("nap", "Nap", 5, 10, 5),
        _c("six", "Six", 6, 18, 9),
        _c("seven", "Seven", 7, 24, 12),
    ),
    hand_size=7,
    deal_pattern=(4, 3),
    starting_chips=FULL_LADDER.starting_chips,
    tie_break_deal=FULL_LADDER.tie_break_deal,
    fault_policy=FULL_LADDER.fault_policy,
)
"""Seed 001's seven-card Nap on full-ladder's conventions (7 players x 7 cards = 49 <= 52)."""

TWO_TO_FIVE: Final = Profile(
    name="two-to-five",
    source="seed 002 (bids from Two to Five; Blücher agreed per table)",
    summary="Two / Three / Misère / Four / Nap (Five) / Wellington / Blücher; Misère 3 either "
    "way; Nap 10/5; Wellington double Nap; Blücher 30/15 by default; 3-6 players.",
    contracts=(_c("two", "Two", 2, 2), *_PUB_LADDER),
    max_players=6,
)

PURCHASE: Final = Profile(
    name="purchase",
    source="seed 001, common variations (Purchase Nap: 'each player may pay a stake to exchange "
    "a fixed number of cards with the unseen cards'; the details are ours)",
    summary="Before the auction each seat from the eldest may pay 1 chip into the pool to exchange "
    "1 to 3 cards with the undealt stock; the next Nap or higher made takes the pool; "
    "full-ladder's ladder, stakes, chips, tie-break and revoke.",
    contracts=_PUB_LADDER,
    starting_chips=FULL_LADDER.starting_chips,
    tie_break_deal=FULL_LADDER.tie_break_deal,
    fault_policy=FULL_LADDER.fault_policy,
    exchange_max=3,
)
"""Seed 001's Purchase Nap on full-ladder's conventions: one chip per exchange, three cards at most."""

ECARTE: Final = replace(
    PURCHASE,
    name="ecarte",
    source="seed 001, common variations (Écarté Nap: 'players pay per card to exchange unwanted "
    "cards for new ones'; the details are ours)",
    summary="Before the auction each seat from the eldest may exchange any number of cards with "
    "the undealt stock at 1 chip per card into the pool; the next Nap or higher made takes "
    "the pool; full-ladder's ladder, stakes, chips, tie-break and revoke.",
    exchange_max=PURCHASE.hand_size,
    exchange_fee_per_card=True,
)
"""Seed 001's Écarté Nap: one chip per card exchanged, up to the whole hand."""

PEEP: Final = replace(
    PURCHASE,
    name="peep",
    source="seed 001, common variations (Peep Nap: 'an extra card is dealt face down; players pay "
    "to look at it before bidding, and the winner of the auction may exchange one of their "
    "cards for it'; the details are ours)",
    summary="A widow card is dealt face down; at its turn in the auction a seat may pay 1 chip into "
    "the pool to look at it; the declarer may take it for a card of its hand; the next Nap or "
    "higher made takes the pool; full-ladder's ladder, stakes, chips, tie-break and revoke.",
    exchange_max=0,
    widow=True,
)
"""Seed 001's Peep Nap: a widow to peep at (1 chip) and for the declarer to take."""

PROFILES: Final[dict[str, Profile]] = {
    p.name: p for p in (HEATHER, FULL_LADDER, TWO_TO_FIVE, SEVEN_CARD, PURCHASE, ECARTE, PEEP)
}
"""The built-in profiles by name; ``heather`` is the default."""

DEFAULT_PROFILE: Final = HEATHER


_NOT_HOUSE_RULES: Final = frozenset({"source"})
"""Parameters a house-rules file does not set: its ``source`` says the file and the base."""

_HOUSE_CONTRACT_FIELDS: Final = ("label", "win", "lose")
"""What a house-rules file may change of a contract (``[contracts.NAME]``)."""


def get_profile(name_or_path: str) -> Profile:
    """A built-in profile by name, or a house-rules profile from a ``.toml`` file."""
    if name_or_path in PROFILES:
        return PROFILES[name_or_path]
    if name_or_path.endswith(".toml"):
        return load_profile(Path(name_or_path))
    known = ", ".join(PROFILES)
    near = did_you_mean(name_or_path, PROFILES)
    msg = f"unknown rules profile {name_or_path!r} (built in: {known}; or a path to a .toml file){near}"
    raise ProfileError(msg)


def load_profile(path: Path) -> Profile:
    """Read house rules: a TOML file naming a ``base`` profile and overriding parameters.

    Example::

        name = "pub"                 # required: the new profile's name
        base = "full-ladder"         # required: a built-in profile
        starting_chips = 100         # any parameter of Profile but source, in its JSON form
        pack_size = 32               # a short pack: Ace down to 7 ("by-table": PACKS_BY_TABLE)
        remove = ["blucher"]         # drop contracts from the ladder
        [contracts.misere]           # change a contract's stakes (or label)
        win = 10
        lose = 5
    """
    where = path.name
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        msg = f"{where}: cannot read: {exc.strerror}"
        raise ProfileError(msg) from None
    except tomllib.TOMLDecodeError as exc:
        msg = f"{where}: not valid TOML: {exc}"
        raise ProfileError(msg) from None
    return profile_from_mapping(data, where=where)


def profile_from_mapping(data: Mapping[str, object], *, where: str = "profile") -> Profile:
    """Build a house-rules profile from parsed TOML (see :func:`load_profile`).

    Each parameter is read as :meth:`Profile.from_json` reads it; any mistake is one
    ProfileError that starts with ``where`` (the file) and names the field.
    """
    data = dict(data)
    name = _required_text(data, "name", where)
    base_name = _required_text(data, "base", where)
    if base_name not in PROFILES:
        known = ", ".join(PROFILES)
        msg = f"{where}: field 'base': unknown profile {base_name!r} (built in: {known})"
        raise ProfileError(msg)
    base = PROFILES[base_name]
    by_table = data.get("pack_size") == BY_TABLE
    if by_table:
        del data["pack_size"]
    contracts = _ladder_changes(base, data, where)
    changes: dict[str, Any] = {}  # values that _Field.read checked against the fields' types
    for key, value in data.items():
        parameter = _PROFILE_FIELDS.get(key)
        if parameter is None or key in _NOT_HOUSE_RULES:
            msg = f"{where}: unknown field {key!r}"
            raise ProfileError(msg)
        changes[key] = parameter.read(value, where=where)
    if by_table:
        if "pack_sizes" in changes:
            msg = f"{where}: field 'pack_sizes': pack_size = {BY_TABLE!r} sizes the pack already; give one"
            raise ProfileError(msg)
        seats = range(
            changes.get("min_players", base.min_players), changes.get("max_players", base.max_players) + 1
        )
        changes["pack_sizes"] = tuple(pair for pair in PACKS_BY_TABLE if pair[0] in seats)
    source = f"house rules from {where} over {base.name}"
    try:
        return replace(base, name=name, source=source, contracts=contracts, **changes)
    except ProfileError as exc:  # the profile's name said where: the file says it better
        msg = f"{where}: {str(exc).split(': ', 1)[1]}"
        raise ProfileError(msg) from None


def _required_text(data: dict[str, object], key: str, where: str) -> str:
    """The text of ``data[key]``, taken out of ``data``; ProfileError where it is missing or not text."""
    if key not in data:
        msg = f"{where}: missing field {key!r}"
        raise ProfileError(msg)
    value = data.pop(key)
    if not isinstance(value, str):
        msg = f"{where}: field {key!r} must be str, got {value!r}"
        raise ProfileError(msg)
    return value


def _ladder_changes(base: Profile, data: dict[str, object], where: str) -> tuple[Contract, ...]:
    """Apply ``remove = [...]`` and ``[contracts.NAME]`` tables to the base ladder."""
    removed = data.pop("remove", [])
    if not isinstance(removed, list) or not all(isinstance(r, str) for r in removed):
        msg = f"{where}: field 'remove' must be a list of contract names"
        raise ProfileError(msg)
    for gone in removed:
        if not base.has(gone):
            msg = f"{where}: field 'remove': {base.name} has no contract {gone!r}"
            raise ProfileError(msg)
    contracts = [c for c in base.contracts if c.name not in removed]
    overrides = data.pop("contracts", {})
    if not isinstance(overrides, dict):
        msg = f"{where}: field 'contracts' must be a table of contract tables"
        raise ProfileError(msg)
    for cname, given in overrides.items():
        index = next((i for i, c in enumerate(contracts) if c.name == cname), None)
        if index is None or not isinstance(given, dict):
            msg = f"{where}: field 'contracts.{cname}': no such contract in the ladder"
            raise ProfileError(msg)
        table = dict(given)
        context = f"{where}: contracts.{cname}"
        edits: dict[str, Any] = {
            key: _CONTRACT_FIELDS[key].read(table.pop(key), where=context)
            for key in _HOUSE_CONTRACT_FIELDS
            if key in table
        }
        if table:
            field_name = f"contracts.{cname}.{next(iter(table))}"
            msg = f"{where}: field '{field_name}' is not a contract parameter"
            raise ProfileError(msg)
        contracts[index] = replace(contracts[index], **edits)
    names = {c.name for c in contracts}
    return tuple(c for c in contracts if c.over is None or c.over in names)


def parameter_texts(profile: Profile) -> dict[str, str]:
    """Every parameter of ``profile`` but its ladder as one line of text, by name, in field order.

    The wire's form (``Profile.parameters`` in ``docs/protocol.md``): ``"8"``, ``"true"``,
    ``"3,2"``, ``""`` for None, ``"3:28,7:40"`` for ``pack_sizes``.
    """
    return {name: f.kind.text(getattr(profile, name)) for name, f in _PROFILE_FIELDS.items()}


def parameters_from_texts(texts: Mapping[str, str]) -> dict[str, Any]:
    """The parameters :func:`parameter_texts` wrote, as values; a name this version does not know is left out.

    ValueError where a text does not read as its parameter's type.
    """
    return {
        name: _PROFILE_FIELDS[name].kind.parse(text)
        for name, text in texts.items()
        if name in _PROFILE_FIELDS
    }
