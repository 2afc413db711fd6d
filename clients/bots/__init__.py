"""Example bots: ``random_bot`` (uniform random legal action) and ``peel`` (W. H. Peel's advice).

Each is a :class:`clients.sdk.Bot` whose policy is a pure function of the seat's view,
and each runs as its own process: ``python -m clients.bots.peel --address HOST:PORT --token T``.
``pimc`` is the strong reference bot (Monte Carlo over an exact solver);
:mod:`clients.bots.table_rules` tells the bots the hand size, pack and ladder of a table.
"""
