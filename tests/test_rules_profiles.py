"""Rules profiles: the three seeds' parameters and house rules read from TOML."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from referee.rules import PROFILES, ProfileError, get_profile, load_profile

if TYPE_CHECKING:
    from pathlib import Path


def test_the_three_seed_profiles_have_their_ladders_and_stakes() -> None:
    """Each profile's ladder and stakes are the ones its seed document gives."""
    heather, full, two = PROFILES["heather"], PROFILES["full-ladder"], PROFILES["two-to-five"]
    assert [c.name for c in heather.contracts] == ["three", "four", "nap", "wellington"]
    assert [(c.win, c.lose) for c in heather.contracts] == [(3, 3), (4, 4), (5, 5), (10, 10)]
    assert [c.name for c in full.contracts] == [
        "three",
        "misere",
        "four",
        "nap",
        "wellington",
        "blucher",
    ]
    assert [(c.win, c.lose) for c in full.contracts] == [
        (3, 3),
        (3, 3),
        (4, 4),
        (10, 5),
        (20, 10),
        (30, 15),
    ]
    assert [c.name for c in two.contracts][:4] == ["two", "three", "misere", "four"]
    assert (two.min_players, two.max_players) == (3, 6)
    assert (full.min_players, full.max_players) == (3, 7)
    assert full.starting_chips is not None
    assert heather.starting_chips is None


def test_house_rules_override_a_base_profile(tmp_path: Path) -> None:
    """A TOML file names a base, overrides parameters and stakes, and may drop contracts."""
    path = tmp_path / "pub.toml"
    path.write_text(
        'name = "pub"\nbase = "full-ladder"\nstarting_chips = 50\nremove = ["blucher"]\n'
        "[contracts.misere]\nwin = 10\nlose = 5\n",
        encoding="utf-8",
    )
    profile = get_profile(str(path))
    assert profile.name == "pub"
    assert profile.starting_chips == 50
    assert not profile.has("blucher")
    misere = profile.contract("misere")
    assert (misere.win, misere.lose) == (10, 5)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('base = "heather"\n', "missing field 'name'"),
        ('name = "x"\nbase = "nope"\n', "field 'base': unknown profile 'nope'"),
        (
            'name = "x"\nbase = "heather"\ndeals_per_sesion = 4\n',
            "unknown field 'deals_per_sesion'",
        ),
        (
            'name = "x"\nbase = "heather"\ndeals_per_session = "eight"\n',
            "field 'deals_per_session' must be an integer",
        ),
        (
            'name = "x"\nbase = "heather"\n[contracts.misere]\nwin = 10\n',
            "field 'contracts.misere': no such contract",
        ),
        (
            'name = "x"\nbase = "heather"\n[contracts.nap]\nwins = 10\n',
            "field 'contracts.nap.wins' is not a contract parameter",
        ),
        ('name = "x"\nbase = "heather"\nmax_players = 12\n', "more than 52 cards"),
        (
            'name = "x"\nbase = "heather"\nfault_policy = "shout"\n',
            "field 'fault_policy' must be one of",
        ),
        ("name = \n", "not valid TOML"),
    ],
)
def test_a_bad_house_rules_file_names_the_field(tmp_path: Path, text: str, message: str) -> None:
    """Every mistake in a house-rules file is a one-line error naming the file and the field."""
    path = tmp_path / "house.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ProfileError, match=message) as caught:
        load_profile(path)
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith("house.toml")


def test_an_unknown_profile_name_lists_the_built_in_ones() -> None:
    """Asking for a profile that does not exist says which ones do."""
    with pytest.raises(ProfileError, match="heather, full-ladder, two-to-five"):
        get_profile("blackjack")
