"""The first program inside a bot's sandbox: set the bot's resource limits, drop root, start the bot.

Run by bubblewrap (:mod:`tournaments.play.sandbox`) as
``python -I -S sandbox_init.py DATA NPROC NOFILE UID -- COMMAND...``: the standard library
only, no site packages, so it starts in a few milliseconds. It sets the process's limits
(``RLIMIT_DATA`` bytes of memory, ``RLIMIT_NPROC`` processes and threads,
``RLIMIT_NOFILE`` open files, no core file), which the bot and everything it starts
inherit, then replaces itself with the bot's command. ``UID`` is -1 when the sandbox runs
as the user who started nap (a user namespace keeps it unprivileged); when nap runs as
root, bubblewrap keeps only the right to change user, and this program becomes ``UID`` (a
user id of its own, unused elsewhere, so that the process limit counts this sandbox's
processes only, which it does not for root) before starting the bot.
"""

from __future__ import annotations

import os
import resource
import sys

_CANNOT_START = 127
"""The exit status when the command cannot be started (a shell's for "command not found")."""


def main(argv: list[str]) -> None:
    """Apply the limits and user given in ``argv`` and exec the command after ``--``."""
    data, processes, files, uid = (int(value) for value in argv[:4])
    command = argv[5:]
    resource.setrlimit(resource.RLIMIT_DATA, (data, data))
    resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if uid >= 0:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    try:
        os.execvp(command[0], command)  # noqa: S606 - the bot's own argv, no shell
    except OSError as exc:
        sys.stderr.write(f"nap sandbox: cannot start {command[0]}: {exc.strerror or exc}\n")
        sys.exit(_CANNOT_START)


if __name__ == "__main__":
    main(sys.argv[1:])
