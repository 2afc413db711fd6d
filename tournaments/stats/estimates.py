"""Small exact statistics for the standings and the match test: Student's t, intervals, LOS.

There is no scipy here: the t distribution's CDF for integer degrees of freedom has a
closed form (Abramowitz & Stegun 26.7.3-4), and its quantile is found from it by
bisection. Everything is pure and deterministic.

An :class:`Estimate` is a mean over blocks with its 95% interval, and says when that
interval should not be taken at face value (:attr:`Estimate.caveat`): from a single
block there is no interval; from blocks that are all equal there is none either (a
width of zero would claim certainty that a handful of ties does not give); from fewer
than :data:`FEW_BLOCKS` blocks the interval is shown with a warning, since the t
interval's coverage then rests on the block values being close to normal.
"""

from __future__ import annotations

import functools
import math
import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Sequence

FEW_BLOCKS: Final = 5
"""Below this many blocks an interval is shown with a warning ("only 3 blocks")."""

_EXACT_T_MAX_DF: Final = 1000
"""Up to this many degrees of freedom the t distribution is computed from the exact CDF."""

_BISECTION_STEPS: Final = 200
_NORMAL: Final = statistics.NormalDist()


@functools.lru_cache(maxsize=4096)
def t_quantile(p: float, df: int) -> float:
    """Return the ``p`` quantile of Student's t distribution with ``df`` degrees of freedom.

    Up to 1000 degrees of freedom this inverts the exact closed-form CDF for integer
    ``df`` (Abramowitz & Stegun 26.7.3-4) by bisection on the angle ``atan(t/sqrt(df))``,
    which is accurate to about 1e-12. Beyond that it uses the Cornish-Fisher expansion
    around the normal quantile (A&S 26.7.5), whose error there is below 1e-9. A pure
    function of its arguments, so each (p, df) is worked out once (a ladder asks for the
    same few many times).
    """
    if df < 1:
        msg = f"t quantile needs at least 1 degree of freedom, got {df}"
        raise ValueError(msg)
    if not 0.0 < p < 1.0:
        msg = f"t quantile needs 0 < p < 1, got {p}"
        raise ValueError(msg)
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if df > _EXACT_T_MAX_DF:
        return _cornish_fisher(p, df)
    target = 2.0 * p - 1.0  # P(|T| < t)
    low, high = 0.0, math.pi / 2
    for _ in range(_BISECTION_STEPS):
        mid = (low + high) / 2
        if _central_probability(mid, df) < target:
            low = mid
        else:
            high = mid
        if high - low < 1e-15:
            break
    return math.sqrt(df) * math.tan((low + high) / 2)


