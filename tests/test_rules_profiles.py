"""Rules profiles: the seeds' parameters (seven-card Nap among them) and house rules read from TOML."""

from __future__ import annotations

import json
from dataclasses import MISSING, fields, replace
from typing import TYPE_CHECKING

import pytest

from referee.rules import (
    PROFILES,
    Deal,
    Profile,
    ProfileError,
    Rank,
    Session,
    get_profile,
    load_profile,
    pack_of,
    record_of,
)
from referee.rules.record import RecordError, SessionRecord
from tests.rules_helpers import EVERY_PARAMETER_CHANGED

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


def test_seven_card_nap_has_its_ladder_hand_and_full_ladders_conventions() -> None:
    """Seed 001's variation: seven cards dealt 4 then 3; Three to Seven, no Wellington or Blücher.

    Seven pays 24 per opponent (the seed); the other stakes are ours. Everything else is
    full-ladder's: 3-7 players, chips, tie-break deal, revoke fault policy, first-dealer draw.
    """
    seven, full = PROFILES["seven-card"], PROFILES["full-ladder"]
    assert [c.name for c in seven.contracts] == ["three", "misere", "four", "nap", "six", "seven"]
    assert [c.tricks for c in seven.contracts] == [3, 0, 4, 5, 6, 7]
    assert [(c.win, c.lose) for c in seven.contracts] == [
        (3, 3),
        (3, 3),
        (4, 4),
        (10, 5),
        (18, 9),
        (24, 12),
    ]
    assert all(c.over is None for c in seven.contracts)
    assert (seven.hand_size, seven.deal_pattern, seven.pack_size) == (7, (4, 3), 52)
    assert (seven.min_players, seven.max_players) == (full.min_players, full.max_players) == (3, 7)
    assert (seven.starting_chips, seven.rebuy, seven.tie_break_deal, seven.fault_policy) == (
        full.starting_chips,
        full.rebuy,
        full.tie_break_deal,
        full.fault_policy,
    )
    assert all(p.deals_per_session == 8 for p in PROFILES.values())
    assert all(p.pack_size == 52 for p in PROFILES.values())


def test_the_pool_variants_are_full_ladder_with_exchanges_or_a_widow() -> None:
    """Purchase: 1 chip per exchange of 1-3 cards; Écarté: 1 per card, up to 5; Peep: a widow, 1 chip a peep.

    Everything else is full-ladder's, and the pool goes to a Nap or higher made.
    """
    full = PROFILES["full-ladder"]
    pool = ("exchange_max", "exchange_fee_per_card", "exchange_fee", "widow", "peep_fee", "pool_claim")
    expected = {
        "purchase": (3, False, 1, False, 1, "nap"),
        "ecarte": (5, True, 1, False, 1, "nap"),
        "peep": (0, False, 1, True, 1, "nap"),
        "full-ladder": (0, False, 1, False, 1, "nap"),
    }
    for name, values in expected.items():
        profile = PROFILES[name]
        assert tuple(getattr(profile, key) for key in pool) == values
        assert profile.contracts == full.contracts
        assert (
            profile.starting_chips,
            profile.tie_break_deal,
            profile.fault_policy,
            profile.max_players,
        ) == (
            full.starting_chips,
            full.tie_break_deal,
            full.fault_policy,
            full.max_players,
        )
    assert [PROFILES["ecarte"].exchange_cost(n) for n in range(6)] == [0, 1, 2, 3, 4, 5]
    assert [PROFILES["purchase"].exchange_cost(n) for n in range(4)] == [0, 1, 1, 1]
    claims = [c.name for c in full.contracts if PROFILES["purchase"].claims_pool(c.name)]
    assert claims == ["nap", "wellington", "blucher"]


def test_house_rules_set_the_pool_parameters(tmp_path: Path) -> None:
    """Every pool parameter is a house rule: 2 chips a card, up to 2, a widow; Four takes the pool."""
    path = tmp_path / "dear.toml"
    path.write_text(
        'name = "dear"\nbase = "purchase"\nexchange_max = 2\nexchange_fee = 2\nexchange_fee_per_card = true\n'
        'widow = true\npeep_fee = 3\npool_claim = "four"\n',
        encoding="utf-8",
    )
    profile = load_profile(path)
    assert (profile.exchange_max, profile.exchange_fee, profile.exchange_fee_per_card) == (2, 2, True)
    assert (profile.widow, profile.peep_fee, profile.pool_claim) == (True, 3, "four")
    assert profile.claims_pool("four")
    assert not profile.claims_pool("misere")
    session = Session(profile, table_size=4, seed=1)
    assert max(len(getattr(a, "cards", ())) for a in session.legal_actions()) == 2
    rules = record_of(session).to_json()["rules"]
    assert (rules["exchange_fee"], rules["peep_fee"], rules["pool_claim"]) == (2, 3, "four")


