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
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from pathlib import Path
from typing import Any, Final, cast

from referee.rules.cards import Card, pack_of
from referee.rules.errors import RulesError

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


@dataclass(frozen=True, slots=True)
class Profile:
    """A complete set of rules for a table.

    ``contracts`` lists the ladder from lowest to highest; every bid must be strictly
    higher than the current highest. ``starting_chips`` of ``None`` means unlimited
    accounting units (balances may go negative); a number means finite stacks: a seat
    whose stack falls to zero or below is eliminated, or, when ``rebuy`` is set, stakes
    the starting chips again as many times as it takes to have chips (seed 001's "nova
    aposta inicial para voltar ao jogo"). ``tie_break_deal`` adds one deal among the
    seats tied for the lead after the last deal (seed 001). ``pack_size`` is the number
    of cards in the pack: 52, or a short pack (:data:`PACK_SIZES`) without its lowest
    ranks (32 is Ace down to 7).
    ``pack_sizes`` sizes the pack by the table instead: (players, cards) pairs, fewest
    players first; a table of a size listed there plays that pack, any other
    ``pack_size``. A table plays :meth:`at_table`, this profile with its table's pack as
    ``pack_size`` (a session, a deal and a record do that themselves).

    The pool variants (seed 001: Purchase, Écarté, Peep Nap): ``exchange_max`` is the most
    cards a seat may exchange with the undealt stock before the auction (0: no exchange
    round); an exchange costs ``exchange_fee`` chips, or that much per card with
    ``exchange_fee_per_card``. With ``widow`` one card is dealt face down after the hands;
    a seat may pay ``peep_fee`` at its turn in the auction to look at it, and the declarer
    may take it for a card of its hand. Fees go into the pool, which the next declarer to
    make the contract named ``pool_claim`` or a higher one takes.
    """

    name: str
    source: str
    summary: str
    contracts: tuple[Contract, ...]
    min_players: int = 3
    max_players: int = 7
    deals_per_session: int = 8
    hand_size: int = 5
    deal_pattern: tuple[int, ...] = (3, 2)
    pack_size: int = 52
    pack_sizes: tuple[tuple[int, int], ...] = ()
    starting_chips: int | None = None
    rebuy: bool = False
    tie_break_deal: bool = False
    fault_policy: FaultPolicy = FaultPolicy.SUBSTITUTE
    exchange_max: int = 0
    exchange_fee_per_card: bool = False
    exchange_fee: int = 1
    widow: bool = False
    peep_fee: int = 1
    pool_claim: str = "nap"
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

    def parameters(self) -> dict[str, object]:
        """Every parameter as plain data (for display, TOML and the wire).

        The pool parameters (:data:`POOL_PARAMETERS`) are left out when every one of them
        has its default, as in every profile without exchanges or a widow: such a
        profile's parameters, and so its records, are what they were before the pool
        variants existed (:func:`profile_from_parameters` gives them back exactly).
        ``pack_sizes`` likewise appears only when it is set, as a table from the number
        of players (text, as JSON and TOML keys are) to the cards: ``{"3": 28, "4": 28}``.
        """
        out: dict[str, object] = {}
        plain = all(getattr(self, name) == default for name, default in _POOL_DEFAULTS.items())
        for f in fields(self):
            if f.name.startswith("_") or f.name == "contracts" or (plain and f.name in _POOL_DEFAULTS):
                continue
            value = getattr(self, f.name)
            if f.name == "pack_sizes":
                if value:  # left out when empty, as in every profile before it existed
                    out[f.name] = {str(players): cards for players, cards in value}
                continue
            out[f.name] = value.value if isinstance(value, Enum) else value
        out["contracts"] = {
            c.name: {
                "label": c.label,
                "tricks": c.tricks,
                "win": c.win,
                "lose": c.lose,
                "misere": c.misere,
                "over": c.over,
            }
            for c in self.contracts
        }
        return out


POOL_PARAMETERS: Final = (
    "exchange_max",
    "exchange_fee_per_card",
    "exchange_fee",
    "widow",
    "peep_fee",
    "pool_claim",
)
"""The parameters of the pool variants (Purchase, Écarté, Peep Nap)."""

_POOL_DEFAULTS: Final = {f.name: f.default for f in fields(Profile) if f.name in POOL_PARAMETERS}


class ProfileError(RulesError):
    """A profile (usually a house-rules file) is invalid; the message names the field."""


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


_SCALARS: Final = {
    "min_players": int,
    "max_players": int,
    "deals_per_session": int,
    "pack_size": int,
    "starting_chips": int,
    "rebuy": bool,
    "tie_break_deal": bool,
    "fault_policy": str,
    "summary": str,
    "exchange_max": int,
    "exchange_fee_per_card": bool,
    "exchange_fee": int,
    "widow": bool,
    "peep_fee": int,
    "pool_claim": str,
}
_CONTRACT_KEYS: Final = {"win": int, "lose": int, "label": str}


def get_profile(name_or_path: str) -> Profile:
    """A built-in profile by name, or a house-rules profile from a ``.toml`` file."""
    if name_or_path in PROFILES:
        return PROFILES[name_or_path]
    if name_or_path.endswith(".toml"):
        return load_profile(Path(name_or_path))
    known = ", ".join(PROFILES)
    msg = f"unknown rules profile {name_or_path!r} (built in: {known}; or a path to a .toml file)"
    raise ProfileError(msg)


