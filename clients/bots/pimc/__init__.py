"""A strong reference bot: Perfect-Information Monte Carlo over an exact double-dummy solver.

- :mod:`clients.bots.pimc.solver`: the exact solver of a deal with all hands open;
- :mod:`clients.bots.pimc.sampling`: deals of the unseen cards consistent with a view;
- :mod:`clients.bots.pimc.bot`: :class:`PimcBot`, which samples, solves and chooses.

Run it with ``python -m clients.bots.pimc --address HOST:PORT --token T [--samples N]
[--seconds S] [--seed S]``.
"""

from clients.bots.pimc.bot import Budget, PimcBot
from clients.bots.pimc.solver import Position, SearchAbortedError, Solver

__all__ = ["Budget", "PimcBot", "Position", "SearchAbortedError", "Solver"]