def test_a_short_pack_strips_the_lowest_ranks() -> None:
    """32 cards are Ace down to 7, 28 Ace down to 8, 36 down to 6, 40 down to 5; 52 is the pack."""
    for size, lowest in ((28, Rank.EIGHT), (32, Rank.SEVEN), (36, Rank.SIX), (40, Rank.FIVE), (52, Rank.TWO)):
        pack = pack_of(size)
        assert len(pack) == len(set(pack)) == size
        assert min(card.rank for card in pack) is lowest
        assert list(pack) == sorted(pack)
        assert all(sum(card.rank is rank for card in pack) == 4 for rank in {card.rank for card in pack})


def test_house_rules_set_the_pack_and_the_session_length(tmp_path: Path) -> None:
    """pack_size and deals_per_session are house rules: they reach the deals, the views and the records."""
    path = tmp_path / "short.toml"
    path.write_text(
        'name = "short"\nbase = "heather"\npack_size = 32\nmax_players = 6\ndeals_per_session = 3\n',
        encoding="utf-8",
    )
    profile = load_profile(path)
    assert (profile.pack_size, profile.max_players, profile.deals_per_session) == (32, 6, 3)
    assert profile.pack == pack_of(32)
    session = Session(profile, table_size=6, seed=5)
    assert session.view(0).deals_in_session == 3
    while not session.over:
        session.apply(session.legal_actions()[0])
    assert len(session.deals) == 3
    assert all(sorted(deal.deck) == list(pack_of(32)) for deal in session.deals)
    rules = record_of(session).to_json()["rules"]
    assert (rules["pack_size"], rules["deals_per_session"]) == (32, 3)


def test_house_rules_change_six_and_seven_over_seven_card(tmp_path: Path) -> None:
    """Every seven-card stake is a parameter: a house-rules file may change Six and Seven."""
    path = tmp_path / "sevens.toml"
    path.write_text(
        'name = "sevens"\nbase = "seven-card"\n'
        "[contracts.six]\nwin = 20\nlose = 10\n[contracts.seven]\nwin = 30\nlose = 30\n",
        encoding="utf-8",
    )
    profile = load_profile(path)
    assert [(c.name, c.win, c.lose) for c in profile.contracts[-2:]] == [("six", 20, 10), ("seven", 30, 30)]
    assert profile.hand_size == 7


