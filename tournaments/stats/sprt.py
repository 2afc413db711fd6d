"""A sequential probability ratio test on block values: stop as soon as the data decides.

The question: is the mean of the block values (the candidate's edge, in chips per
session) ``d0`` or ``d1``? Wald's SPRT reads the values one at a time, in block-index
order, and after each (once there are ``min_blocks``) compares the log-likelihood ratio
of H1 against H0 with two bounds fixed in advance:

    lower = log(beta / (1 - alpha))        accept H0 at or below it
    upper = log((1 - beta) / alpha)        accept H1 at or above it

so that the chance of accepting H1 when H0 is true is about ``alpha`` (a little less:
Wald's bounds ignore the overshoot), and of accepting H0 when H1 is true about ``beta``,
however many looks it takes. That is what a fixed-size interval checked after every
block does not give (peeking at a 95% interval after every block and stopping when it
clears zero finds a "difference" between clones about a third of the time).

The block values are treated as normal with an unknown variance, and the ratio is the
generalised likelihood ratio: each hypothesis gets its own maximum-likelihood variance,
``s_i^2 = (1/n) sum (x - d_i)^2 = v + (m - d_i)^2`` (``m`` the mean, ``v`` the ML
variance), which gives

    LLR = (n / 2) log(s_0^2 / s_1^2)

(the statistic of fishtest's normalised SPRT for a normal mean). While the values show
no variation at all the ratio is not defined (it would be infinite) and the test waits.

The module is pure: the same values always give the same verdict.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

DEFAULT_MIN_BLOCKS: Final = 10
"""Blocks read before the first look. The likelihood ratio uses variances estimated from
the data; from a handful of blocks they are too noisy to stop on (docs/statistics.md)."""

Verdict = Literal["H0", "H1"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Sprt:
    """The test's parameters: H0 ``mean == d0`` against H1 ``mean == d1``, ``d0 < d1``.

    ``alpha`` is the chance allowed of accepting H1 when H0 holds, ``beta`` of accepting
    H0 when H1 holds; ``min_blocks`` are read before the first look.
    """

    d0: float
    d1: float
    alpha: float = 0.05
    beta: float = 0.05
    min_blocks: int = DEFAULT_MIN_BLOCKS

    def __post_init__(self) -> None:
        if not self.d0 < self.d1:
            msg = f"the SPRT needs D0 < D1, got D0 {self.d0:g} and D1 {self.d1:g}"
            raise ValueError(msg)
        for name, value in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0 < value < 0.5:
                msg = f"{name} must be between 0 and 0.5, got {value:g}"
                raise ValueError(msg)
        if self.min_blocks < 2:
            msg = f"the SPRT needs at least 2 blocks before its first look, got {self.min_blocks}"
            raise ValueError(msg)

    @property
    def lower(self) -> float:
        """Accept H0 when the LLR falls to this: ``log(beta / (1 - alpha))``."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 when the LLR rises to this: ``log((1 - beta) / alpha)``."""
        return math.log((1 - self.beta) / self.alpha)

    def describe(self) -> str:
        """``D0 +0.00, D1 +3.00, alpha 0.05, beta 0.05`` (chips per session)."""
        return f"D0 {self.d0:+.2f}, D1 {self.d1:+.2f}, alpha {self.alpha:g}, beta {self.beta:g}"

    def to_json(self) -> dict[str, Any]:
        """The parameters as JSON-ready data."""
        return {
            "d0": self.d0,
            "d1": self.d1,
            "alpha": self.alpha,
            "beta": self.beta,
            "min_blocks": self.min_blocks,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Sprt:
        """Read parameters written by :meth:`to_json`."""
        return cls(
            d0=float(data["d0"]),
            d1=float(data["d1"]),
            alpha=float(data["alpha"]),
            beta=float(data["beta"]),
            min_blocks=int(data["min_blocks"]),
        )


def llr(n: int, mean: float, variance: float, *, d0: float, d1: float) -> float | None:
    """The generalised log-likelihood ratio of H1 (``d1``) over H0 (``d0``).

    ``variance`` is the ML variance of the ``n`` values (divisor ``n``). None when it is
    zero: with no variation the ratio is infinite or undefined, and no decision is taken.
    """
    if n < 2 or variance <= 0:
        return None
    return n / 2 * math.log((variance + (mean - d0) ** 2) / (variance + (mean - d1) ** 2))


@dataclass(frozen=True, slots=True)
class SprtState:
    """Where the test stands after reading ``blocks`` values.

    ``llr`` is None before the first look (fewer than ``min_blocks``) or while the
    values show no variation. ``verdict`` is the hypothesis accepted, None while the
    test goes on; once it is set, ``blocks`` is where the test stopped.
    """

    test: Sprt
    blocks: int
    llr: float | None
    verdict: Verdict | None

    def describe(self) -> str:
        """``LLR +1.23 (-2.94, +2.94)``: the ratio within its bounds, or that it waits."""
        bounds = f"({self.test.lower:+.2f}, {self.test.upper:+.2f})"
        if self.llr is None:
            wait = (
                f"from block {self.test.min_blocks}"
                if self.blocks < self.test.min_blocks
                else "until the blocks vary"
            )
            return f"LLR n/a {bounds}, {wait}"
        return f"LLR {self.llr:+.2f} {bounds}"


class SequentialTest:
    """The SPRT fed one block value at a time, in block-index order.

    After :meth:`add` returns a verdict the test is over, and further values are refused:
    the verdict is the one taken at the first crossing, whatever is played afterwards.
    """

    def __init__(self, test: Sprt) -> None:
        self.test = test
        self._n = 0
        self._mean = 0.0
        self._m2 = 0.0  # Welford's sum of squared deviations
        self._low = math.inf
        self._high = -math.inf
        self._state = SprtState(test=test, blocks=0, llr=None, verdict=None)

    @property
    def state(self) -> SprtState:
        """The test after the values read so far."""
        return self._state

    def add(self, value: float) -> Verdict | None:
        """Read the next block's value; the verdict, once a bound is crossed."""
        if self._state.verdict is not None:
            msg = f"the test stopped at block {self._state.blocks}: it reads no more values"
            raise ValueError(msg)
        self._n += 1
        delta = value - self._mean
        self._mean += delta / self._n
        self._m2 += delta * (value - self._mean)
        self._low, self._high = min(self._low, value), max(self._high, value)
        ratio = None
        if self._n >= self.test.min_blocks and self._high > self._low:
            ratio = llr(self._n, self._mean, max(self._m2, 0.0) / self._n, d0=self.test.d0, d1=self.test.d1)
        verdict: Verdict | None = None
        if ratio is not None and ratio >= self.test.upper:
            verdict = "H1"
        elif ratio is not None and ratio <= self.test.lower:
            verdict = "H0"
        self._state = SprtState(test=self.test, blocks=self._n, llr=ratio, verdict=verdict)
        return verdict


def run_sprt(values: Iterable[float], test: Sprt) -> SprtState:
    """Read ``values`` in order until a bound is crossed (or they run out); where it stands."""
    sequential = SequentialTest(test)
    for value in values:
        if sequential.add(value) is not None:
            break
    return sequential.state


def fixed_sample_blocks(test: Sprt, sd: float) -> float:
    """Blocks a fixed-size one-sided test needs for the same error rates as ``test``.

    ``((z(1 - alpha) + z(1 - beta)) sd / (d1 - d0))^2`` for block values of SD ``sd``: the
    yardstick the SPRT's average sample size is compared with.
    """
    normal = statistics.NormalDist()
    z = normal.inv_cdf(1 - test.alpha) + normal.inv_cdf(1 - test.beta)
    return (z * sd / (test.d1 - test.d0)) ** 2
