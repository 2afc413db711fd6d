"""The arena's ladder policy: ratings against the anchors, and which tables come next (pure)."""

from __future__ import annotations

import itertools
import random

import pytest

from tournaments.stats.ladder import (
    COVERAGE_EVERY,
    BlockFigures,
    LadderEntry,
    choose_tables,
    ladder_ratings,
    pair_meetings,
)

ANCHORS = ("peel", "pimc", "random")


def _block(
    number: int, strengths: dict[str, float], table: tuple[str, ...], noise: list[float]
) -> BlockFigures:
    """A block whose figures follow the additive model, with noise that sums to zero at the table."""
    level = sum(strengths[name] for name in table) / len(table)
    shift = sum(noise) / len(noise)
    return BlockFigures(
        number, {name: strengths[name] - level + n - shift for name, n in zip(table, noise, strict=True)}
    )


def _simulated(seed: int, strengths: dict[str, float], blocks: int, *, spread: float) -> list[BlockFigures]:
    """Blocks at four-seat tables: each entry placed with the anchors first, then random tables."""
    rng = random.Random(seed)
    names = sorted(strengths)
    played = []
    entries = [name for name in names if name not in ANCHORS]
    for number in range(blocks):
        if number < len(entries):
            table: tuple[str, ...] = (entries[number], *ANCHORS)
        else:
            table = tuple(rng.sample(names, 4))
        played.append(_block(number, strengths, table, [rng.gauss(0, spread) for _ in table]))
    return played


