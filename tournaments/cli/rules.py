"""``nap rules``: the rules profiles and house rules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from referee.rules import CARDS, PROFILES, get_profile
from tournaments.cli.app import console, friendly, main

if TYPE_CHECKING:
    from referee.rules import Profile


@main.group()
def rules() -> None:
    """The rules profiles (seed documents) and house rules."""


def pack_text(profile: Profile) -> str:
    """The pack in words: ``52 cards``, or a short pack's ``32 cards (Ace down to 7)``."""
    if profile.pack_size == len(CARDS):
        return f"{profile.pack_size} cards"
    lowest = min(card.rank for card in profile.pack)
    return f"{profile.pack_size} cards (Ace down to {lowest})"


def table_text(profile: Profile) -> str:
    """Seats, hands, pack and session length in one line, as a person reads them."""
    dealt = " then ".join(str(count) for count in profile.deal_pattern)
    return (
        f"{profile.min_players}-{profile.max_players} seats; {profile.hand_size} cards each "
        f"(dealt {dealt}) from a pack of {pack_text(profile)}; "
        f"{profile.deals_per_session} deals a session"
    )


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
    console.print(f"[bold]{profile.name}[/bold]  ({profile.source})\n{profile.summary}")
    console.print(f"{table_text(profile)}\n", markup=False, soft_wrap=True)
    params = profile.parameters()
    contracts: dict[str, dict[str, Any]] = params.pop("contracts")  # type: ignore[assignment]
    table = Table("contract", "tricks", "won (each opponent pays)", "lost (pays each)", "only over")
    for contract in contracts.values():
        tricks = "none (misère)" if contract["misere"] else f">= {contract['tricks']} of {profile.hand_size}"
        table.add_row(
            contract["label"], tricks, str(contract["win"]), str(contract["lose"]), contract["over"] or ""
        )
    console.print(table)
    for key, value in params.items():
        if key not in {"name", "source", "summary"}:
            console.print(f"  {key} = {value}")
