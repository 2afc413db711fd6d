"""The ladder's ratings by simulation: how often their intervals cover the truth, and what a fit costs.

    python bench/ladder.py                       # 400 ladders of 7 entries, 30 blocks each
    python bench/ladder.py --ladders 1000 --blocks 60 --spread 12

Each simulated ladder has the three anchors and four entries of known strengths; every
block seats four of them (each entry first placed with the anchors, then tables at
random), and each one's figure is its strength less the table's mean, plus noise that
sums to zero at the table (chips are zero-sum). The ratings (:func:`tournaments.stats.ladder.ladder_ratings`)
are compared with the truth: the share of 95% intervals that cover it, overall and per
entry, and the share of ladders in which two entries' ranks are separated the wrong way
round. Then the time one fit takes for an arena of ``--entries`` entries and
``--fit-blocks`` blocks, the size of a term-long competition.
"""

from __future__ import annotations

import argparse
import random
import time

from tournaments.stats.ladder import BlockFigures, ladder_ratings

ANCHORS = ("random", "peel", "pimc")
STRENGTHS = {"random": -20.0, "peel": 5.0, "pimc": 15.0, "a": 0.0, "b": 8.0, "c": -5.0, "d": 12.0}


def simulated(
    rng: random.Random, strengths: dict[str, float], blocks: int, spread: float
) -> list[BlockFigures]:
    """A ladder's complete blocks at four-seat tables, as the module notes say."""
    names = sorted(strengths)
    entries = [name for name in names if name not in ANCHORS]
    played = []
    for number in range(blocks):
        table = (entries[number], *ANCHORS) if number < len(entries) else tuple(rng.sample(names, 4))
        level = sum(strengths[name] for name in table) / len(table)
        noise = [rng.gauss(0, spread) for _ in table]
        shift = sum(noise) / len(noise)
        played.append(
            BlockFigures(
                number, {n: strengths[n] - level + e - shift for n, e in zip(table, noise, strict=True)}
            )
        )
    return played


def main() -> None:
    """Run the simulation and the fit's timing; see the module's docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ladders", type=int, default=400)
    parser.add_argument("--blocks", type=int, default=30)
    parser.add_argument("--spread", type=float, default=9.0, help="each figure's noise, chips a session")
    parser.add_argument("--entries", type=int, default=60, help="entries of the timed fit")
    parser.add_argument("--fit-blocks", type=int, default=10_000, help="blocks of the timed fit")
    args = parser.parse_args()
    reference = sum(STRENGTHS[name] for name in ANCHORS) / len(ANCHORS)
    covered = dict.fromkeys(STRENGTHS, 0)
    wrong = 0
    for seed in range(args.ladders):
        ratings = ladder_ratings(
            simulated(random.Random(seed), STRENGTHS, args.blocks, args.spread), anchors=ANCHORS
        )
        for rating in ratings:
            hw = rating.value.half_width or 0.0
            covered[rating.entry] += abs(rating.value.mean - (STRENGTHS[rating.entry] - reference)) <= hw
        ranked = [r for r in ratings if r.rank is not None]
        wrong += any(
            STRENGTHS[above.entry] < STRENGTHS[below.entry]
            and above.rank is not None
            and below.rank is not None
            and above.rank < below.rank
            for above in ranked
            for below in ranked
        )
    total = sum(covered.values()) / (len(STRENGTHS) * args.ladders)
    print(f"{args.ladders} ladders of {len(STRENGTHS)} entries, {args.blocks} blocks, noise {args.spread:g}:")
    print(f"  95% intervals covering the true rating: {total:.1%} overall")
    print(
        "  per entry: " + ", ".join(f"{name} {count / args.ladders:.1%}" for name, count in covered.items())
    )
    print(f"  ladders with two entries ranked apart the wrong way round: {wrong / args.ladders:.1%}")

    rng = random.Random(1)
    strengths = {
        **{name: STRENGTHS[name] for name in ANCHORS},
        **{f"e{n}": rng.gauss(0, 10) for n in range(args.entries)},
    }
    names = sorted(strengths)
    blocks = []
    for number in range(args.fit_blocks):
        table = rng.sample(names, 4) if number >= args.entries else [f"e{number}", *ANCHORS]
        level = sum(strengths[n] for n in table) / 4
        blocks.append(BlockFigures(number, {n: strengths[n] - level + rng.gauss(0, 9) for n in table}))
    start = time.perf_counter()
    ladder_ratings(blocks, anchors=ANCHORS)
    took = time.perf_counter() - start
    print(f"one fit of {len(strengths)} entries over {args.fit_blocks} blocks: {took:.2f} s")


if __name__ == "__main__":
    main()
