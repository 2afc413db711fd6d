"""``nap rules``: the rules profiles and house rules."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich.table import Table

from referee.rules import CARDS, PROFILES, get_profile, pack_of
from tournaments.cli.app import console, friendly

if TYPE_CHECKING:
    from referee.rules import Profile


@click.group()
def rules() -> None:
    """The rules profiles (seed documents) and house rules."""


def pack_text(profile: Profile) -> str:
    """The pack in words: ``52 cards``, a short pack's ``32 cards (Ace down to 7)``, or one per table size.

    With ``pack_sizes``, each pack with the table sizes that play it:
    ``28 cards (Ace down to 8) for 3-4 seats, 32 cards (Ace down to 7) for 5 seats, ...``.
    """
    runs: list[tuple[int, list[int]]] = []
    for players in range(profile.min_players, profile.max_players + 1):
        size = profile.pack_size_at(players)
        if runs and runs[-1][0] == size:
            runs[-1][1].append(players)
        else:
            runs.append((size, [players]))
    if len(runs) == 1:
        return _pack_words(runs[0][0])
    return ", ".join(
        f"{_pack_words(size)} for {seats[0]}{f'-{seats[-1]}' if len(seats) > 1 else ''} seats"
        for size, seats in runs
    )


def _pack_words(size: int) -> str:
    if size == len(CARDS):
        return f"{size} cards"
    lowest = min(card.rank for card in pack_of(size))
    return f"{size} cards (Ace down to {lowest})"


def table_text(profile: Profile) -> str:
    """Seats, hands, pack and session length in one line, as a person reads them."""
    dealt = " then ".join(str(count) for count in profile.deal_pattern)
    return (
        f"{profile.min_players}-{profile.max_players} seats; {profile.hand_size} cards each "
        f"(dealt {dealt}) from a pack of {pack_text(profile)}; "
        f"{profile.deals_per_session} deals a session"
    )


def pool_text(profile: Profile) -> list[str]:
    """The pool variants' rules in words: the exchange, the widow and peep, the pool (none without them)."""
    lines = []
    if profile.exchange_max:
        fee = f"{profile.exchange_fee} chip{'s' if profile.exchange_fee != 1 else ''}"
        cost = f"{fee} per card" if profile.exchange_fee_per_card else f"{fee} per exchange"
        lines.append(
            f"Exchange: before the auction each seat, from the eldest, may give up 1 to "
            f"{profile.exchange_max} cards face down and draw as many from the stock, for {cost}."
        )
    if profile.widow:
        fee = f"{profile.peep_fee} chip{'s' if profile.peep_fee != 1 else ''}"
        lines.append(
            f"Widow: one card dealt face down; at its turn in the auction a seat may pay {fee} "
            "to peep at it; the declarer may take it for a card of its hand."
        )
    if profile.has_pool:
        claim = profile.contract(profile.pool_claim).label
        lines.append(
            f"Pool: the fees go into the pool; the next declarer to make {claim} or higher takes it; "
            "what is left at the session's end goes back to those who paid it in."
        )
    return lines


_NOT_CHANGES = frozenset({"name", "source", "summary", "contracts", "pack_sizes"})
"""Parameters :func:`description` does not list as changes (not rules, or said in words)."""


def description(profile: Profile) -> str:
    """The profile's summary; for house rules, what they change from their base.

    The base's summary is not repeated: a file that removes Blücher or changes the
    Misère stakes would otherwise be described by words that no longer hold.
    """
    base = PROFILES.get(profile.source.rpartition(" over ")[2]) if profile.name not in PROFILES else None
    if base is None:
        return profile.summary
    mine, theirs = profile.to_json(), base.to_json()
    changes = [
        f"{key} {mine[key]} (was {theirs.get(key)})"
        for key in mine
        if key not in _NOT_CHANGES and mine[key] != theirs.get(key)
    ]
    if profile.pack_sizes:
        changes.append("a pack sized by the table (pack_sizes)")
    before = {c.name: c for c in base.contracts}
    changes += [f"no {c.label}" for c in base.contracts if not profile.has(c.name)]
    changes += [
        f"{c.label} won {c.win}, lost {c.lose} (was {before[c.name].win}/{before[c.name].lose})"
        for c in profile.contracts
        if c.name in before and (c.win, c.lose) != (before[c.name].win, before[c.name].lose)
    ]
    what = "; ".join(changes) or "no change"
    own = "" if profile.summary == base.summary else f"{profile.summary}\n"
    return f"{own}House rules over {base.name} (see nap rules show {base.name}): {what}."


@rules.command("list")
def rules_list() -> None:
    """List the built-in profiles."""
    table = Table("profile", "source", "seats", "cards", "summary")
    for profile in PROFILES.values():
        table.add_row(
            profile.name,
            profile.source,
            f"{profile.min_players}-{profile.max_players}",
            f"{profile.hand_size} of {profile.pack_size}",
            profile.summary,
        )
    console.print(table)


@rules.command("show")
@click.argument("name")
@friendly
def rules_show(name: str) -> None:
    """Show every parameter of a profile (a built-in NAME or a house-rules .toml file)."""
    profile = get_profile(name)
    console.print(f"[bold]{profile.name}[/bold]  ({profile.source})", highlight=False)
    console.print(description(profile), markup=False, highlight=False, soft_wrap=True)
    console.print(f"{table_text(profile)}\n", markup=False, soft_wrap=True)
    for line in pool_text(profile):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    table = Table("contract", "tricks", "won (each opponent pays)", "lost (pays each)", "only over")
    for contract in profile.contracts:
        tricks = "none (misère)" if contract.misere else f">= {contract.tricks} of {profile.hand_size}"
        over = contract.over or ""
        table.add_row(contract.label, tricks, str(contract.win), str(contract.lose), over)
    console.print(table)
    for key, value in profile.to_json().items():
        if key == "pack_sizes":  # as house rules write it: a TOML inline table
            by_players = ", ".join(f"{players} = {cards}" for players, cards in profile.pack_sizes)
            console.print(f"  {key} = {{{by_players}}}", markup=False, highlight=False)
        elif key not in {"name", "source", "summary", "contracts"}:
            console.print(f"  {key} = {value}")