class TestRatings:
    """An entry's rating is chips per session against the average anchor at the same table."""

    def test_without_noise_the_fit_finds_the_strengths_with_the_anchors_averaging_zero(self) -> None:
        strengths = {"random": -21.0, "peel": 6.0, "pimc": 18.0, "a": 4.0, "b": 11.0}
        ratings = {
            r.entry: r.value.mean
            for r in ladder_ratings(_simulated(1, strengths, 30, spread=0.0), anchors=ANCHORS)
        }
        assert ratings == pytest.approx({"random": -22.0, "peel": 5.0, "pimc": 17.0, "a": 3.0, "b": 10.0})

    def test_entries_that_never_meet_an_anchor_again_are_rated_through_the_tables_they_share(self) -> None:
        strengths = {"random": -9.0, "peel": 0.0, "pimc": 9.0, "a": 2.0, "b": -4.0, "c": 7.0}
        blocks = [
            _block(0, strengths, ("a", *ANCHORS), [0, 0, 0, 0]),
            _block(1, strengths, ("a", "b", "c"), [0, 0, 0]),
            _block(2, strengths, ("b", "c", "a"), [0, 0, 0]),
        ]
        ratings = {r.entry: r.value.mean for r in ladder_ratings(blocks, anchors=ANCHORS)}
        assert ratings["b"] == pytest.approx(-4.0)
        assert ratings["c"] == pytest.approx(7.0)

    def test_an_entry_linked_to_no_anchor_is_refused_with_its_name(self) -> None:
        blocks = [
            BlockFigures(0, {"a": 1.0, "peel": 0.0, "pimc": -1.0}),
            BlockFigures(1, {"x": 2.0, "y": -2.0, "z": 0.0}),
        ]
        with pytest.raises(ValueError, match="never linked to an anchor by a table: x, y, z"):
            ladder_ratings(blocks, anchors=ANCHORS)

    def test_no_anchor_at_all_is_refused(self) -> None:
        with pytest.raises(ValueError, match="no anchor"):
            ladder_ratings([BlockFigures(0, {"a": 1.0, "b": -1.0, "c": 0.0})], anchors=ANCHORS)

    def test_the_order_the_blocks_come_in_changes_nothing(self) -> None:
        strengths = {"random": -20.0, "peel": 5.0, "pimc": 15.0, "a": 0.0, "b": 8.0, "c": -5.0}
        blocks = _simulated(3, strengths, 40, spread=8.0)
        shuffled = blocks[:]
        random.Random(9).shuffle(shuffled)
        assert ladder_ratings(shuffled, anchors=ANCHORS) == ladder_ratings(blocks, anchors=ANCHORS)

    def test_one_block_gives_no_interval_and_few_blocks_a_warning(self) -> None:
        strengths = {"random": -20.0, "peel": 5.0, "pimc": 15.0, "a": 0.0}
        blocks = _simulated(4, strengths, 4, spread=8.0)
        blocks = [
            *blocks[:1],
            *(_block(n, strengths, ("random", "peel", "pimc"), [1, -2, 1]) for n in (1, 2, 3)),
        ]
        ratings = {r.entry: r.value for r in ladder_ratings(blocks, anchors=ANCHORS)}
        assert ratings["a"].half_width is None
        assert ratings["a"].caveat == "a single block"
        assert ratings["peel"].caveat == "only 4 blocks"
        assert ratings["peel"].half_width is not None

    def test_ranks_are_shared_unless_the_data_separates_them(self) -> None:
        strengths = {"random": -30.0, "peel": 0.0, "pimc": 30.0, "a": 0.5, "b": 0.0}
        ratings = ladder_ratings(_simulated(5, strengths, 120, spread=6.0), anchors=ANCHORS)
        rank = {r.entry: r.rank for r in ratings}
        assert rank["pimc"] == 1
        assert rank["random"] == 5
        assert len({rank["peel"], rank["a"], rank["b"]}) == 1  # half a chip apart: not separated
        assert ratings[0].entry == "pimc"

    def test_only_the_entries_asked_for_are_ranked_and_the_others_still_link_them(self) -> None:
        strengths = {"random": -30.0, "peel": 0.0, "pimc": 30.0, "a": 10.0, "old": 20.0}
        blocks = _simulated(6, strengths, 60, spread=2.0)
        ratings = ladder_ratings(blocks, anchors=ANCHORS, ranked=("random", "peel", "pimc", "a"))
        assert [(r.entry, r.rank) for r in ratings] == [
            ("pimc", 1),
            ("a", 2),
            ("peel", 3),
            ("random", 4),
            ("old", None),
        ]

    def test_the_intervals_cover_the_true_ratings_about_95_times_in_100(self) -> None:
        strengths = {"random": -20.0, "peel": 5.0, "pimc": 15.0, "a": 0.0, "b": 8.0, "c": -5.0, "d": 12.0}
        reference = sum(strengths[name] for name in ANCHORS) / len(ANCHORS)
        covered = total = 0
        for seed in range(400):
            for rating in ladder_ratings(_simulated(seed, strengths, 30, spread=9.0), anchors=ANCHORS):
                assert rating.value.half_width is not None
                total += 1
                covered += (
                    abs(rating.value.mean - (strengths[rating.entry] - reference)) <= rating.value.half_width
                )
        assert 0.93 <= covered / total <= 0.975


def _anchors() -> list[LadderEntry]:
    return [
        LadderEntry(name=name, owner=None, rating=r, half_width=2.0, blocks=50)
        for name, r in zip(ANCHORS, (5.0, 15.0, -20.0), strict=True)
    ]


