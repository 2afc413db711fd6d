"""Nap Arena: a long-running host where people submit bots and a duplicate ladder plays them.

Uploads are checked and unpacked only inside the sandbox (:mod:`tournaments.arena.packs`,
:mod:`tournaments.arena.unpacker`).
"""
