"""``nap rules``: the rules profiles and house rules."""

from __future__ import annotations

from typing import Any

import click
from rich.table import Table

from referee.rules import PROFILES, get_profile
from tournaments.cli.app import console, friendly, main


@main.group()
def rules() -> None:
    """The rules profiles (seed documents) and house rules."""


@rules.command("list")
def rules_list() -> None:
    """List the built-in profiles."""
    table = Table("profile", "source", "seats", "summary")
    for profile in PROFILES.values():
        table.add_row(
            profile.name, profile.source, f"{profile.min_players}-{profile.max_players}", profile.summary
        )
    console.print(table)


@rules.command("show")
@click.argument("name")
@friendly
def rules_show(name: str) -> None:
    """Show every parameter of a profile (a built-in NAME or a house-rules .toml file)."""
    profile = get_profile(name)
    console.print(f"[bold]{profile.name}[/bold]  ({profile.source})\n{profile.summary}\n")
    params = profile.parameters()
    contracts: dict[str, dict[str, Any]] = params.pop("contracts")  # type: ignore[assignment]
    table = Table("contract", "tricks", "won (each opponent pays)", "lost (pays each)", "only over")
    for contract in contracts.values():
        tricks = "none (misère)" if contract["misere"] else f">= {contract['tricks']}"
        table.add_row(
            contract["label"], tricks, str(contract["win"]), str(contract["lose"]), contract["over"] or ""
        )
    console.print(table)
    for key, value in params.items():
        if key not in {"name", "source", "summary"}:
            console.print(f"  {key} = {value}")