def test_a_pack_too_small_for_the_table_is_refused_where_the_table_is_known() -> None:
    """At session start (a deal) the actual table size is checked against the pack: one line, cards needed."""
    profile = replace(PROFILES["heather"], name="p", pack_size=28, max_players=5)
    with pytest.raises(
        ValueError, match="a 28-card pack is too small for 6 players of 5 cards: 30 cards needed"
    ):
        Deal(profile, deck=pack_of(28), dealer=0, table_size=6)
    with pytest.raises(ValueError, match="is for 3 to 5 players, not 6"):
        Session(profile, table_size=6, seed=1)
    with pytest.raises(ValueError, match="2C is not in the 28-card pack of p"):
        Deal(profile, deck=(*pack_of(28)[1:], pack_of(52)[0]), dealer=0, table_size=4)


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
        (
            'name = "x"\nbase = "heather"\nmax_players = 12\n',
            "pack_size 52 is too small for max_players 12 with hand_size 5: 60 cards needed",
        ),
        (
            'name = "x"\nbase = "heather"\npack_size = 28\n',
            "pack_size 28 is too small for max_players 7 with hand_size 5: 35 cards needed",
        ),
        (
            'name = "x"\nbase = "seven-card"\npack_size = 40\nmax_players = 6\n',
            "pack_size 40 is too small for max_players 6 with hand_size 7: 42 cards needed",
        ),
        ('name = "x"\nbase = "heather"\npack_size = 30\n', "pack_size must be 52, or 28, 32, 36 or 40"),
        ('name = "x"\nbase = "heather"\npack_size = 44\n', "pack_size must be 52, or 28, 32, 36 or 40"),
        ('name = "x"\nbase = "heather"\npack_size = "short"\n', "field 'pack_size' must be an integer"),
        (
            'name = "x"\nbase = "heather"\nfault_policy = "shout"\n',
            "field 'fault_policy' must be one of",
        ),
        ("name = \n", "not valid TOML"),
        (
            'name = "x"\nbase = "purchase"\nexchange_max = 6\n',
            "exchange_max must be 0 \\(no exchange\\) to hand_size \\(5\\), not 6",
        ),
        (
            'name = "x"\nbase = "purchase"\nexchange_max = "three"\n',
            "field 'exchange_max' must be an integer",
        ),
        ('name = "x"\nbase = "purchase"\nexchange_fee = -1\n', "exchange_fee must not be negative"),
        (
            'name = "x"\nbase = "ecarte"\nexchange_fee_per_card = 1\n',
            "field 'exchange_fee_per_card' must be bool",
        ),
        ('name = "x"\nbase = "peep"\nwidow = "yes"\n', "field 'widow' must be bool"),
        ('name = "x"\nbase = "peep"\npeep_fee = 1.5\n', "field 'peep_fee' must be an integer"),
        (
            'name = "x"\nbase = "peep"\npool_claim = "seven"\n',
            "pool_claim: no contract 'seven' in the ladder",
        ),
        (
            'name = "x"\nbase = "purchase"\nremove = ["nap", "wellington", "blucher"]\n',
            "pool_claim: no contract 'nap' in the ladder",
        ),
        (
            'name = "x"\nbase = "seven-card"\nwidow = true\npack_size = 28\nmax_players = 4\n',
            "pack_size 28 is too small for max_players 4 with hand_size 7 and a widow: 29 cards needed",
        ),
        (
            'name = "x"\nbase = "seven-card"\npack_size = "by-table"\n',
            "pack_sizes: a 32-card pack is too small for 5 players of 7 cards: 35 cards needed",
        ),
        (
            'name = "x"\nbase = "peep"\npack_size = 28\n[pack_sizes]\n7 = 36\n',
            r"pack_size \(the tables pack_sizes does not list\): a 28-card pack is too small for 6 players",
        ),
        ('name = "x"\nbase = "heather"\n[pack_sizes]\n9 = 40\n', r"no table of 9 players in x \(3 to 7"),
        ('name = "x"\nbase = "heather"\n[pack_sizes]\n3 = 30\n', "the pack for 3 players must be 52, or 28"),
        (
            'name = "x"\nbase = "heather"\n[pack_sizes]\nthree = 28\n',
            "'pack_sizes.three': a number of players",
        ),
        ('name = "x"\nbase = "heather"\n[pack_sizes]\n3 = "28"\n', "'pack_sizes.3' must be an integer"),
        ('name = "x"\nbase = "heather"\npack_sizes = 28\n', "field 'pack_sizes' must be a table"),
        (
            'name = "x"\nbase = "heather"\npack_size = "by-table"\n[pack_sizes]\n3 = 28\n',
            "pack_size = 'by-table' sizes the pack already",
        ),
        ('name = "x"\nbase = "heather"\nsource = "mine"\n', "unknown field 'source'"),
        (
            'name = "x"\nbase = "heather"\ndeal_pattern = "3,2"\n',
            "field 'deal_pattern' must be a list of integers",
        ),
        (
            'name = "x"\nbase = "heather"\ndeal_pattern = [3, 3]\n',
            r"deal_pattern must add up to hand_size \(5\)",
        ),
        (
            'name = "x"\nbase = "heather"\nstarting_chips = true\n',
            "field 'starting_chips' must be an integer",
        ),
        ('name = 7\nbase = "heather"\n', "field 'name' must be str, got 7"),
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
    with pytest.raises(
        ProfileError, match="heather, full-ladder, two-to-five, seven-card, purchase, ecarte, peep"
    ):
        get_profile("blackjack")


