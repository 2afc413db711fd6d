"""A tournament's config and its JSON form in the store: round trip, old configs, defaults."""

from __future__ import annotations

import json
from dataclasses import MISSING, fields

import pytest

from referee.match import TimeLimits
from referee.rules import DEFAULT_PROFILE, PROFILES, FaultPolicy, get_profile
from tournaments.errors import RunnerError
from tournaments.plan.config import TournamentConfig
from tournaments.plan.entries import example_bot

BOTS = (example_bot("peel"), example_bot("random"), example_bot("peel", name="peel-2"))
REQUIRED = {"name": "t", "bots": BOTS, "table_size": 3, "sessions": 6, "seed": 9}


def required_json() -> dict[str, object]:
    return {**REQUIRED, "bots": [bot.to_json() for bot in BOTS]}


class TestJson:
    def test_every_field_survives_the_round_trip_through_json_text(self) -> None:
        """Non-default values in every field come back equal after json.dumps / json.loads.

        The store sorts the keys: the contract ladder's order must not depend on them.
        """
        config = TournamentConfig(
            **REQUIRED,  # type: ignore[arg-type]
            profile=PROFILES["full-ladder"],
            concurrency=7,
            time_limits=TimeLimits(decision_ms=50, session_bank_ms=500, margin_ms=25),
            max_restarts=0,
            connect_timeout_s=1.5,
            fault_policy=FaultPolicy.REVOKE,
            ask_forced=True,
            workers=2,
        )
        stored = json.loads(json.dumps(config.to_json(), sort_keys=True))  # as the store writes it
        assert TournamentConfig.from_json(stored) == config

    def test_the_stored_form_has_one_key_per_field_in_order(self) -> None:
        """The store's JSON keeps its shape: field names as keys, plain values, nested limits."""
        data = TournamentConfig(**REQUIRED).to_json()  # type: ignore[arg-type]
        assert list(data) == [f.name for f in fields(TournamentConfig)]
        assert data["profile"]["name"] == "heather"
        ladder = [c["name"] for c in data["profile"]["contracts"]]
        assert ladder == [c.name for c in DEFAULT_PROFILE.contracts]
        assert data["time_limits"] == {"decision_ms": 1000, "session_bank_ms": 0, "margin_ms": 0}
        assert data["fault_policy"] is None
        assert data["workers"] is None

    def test_an_old_config_without_newer_keys_takes_the_field_defaults(self) -> None:
        """A config stored before a field existed loads with that field's dataclass default."""
        loaded = TournamentConfig.from_json(required_json())
        assert loaded == TournamentConfig(**REQUIRED)  # type: ignore[arg-type]
        for f in fields(TournamentConfig):
            if f.default is not MISSING:
                assert getattr(loaded, f.name) == f.default, f.name
        assert loaded.profile == DEFAULT_PROFILE

    def test_limits_stored_without_a_margin_load_with_none(self) -> None:
        """time_limits written before margin_ms was stored load with a margin of 0 ms."""
        loaded = TournamentConfig.from_json(
            {**required_json(), "time_limits": {"decision_ms": 300, "session_bank_ms": 900}}
        )
        assert loaded.time_limits == TimeLimits(decision_ms=300, session_bank_ms=900, margin_ms=0)

    def test_null_limits_policy_and_workers_read_as_their_defaults(self) -> None:
        """Nulls where an older writer left them read as no limits given, no policy, one per two cores."""
        loaded = TournamentConfig.from_json(
            {**required_json(), "time_limits": None, "fault_policy": None, "workers": None}
        )
        assert loaded.time_limits == TimeLimits()
        assert loaded.fault_policy is None
        assert loaded.workers is None

    def test_unknown_keys_are_ignored(self) -> None:
        """A key this version does not know (from a newer one) does not stop a resume."""
        assert TournamentConfig.from_json({**required_json(), "later": 1}) == TournamentConfig(**REQUIRED)  # type: ignore[arg-type]


class TestRules:
    """The rules are stored as a value: every parameter, so no rules file is read after the command line."""

    def test_house_rules_come_back_whole_without_their_file(self, tmp_path) -> None:
        house = tmp_path / "house.toml"
        house.write_text(
            'name = "pub"\nbase = "full-ladder"\nstarting_chips = 40\n[contracts.nap]\nwin = 12\n'
        )
        config = TournamentConfig(**REQUIRED, profile=get_profile(str(house)))  # type: ignore[arg-type]
        stored = json.loads(json.dumps(config.to_json(), sort_keys=True))  # as the store writes it
        house.unlink()
        loaded = TournamentConfig.from_json(stored)
        assert loaded.profile == config.profile
        assert (loaded.profile.name, loaded.profile.starting_chips) == ("pub", 40)
        assert loaded.profile.contract("nap").win == 12

    def test_a_built_in_name_stored_by_an_older_version_reads_as_that_profile(self) -> None:
        loaded = TournamentConfig.from_json({**required_json(), "profile": "full-ladder"})
        assert loaded.profile == PROFILES["full-ladder"]

    def test_an_older_house_rules_path_whose_file_is_gone_is_one_line(self, tmp_path) -> None:
        gone = tmp_path / "gone.toml"
        with pytest.raises(
            RunnerError, match=r"^rules .*gone\.toml: stored as a file's path by an older"
        ) as raised:
            TournamentConfig.from_json({**required_json(), "profile": str(gone)})
        assert "\n" not in str(raised.value)


def test_bad_settings_are_one_line_errors() -> None:
    """Workers, concurrency and restarts out of range fail at once, naming the setting."""
    for setting, value in (("workers", 0), ("concurrency", 0), ("max_restarts", -1)):
        with pytest.raises(RunnerError, match=setting):
            TournamentConfig(**REQUIRED, **{setting: value})  # type: ignore[arg-type]
