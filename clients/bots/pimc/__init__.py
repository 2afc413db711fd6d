"""A strong reference bot: Perfect-Information Monte Carlo over an exact double-dummy solver.

- :mod:`clients.bots.pimc.solver`: the exact solver of a deal with all hands open;
- :mod:`clients.bots.pimc.sampling`: deals of the unseen cards consistent with a view;
- :mod:`clients.bots.pimc.budget`: how much one decision may think (samples and nodes, so
  that a seeded bot is reproducible), and its wall-clock safety cap, alone and in a batch;
- :mod:`clients.bots.pimc.bot`: :class:`PimcBot`, which samples, solves and chooses.

Run it with ``python -m clients.bots.pimc --address HOST:PORT --token T [--samples N]
[--nodes N] [--seconds S] [--seed S]``.
"""

from clients.bots.pimc.bot import PimcBot
from clients.bots.pimc.budget import Batch, Budget
from clients.bots.pimc.solver import Position, SearchAbortedError, Solver

__all__ = ["Batch", "Budget", "PimcBot", "Position", "SearchAbortedError", "Solver"]