class TestEveryParameter:
    """A parameter is declared once, in :class:`Profile`: every reader and writer carries it."""

    def test_the_test_profile_changes_every_parameter(self) -> None:
        """EVERY_PARAMETER_CHANGED is what the other tests carry: a new parameter must be changed there."""
        unchanged = [
            f.name
            for f in fields(Profile)
            if f.init and f.default is not MISSING and getattr(EVERY_PARAMETER_CHANGED, f.name) == f.default
        ]
        assert unchanged == []

    @pytest.mark.parametrize("profile", [*PROFILES.values(), EVERY_PARAMETER_CHANGED], ids=lambda p: p.name)
    def test_json_text_gives_the_profile_back_in_both_ladder_shapes(self, profile: Profile) -> None:
        """By name (records) in written order; as a list (the store) whatever order the keys come back in."""
        assert Profile.from_json(json.loads(json.dumps(profile.to_json()))) == profile
        stored = json.loads(json.dumps(profile.to_json(ladder_as_list=True), sort_keys=True))
        assert Profile.from_json(stored) == profile
        assert [c["name"] for c in stored["contracts"]] == [c.name for c in profile.contracts]

    def test_every_parameter_but_source_is_a_house_rule(self, tmp_path: Path) -> None:
        """A house-rules file may set each parameter, written as its JSON form is (pack_sizes as a table)."""
        data = EVERY_PARAMETER_CHANGED.to_json()
        lines = ['base = "full-ladder"']
        lines += [
            f"{key} = {json.dumps(value)}"
            for key, value in data.items()
            if key not in {"source", "contracts", "pack_sizes"}
        ]
        lines += [
            "[pack_sizes]",
            *(f"{players} = {cards}" for players, cards in EVERY_PARAMETER_CHANGED.pack_sizes),
        ]
        path = tmp_path / "every.toml"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        assert load_profile(path) == replace(
            EVERY_PARAMETER_CHANGED, source="house rules from every.toml over full-ladder"
        )

    def test_a_record_carries_every_parameter(self) -> None:
        """A session of the profile records it whole, and its record reads back as it was."""
        session = Session(EVERY_PARAMETER_CHANGED, table_size=5, seed=3)
        while not session.over:
            session.apply(session.legal_actions()[0])
        record = SessionRecord.from_json(json.loads(json.dumps(record_of(session).to_json())))
        assert record.profile == EVERY_PARAMETER_CHANGED

    def test_a_parameter_is_written_where_it_is_used_or_was_always(self) -> None:
        """The rules of a record hold the parameters records always had; a later one where it is used."""
        first = ["name", "source", "summary", "min_players", "max_players", "deals_per_session", "hand_size"]
        first += ["deal_pattern", "pack_size", "starting_chips", "rebuy", "tie_break_deal", "fault_policy"]
        for profile in (PROFILES["heather"], PROFILES["full-ladder"], PROFILES["seven-card"]):
            assert list(profile.to_json()) == [*first, "contracts"]
        every = [f.name for f in fields(Profile) if f.init and f.name != "contracts"]
        assert list(EVERY_PARAMETER_CHANGED.to_json()) == [*every, "contracts"]
        assert "pack_sizes" not in PROFILES["purchase"].to_json()
        assert "pool_claim" in PROFILES["peep"].to_json()  # at its default, with the other pool parameters

    @pytest.mark.parametrize(
        ("change", "message"),
        [
            ({"pack_size": "52"}, "^rules: field 'pack_size' must be an integer, got '52'$"),
            ({"later": 1}, "^rules: unknown field 'later'$"),
            ({"fault_policy": "shout"}, "^rules: field 'fault_policy' must be one of: substitute, revoke$"),
            ({"contracts": 3}, "^rules: field 'contracts' must be a list of contracts, or a table"),
            (
                {"contracts": [{"name": "three", "label": "Three"}]},
                r"^rules: contracts\[0\]: missing field 'tricks'$",
            ),
        ],
    )
    def test_stored_rules_that_do_not_read_say_which_field(
        self, change: dict[str, object], message: str
    ) -> None:
        """A parameter of the wrong type, unknown or missing is one line naming it."""
        with pytest.raises(ProfileError, match=message):
            Profile.from_json({**PROFILES["heather"].to_json(), **change})

    def test_an_older_record_without_the_later_parameters_reads_with_their_defaults(self) -> None:
        """Rules written before pack_size, the pool or pack_sizes existed: those take their defaults."""
        rules = PROFILES["heather"].to_json()
        del rules["pack_size"]
        assert Profile.from_json(rules) == PROFILES["heather"]
        with pytest.raises(ProfileError, match=r"^rules: a profile's parameters are missing$"):
            Profile.from_json(None)
        broken = {**record_of(Session(PROFILES["heather"], table_size=3, seed=1)).to_json(), "profile": "pub"}
        broken["rules"] = {**broken["rules"], "rebuy": "no"}
        with pytest.raises(
            RecordError, match=r"^malformed record: rules: field 'rebuy' must be bool, got 'no'$"
        ):
            SessionRecord.from_json(broken)