def load_profile(path: Path) -> Profile:
    """Read house rules: a TOML file naming a ``base`` profile and overriding parameters.

    Example::

        name = "pub"                 # required: the new profile's name
        base = "full-ladder"         # required: a built-in profile
        starting_chips = 100
        pack_size = 32               # a short pack: Ace down to 7 ("by-table": PACKS_BY_TABLE)
        remove = ["blucher"]         # drop contracts from the ladder
        [contracts.misere]           # change a contract's stakes
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


def profile_from_mapping(data: dict[str, object], *, where: str = "profile") -> Profile:
    """Build a house-rules profile from parsed TOML (see :func:`load_profile`)."""
    data = dict(data)
    name = _take(data, "name", str, where, required=True)
    base_name = _take(data, "base", str, where, required=True)
    if base_name not in PROFILES:
        known = ", ".join(PROFILES)
        msg = f"{where}: field 'base': unknown profile {base_name!r} (built in: {known})"
        raise ProfileError(msg)
    base = PROFILES[str(base_name)]
    changes: dict[str, Any] = {  # values _take checked against the fields' types
        "name": name,
        "source": f"house rules from {where} over {base.name}",
    }
    by_table = data.get("pack_size") == BY_TABLE
    if by_table:
        del data["pack_size"]
    for key, kind in _SCALARS.items():
        if key in data:
            changes[key] = _take(data, key, kind, where)
    # the seats of the house rules (integers: _take checked them), for by-table's packs
    low = cast("int", changes.get("min_players", base.min_players))
    high = cast("int", changes.get("max_players", base.max_players))
    changes.update(_pack_sizes(data, where, by_table=by_table, seats=range(low, high + 1)))
    if "fault_policy" in changes:
        try:
            changes["fault_policy"] = FaultPolicy(changes["fault_policy"])
        except ValueError:
            choices = ", ".join(p.value for p in FaultPolicy)
            msg = f"{where}: field 'fault_policy' must be one of: {choices}"
            raise ProfileError(msg) from None
    changes["contracts"] = _ladder_changes(base, data, where)
    if data:
        msg = f"{where}: unknown field {next(iter(data))!r}"
        raise ProfileError(msg)
    try:
        return replace(base, **changes)
    except ProfileError as exc:
        msg = f"{where}: {str(exc).split(': ', 1)[1]}"
        raise ProfileError(msg) from None


def _pack_sizes(data: dict[str, object], where: str, *, by_table: bool, seats: range) -> dict[str, object]:
    """``pack_sizes`` from the ``[pack_sizes]`` table (``3 = 28`` ...), or by-table's for ``seats``, or none.

    ``by_table``: the file said ``pack_size = "by-table"`` (:data:`PACKS_BY_TABLE`, for the
    table sizes the house rules seat).
    """
    if "pack_sizes" not in data:
        return {"pack_sizes": tuple(pair for pair in PACKS_BY_TABLE if pair[0] in seats)} if by_table else {}
    given = data.pop("pack_sizes")
    if by_table:
        msg = f"{where}: field 'pack_sizes': pack_size = {BY_TABLE!r} sizes the pack already; give one"
        raise ProfileError(msg)
    if not isinstance(given, dict):
        msg = f"{where}: field 'pack_sizes' must be a table from the number of players to the cards (3 = 28)"
        raise ProfileError(msg)
    pairs = []
    for key, cards in given.items():
        if not key.isdigit():
            msg = f"{where}: field 'pack_sizes.{key}': a number of players, not {key!r}"
            raise ProfileError(msg)
        if not isinstance(cards, int) or isinstance(cards, bool):
            msg = f"{where}: field 'pack_sizes.{key}' must be an integer, got {cards!r}"
            raise ProfileError(msg)
        pairs.append((int(key), cards))
    return {"pack_sizes": tuple(sorted(pairs))}


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
            k: _take(table, k, kind, context) for k, kind in _CONTRACT_KEYS.items() if k in table
        }
        if table:
            field_name = f"contracts.{cname}.{next(iter(table))}"
            msg = f"{where}: field '{field_name}' is not a contract parameter"
            raise ProfileError(msg)
        contracts[index] = replace(contracts[index], **edits)
    names = {c.name for c in contracts}
    return tuple(c for c in contracts if c.over is None or c.over in names)


def profile_from_parameters(data: Mapping[str, Any] | None) -> Profile:
    """Rebuild a profile from :meth:`Profile.parameters` (a record's ``rules``)."""
    if not isinstance(data, Mapping):
        msg = "rules: a profile's parameters are missing"
        raise ProfileError(msg)
    params = dict(data)
    contracts = tuple(
        Contract(name, c["label"], c["tricks"], c["win"], c["lose"], c["misere"], c["over"])
        for name, c in params.pop("contracts").items()
    )
    params["fault_policy"] = FaultPolicy(params["fault_policy"])
    params["deal_pattern"] = tuple(params["deal_pattern"])
    if "pack_sizes" in params:
        by_players = params["pack_sizes"].items()
        params["pack_sizes"] = tuple(sorted((int(players), cards) for players, cards in by_players))
    return Profile(contracts=contracts, **params)


def _take(data: dict[str, object], key: str, kind: type, where: str, *, required: bool = False) -> object:
    if key not in data:
        if required:
            msg = f"{where}: missing field {key!r}"
            raise ProfileError(msg)
        return None
    value = data.pop(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        expected = "an integer" if kind is int else kind.__name__
        msg = f"{where}: field {key!r} must be {expected}, got {value!r}"
        raise ProfileError(msg)
    return value