class TestTables:
    """The ladder seats new and uncertain entries first, close ratings together, and every pair in time."""

    def test_an_entry_being_placed_plays_with_the_anchors_until_it_has_its_placement_blocks(self) -> None:
        entries = [
            *_anchors(),
            LadderEntry(name="new", owner="ann", placing=True, placement_left=3),
            LadderEntry(name="old", owner="bob", rating=1.0, half_width=3.0, blocks=40),
        ]
        tables = choose_tables(entries, count=5, sizes=(4,), meetings={}, seed=1)
        assert [set(t) for t in tables[:3]] == [{"new", *ANCHORS}] * 3
        assert all("new" not in t for t in tables[3:])

    def test_two_entries_of_one_owner_never_share_a_table(self) -> None:
        rng = random.Random(2)
        entries = [*_anchors()] + [
            LadderEntry(
                name=f"e{n}",
                owner=f"o{n % 4}",
                rating=rng.uniform(-10, 10),
                half_width=rng.choice([None, 2.0, 5.0]),
                blocks=rng.randrange(0, 30),
            )
            for n in range(12)
        ]
        owner = {e.name: e.owner for e in entries}
        tables = choose_tables(entries, count=200, sizes=(3, 4, 5), meetings={}, seed=7)
        assert len(tables) == 200
        for table in tables:
            owners = [owner[name] for name in table if owner[name] is not None]
            assert len(owners) == len(set(owners)), table

    def test_the_least_certain_entry_is_seated_first(self) -> None:
        entries = [
            *_anchors(),
            LadderEntry(name="sure", owner="ann", rating=0.0, half_width=1.0, blocks=100),
            LadderEntry(name="unsure", owner="bob", rating=0.0, half_width=9.0, blocks=10),
            LadderEntry(name="unknown", owner="cid", rating=0.0, half_width=None, blocks=1),
        ]
        first, second = choose_tables(entries, count=2, sizes=(3,), meetings={}, seed=1)
        assert "unknown" in first
        assert "unsure" in second

    def test_close_ratings_are_seated_together(self) -> None:
        ratings = {f"e{n}": float(n * 5) for n in range(10)}
        entries = [*_anchors()] + [
            LadderEntry(name=name, owner=name, rating=r, half_width=4.0, blocks=20)
            for name, r in ratings.items()
        ]
        rating = {e.name: e.rating or 0.0 for e in entries}
        tables = choose_tables(entries, count=40, sizes=(3,), meetings={}, seed=3)
        regular = [t for n, t in enumerate(tables) if n % COVERAGE_EVERY != COVERAGE_EVERY - 1]
        chosen = sum(max(rating[x] for x in t) - min(rating[x] for x in t) for t in regular) / len(regular)
        rng = random.Random(0)
        names = list(rating)
        drawn = [rng.sample(names, 3) for _ in range(400)]
        at_random = sum(max(rating[x] for x in t) - min(rating[x] for x in t) for t in drawn) / len(drawn)
        assert chosen < at_random / 3

    def test_every_pair_keeps_being_seated(self) -> None:
        entries = [*_anchors()] + [
            LadderEntry(name=f"e{n}", owner=f"o{n}", rating=float(n * 10), half_width=3.0, blocks=30)
            for n in range(6)
        ]
        tables = choose_tables(entries, count=300, sizes=(3,), meetings={}, seed=4)
        met = pair_meetings(tables)
        for a, b in itertools.combinations([e.name for e in entries], 2):
            assert met.get(frozenset((a, b)), 0) > 0, (a, b)

    def test_the_same_state_and_seed_give_the_same_tables_and_the_seed_shuffles_the_seats(self) -> None:
        entries = [*_anchors(), LadderEntry(name="a", owner="ann", rating=1.0, half_width=3.0, blocks=9)]
        one = choose_tables(entries, count=12, sizes=(4,), meetings={}, seed=5)
        assert one == choose_tables(entries, count=12, sizes=(4,), meetings={}, seed=5)
        other = choose_tables(entries, count=12, sizes=(4,), meetings={}, seed=6)
        assert [set(t) for t in one] == [set(t) for t in other]
        assert one != other

    def test_too_few_owners_for_a_table_gives_fewer_tables(self) -> None:
        entries = [LadderEntry(name="a", owner="ann"), LadderEntry(name="b", owner="ann")]
        assert choose_tables(entries, count=3, sizes=(3,), meetings={}, seed=1) == []

    def test_a_size_that_cannot_be_filled_falls_back_to_a_smaller_one(self) -> None:
        entries = [*_anchors(), LadderEntry(name="a", owner="ann", rating=0.0, half_width=3.0, blocks=9)]
        tables = choose_tables(entries, count=4, sizes=(3, 5), meetings={}, seed=1)
        assert [len(t) for t in tables] == [3, 3, 3, 3]