def t_cdf(t: float, df: int) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom.

    Exact (A&S 26.7.3-4) up to 1000 degrees of freedom; beyond, the normal CDF at
    ``t (1 - 1/(4 df)) / sqrt(1 + t^2 / (2 df))`` (A&S 26.7.8), within 1e-6 there.
    """
    if df < 1:
        msg = f"the t distribution needs at least 1 degree of freedom, got {df}"
        raise ValueError(msg)
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    if df > _EXACT_T_MAX_DF:
        return _NORMAL.cdf(t * (1 - 1 / (4 * df)) / math.sqrt(1 + t * t / (2 * df)))
    central = _central_probability(math.atan(abs(t) / math.sqrt(df)), df)
    return 0.5 + math.copysign(central, t) / 2


def _central_probability(theta: float, df: int) -> float:
    """P(|T| < sqrt(df) tan(theta)) for integer ``df`` (A&S 26.7.3 and 26.7.4)."""
    sin, cos2 = math.sin(theta), math.cos(theta) ** 2
    if df % 2 == 0:
        term, total = 1.0, 1.0
        for j in range(1, df // 2):
            term *= cos2 * (2 * j - 1) / (2 * j)
            total += term
        return sin * total
    if df == 1:
        return 2 * theta / math.pi
    term, total = 1.0, 1.0
    for j in range(1, (df - 1) // 2):
        term *= cos2 * (2 * j) / (2 * j + 1)
        total += term
    return 2 / math.pi * (theta + sin * math.cos(theta) * total)


def _cornish_fisher(p: float, df: int) -> float:
    z = _NORMAL.inv_cdf(p)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


@dataclass(frozen=True, slots=True)
class Estimate:
    """A mean over ``n`` independent blocks, their sample SD and the 95% half-width.

    ``sd`` is ``None`` for a single block. ``half_width`` is ``None`` whenever there is no
    honest interval: one block, or blocks that all gave the same value (``sd == 0``).
    :attr:`caveat` says why, or warns of an interval from too few blocks.
    """

    mean: float
    half_width: float | None
    n: int
    sd: float | None = None

    @property
    def low(self) -> float | None:
        """Lower end of the 95% interval, or ``None`` when it is undefined."""
        return None if self.half_width is None else self.mean - self.half_width

    @property
    def high(self) -> float | None:
        """Upper end of the 95% interval, or ``None`` when it is undefined."""
        return None if self.half_width is None else self.mean + self.half_width

    @property
    def caveat(self) -> str | None:
        """Why the interval is missing or not to be trusted as is; None when it is fine."""
        if self.n < 2:
            return "a single block"
        if self.sd == 0:
            return f"no variation over {self.n} blocks"
        if self.n < FEW_BLOCKS:
            return f"only {self.n} blocks"
        return None

    def to_json(self) -> dict[str, float | int | str | None]:
        """The estimate as JSON-ready data; ``low``, ``high`` and ``warning`` for convenience."""
        return {
            "mean": self.mean,
            "half_width": self.half_width,
            "low": self.low,
            "high": self.high,
            "n": self.n,
            "sd": self.sd,
            "warning": self.caveat,
        }

    @property
    def trusted(self) -> bool:
        """Whether the interval exists and rests on enough blocks to be read as it is."""
        return self.half_width is not None and self.caveat is None


def estimate(values: Sequence[float]) -> Estimate:
    """Mean of ``values`` with the 95% interval mean +- t(0.975, n-1) * sd / sqrt(n).

    ``sd`` is the sample standard deviation (divisor ``n - 1``). With one value, or with
    values that are all equal, the interval is ``None`` (see :class:`Estimate`). Raises
    ``ValueError`` on an empty sequence: there is no mean to report.
    """
    if not values:
        msg = "cannot estimate a mean from no values"
        raise ValueError(msg)
    n = len(values)
    mean = math.fsum(values) / n
    if n < 2:
        return Estimate(mean=mean, half_width=None, n=n, sd=None)
    if min(values) == max(values):
        return Estimate(mean=mean, half_width=None, n=n, sd=0.0)
    sd = statistics.stdev(values)
    half = t_quantile(0.975, n - 1) * sd / math.sqrt(n)
    return Estimate(mean=mean, half_width=half, n=n, sd=sd)


def likelihood_of_superiority(value: Estimate) -> float | None:
    """The chance that the true mean is above zero, given the blocks: ``t_cdf(mean / se, n - 1)``.

    It is the one-sided p-value turned round (with a flat prior, the posterior chance
    that the difference is positive), the figure cutechess and fastchess print as LOS.
    None when the spread is unknown (one block, or no variation).
    """
    if value.half_width is None or value.sd is None:
        return None
    return t_cdf(value.mean / (value.sd / math.sqrt(value.n)), value.n - 1)


def estimate_from_sums(n: int, total: int, squares: int, unit: int) -> Estimate:
    """:func:`estimate` of ``n`` values known by their exact sums, each value in ``1/unit``.

    ``total`` is the sum of the values and ``squares`` the sum of their squares, both as
    integers in ``1/unit`` (``1/unit**2`` for the squares): the mean and the sample SD are
    then exact up to the final rounding, whatever the order the values came in, and
    "all equal" (no interval) is exactly ``n * squares == total**2``.
    """
    if n < 1:
        msg = "cannot estimate a mean from no values"
        raise ValueError(msg)
    mean = total / (n * unit)
    if n < 2:
        return Estimate(mean=mean, half_width=None, n=n, sd=None)
    spread = n * squares - total * total
    if spread == 0:
        return Estimate(mean=mean, half_width=None, n=n, sd=0.0)
    sd = math.sqrt(spread / (n * (n - 1) * unit * unit))
    half = t_quantile(0.975, n - 1) * sd / math.sqrt(n)
    return Estimate(mean=mean, half_width=half, n=n, sd=sd)
