"""``nap arena``: a long-running host where people submit bots, and a duplicate ladder plays them.

The arena composes what the tournaments already have (the store, the runner's executors
and sandbox, the statistics, the replay pages) and adds no second referee, store or
scheduler. Its parts, each one file:

- :mod:`~tournaments.arena.settings`: what an arena is (rules, table sizes, house rules),
  fixed at its first start;
- :mod:`~tournaments.arena.people`: tokens, their digests and scopes;
- :mod:`~tournaments.arena.packs` and :mod:`~tournaments.arena.unpacker`: uploaded packs,
  checked and unpacked only in the sandbox;
- :mod:`~tournaments.arena.admission`: a submission's way onto the ladder (build, check)
  and its log;
- :mod:`~tournaments.arena.ladder`: the loop that chooses tables
  (:mod:`tournaments.stats.ladder`, pure) and plays them as complete blocks;
- :mod:`~tournaments.arena.board`: the leaderboard and an entry's record, from the store;
- :mod:`~tournaments.arena.service`: the arena as one object, what the web layer calls,
  and :mod:`~tournaments.arena.errors`, what it refuses, by kind;
- :mod:`~tournaments.arena.running`: the arena at work (admission and ladder, kept going);
- :mod:`~tournaments.arena.web` (:mod:`~tournaments.arena.api`,
  :mod:`~tournaments.arena.pages`, over :mod:`~tournaments.arena.serving` and
  :mod:`~tournaments.arena.live`): the HTTP API under ``/api/v1/`` and the pages;
- :mod:`~tournaments.arena.client`: the command line's client of that API.

The records are :mod:`tournaments.store.arena`'s. docs/arena.md is the user's guide.
"""
