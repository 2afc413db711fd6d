"""Each bot process tree contained as a whole: a cgroup of its own, its CPU read from outside it.

A bot's limits used to be per process (``RLIMIT_DATA``, ``RLIMIT_NPROC``), so a bot's
children multiplied them, and nothing kept a bot from spinning CPU in background threads
or children to slow everyone else. Here each bot process, with everything it starts, runs
in a control group (cgroup) of its own, made by its host:

- a memory limit for the whole tree (``--bot-memory``): its ``/tmp`` counts, being memory
  (a tmpfs); no swap; past it, the kernel stops the tree (it kills one of its processes);
- a limit of processes and threads for the whole tree (``--bot-processes``);
- an equal share of the CPU: every bot's group has the same weight, so a bot that burns
  CPU slows its own processes, not its opponents';
- its CPU read from the group (the kernel's own count for the tree, to the nanosecond):
  the referee's CPU decision clock (:mod:`referee.match.cpu`);
- torn down with the group: stopping a bot kills every process left in it.

Where cgroup v2 is delegated to nap (a systemd user scope with ``Delegate=yes``, a
subtree when nap runs as a service) it is used; where the v1 controllers ``memory``,
``pids``, ``cpu`` and ``cpuacct`` are writable (root on a hybrid hierarchy, as on the
development and CI machines), those. Where neither, :func:`containment_problem` says why in
a few words: each process keeps the sandbox's own limits, the CPU is read from ``/proc``
(:class:`ProcessTreeCpu`), and the run says so once and in its standings. A host makes
its groups under its own process's groups (nested, so whatever contains nap still does),
in a folder of its own, ``nap-<pid>-<random>``; a folder a killed host left behind is
removed by the next host on the machine.

A process enters its group before it runs anything of the bot's: its command is started
through ``/bin/sh``, which writes its own process id into the group and then becomes the
command (:meth:`BotCgroup.command`). bubblewrap stays the isolation for files, processes
and network (:mod:`tournaments.play.sandbox`); a bot run without it (``--sandbox off``)
runs as nap's user, who may move it out of its group.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import secrets
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from tournaments.plan.isolation import BotLimits

__all__ = [
    "ENTER",
    "BotCgroup",
    "Cgroups",
    "Hierarchy",
    "ProcessTreeCpu",
    "cgroup_mounts",
    "containment_problem",
    "cpu_from_proc",
    "delegated_v2",
    "host_cgroups",
    "own_groups",
    "sweep_dead_hosts",
    "writable_v1",
]

V1_CONTROLLERS: Final = ("memory", "pids", "cpu", "cpuacct")
"""The cgroup v1 controllers a bot's group needs."""
V2_CONTROLLERS: Final = ("memory", "pids", "cpu")
"""The cgroup v2 controllers a bot's group needs (its CPU is in ``cpu.stat`` either way)."""
CPU_WEIGHT_V1: Final = 1024
"""``cpu.shares`` of every bot's group (the kernel's default for one process): equal shares."""
CPU_WEIGHT_V2: Final = 100
"""``cpu.weight`` of every bot's group (the kernel's default): equal shares."""
ENTER_FAILED: Final = 125
"""The exit status of a bot process that could not enter its group (it never ran)."""
ENTER: Final = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'
"""The shell's part (:meth:`BotCgroup.command`): enter each group named, then become the command."""
_PREFIX: Final = "nap-"
_HOST_NAME = re.compile(r"nap-(\d+)-[0-9a-f]+")
_KILL_ROUNDS: Final = 50
"""Rounds of SIGKILL to every process in a group (each round catches what forked meanwhile)."""


@dataclass(frozen=True, slots=True)
class Hierarchy:
    """Where this process's cgroups are: ``base`` for each controller (one folder per mount)."""

    version: int
    bases: dict[str, Path]
    """Per controller, the folder of this process's own group (controllers mounted together share one)."""

    @property
    def folders(self) -> tuple[Path, ...]:
        """Each distinct folder once."""
        return tuple(dict.fromkeys(self.bases.values()))

    @property
    def name(self) -> str:
        """``cgroup v1`` or ``cgroup v2``."""
        return f"cgroup v{self.version}"


def cgroup_mounts(mountinfo: str) -> list[tuple[str, str, set[str]]]:
    """The cgroup mounts of ``/proc/self/mountinfo``: (mount point, file system type, super options)."""
    found = []
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and len(tail) >= 3 and tail[0] in {"cgroup", "cgroup2"}:
            found.append((fields[4].replace("\\040", " "), tail[0], set(tail[2].split(","))))
    return found


def own_groups(proc_cgroup: str) -> dict[str, str]:
    """Per v1 controller the group of the process, and its v2 group under ``""`` (``/proc/self/cgroup``)."""
    own: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if number == "0" and not controllers:
            own[""] = path
        for controller in controllers.split(","):
            if controller:
                own[controller] = path
    return own


def delegated_v2(mounts: Sequence[tuple[str, str, set[str]]], own: dict[str, str]) -> Hierarchy | str:
    """The v2 hierarchy delegated to this process, or why not."""
    point = next((mount for mount, kind, _ in mounts if kind == "cgroup2"), None)
    if point is None or "" not in own:
        return "no cgroup v2 here"
    base = Path(point) / own[""].lstrip("/")
    try:
        offered = set((base / "cgroup.controllers").read_text().split())
    except OSError as exc:
        return f"cgroup v2 unreadable at {base} ({exc.strerror or exc})"
    missing = [name for name in V2_CONTROLLERS if name not in offered]
    if missing:
        return f"cgroup v2 delegates no {', '.join(missing)} controller here ({base})"
    if not os.access(base, os.W_OK):
        return f"cgroup v2 group {base} is not writable"
    return Hierarchy(2, dict.fromkeys(V2_CONTROLLERS, base))


def writable_v1(mounts: Sequence[tuple[str, str, set[str]]], own: dict[str, str]) -> Hierarchy | str:
    """The writable v1 hierarchies of the controllers a bot needs, or why not."""
    bases: dict[str, Path] = {}
    for controller in V1_CONTROLLERS:
        point = next((m for m, kind, options in mounts if kind == "cgroup" and controller in options), None)
        if point is None or controller not in own:
            return f"no cgroup v1 {controller} controller here"
        base = Path(point) / own[controller].lstrip("/")
        if not os.access(base, os.W_OK):
            return f"cgroup v1 {controller} group {base} is not writable"
        bases[controller] = base
    return Hierarchy(1, bases)


def _probe() -> Hierarchy | str:
    """The hierarchy bots can be contained in here (v2 first), or why neither works."""
    if not sys.platform.startswith("linux"):
        return f"cgroups are Linux's, not {sys.platform}'s"
    try:
        mounts = cgroup_mounts(Path("/proc/self/mountinfo").read_text())
        own = own_groups(Path("/proc/self/cgroup").read_text())
    except OSError as exc:
        return f"cannot read this process's cgroups ({exc.strerror or exc})"
    v2 = delegated_v2(mounts, own)
    if isinstance(v2, Hierarchy):
        return v2
    v1 = writable_v1(mounts, own)
    if isinstance(v1, Hierarchy):
        return v1
    return f"{v2}, and {v1}"


@functools.cache
def _here() -> Hierarchy | str:
    return _probe()


def cpu_from_proc() -> bool:
    """Whether a process tree's CPU can be read from ``/proc`` here (where no cgroup counts it)."""
    return Path(f"/proc/{os.getpid()}/task").is_dir() and hasattr(time, "clock_gettime")


def containment_problem() -> str | None:
    """Why bot process trees cannot be contained in cgroups here, in a few words; None when they can.

    Worked out once per process.
    """
    found = _here()
    return found if isinstance(found, str) else None


def host_cgroups() -> Cgroups | None:
    """A host's groups for its bots (made with the first bot's); None where bots cannot be contained."""
    found = _here()
    return None if isinstance(found, str) else Cgroups(found)


def _write(path: Path, value: str) -> None:
    path.write_text(value)


def _pids(folder: Path) -> list[int]:
    try:
        return [int(line) for line in (folder / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (another user's included)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:  # no process has such a number
        return False
    return True


def _counter(path: Path, name: str) -> int:
    """The value of ``name`` in a flat-keyed cgroup file (``oom_kill 2``); 0 when absent."""
    with contextlib.suppress(OSError):
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == name and value.strip().isdigit():
                return int(value)
    return 0


class Cgroups:
    """One host's cgroups for its bot processes: a folder of its own, a group per bot process in it."""

    def __init__(self, hierarchy: Hierarchy) -> None:
        self.hierarchy = hierarchy
        self.name = f"{_PREFIX}{os.getpid()}-{secrets.token_hex(3)}"
        self._made = False
        self._count = 0
        self._bots: list[BotCgroup] = []

    @property
    def kind(self) -> str:
        """``cgroup v1`` or ``cgroup v2``."""
        return self.hierarchy.name

    def _make(self) -> None:
        if self._made:
            return
        for base in self.hierarchy.folders:
            sweep_dead_hosts(base)
            folder = base / self.name
            folder.mkdir(exist_ok=True)
            if self.hierarchy.version == 2:  # the controllers the bots' groups need, in this folder
                _delegate(base, folder)
        self._made = True

    def bot(self, name: str, limits: BotLimits) -> BotCgroup:
        """A new group for one bot process (``name`` for its folder), with ``limits`` for its whole tree.

        RunnerError-free: raises OSError (one line in its ``strerror``) when the group cannot
        be made; the caller says which bot.
        """
        self._make()
        self._count += 1
        stem = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:40]
        group = BotCgroup(
            self.hierarchy,
            {c: b / self.name / f"{stem}-{self._count}" for c, b in self.hierarchy.bases.items()},
        )
        group.make(limits)
        self._bots.append(group)
        return group

    def close(self) -> None:
        """Tear every bot's group down (its processes killed), then the host's folder."""
        for group in self._bots:
            group.remove()
        self._bots.clear()
        if self._made:
            for base in self.hierarchy.folders:
                with contextlib.suppress(OSError):
                    (base / self.name).rmdir()
            self._made = False


def _delegate(base: Path, folder: Path) -> None:
    """On cgroup v2, have ``folder``'s children get the bots' controllers.

    The kernel lets a group hand controllers down only when it holds no process itself:
    where ``base`` holds some (this one), they are moved into a leaf group of their own.
    """
    wanted = " ".join(f"+{name}" for name in V2_CONTROLLERS)
    try:
        _write(base / "cgroup.subtree_control", wanted)
    except OSError:
        leaf = base / f"{_PREFIX}leaf"
        leaf.mkdir(exist_ok=True)
        for pid in _pids(base):
            with contextlib.suppress(OSError):
                _write(leaf / "cgroup.procs", str(pid))
        _write(base / "cgroup.subtree_control", wanted)
    _write(folder / "cgroup.subtree_control", wanted)


def sweep_dead_hosts(base: Path) -> None:
    """Remove what hosts that were killed left in ``base``: folders of dead hosts, once empty."""
    with contextlib.suppress(OSError):
        for folder in base.iterdir():
            match = _HOST_NAME.fullmatch(folder.name)
            if match is None or not folder.is_dir() or alive(int(match.group(1))):
                continue
            for child in folder.iterdir():
                if child.is_dir():
                    _kill_all(child)
                    with contextlib.suppress(OSError):
                        child.rmdir()
            with contextlib.suppress(OSError):
                folder.rmdir()


def _kill_all(folder: Path) -> None:
    """SIGKILL every process in the group at ``folder`` until none is left (bounded rounds)."""
    kill = folder / "cgroup.kill"
    if kill.exists():
        with contextlib.suppress(OSError):
            _write(kill, "1")
    for _ in range(_KILL_ROUNDS):
        pids = _pids(folder)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


class BotCgroup:
    """The cgroup of one bot process and everything it starts (see the module)."""

    def __init__(self, hierarchy: Hierarchy, folders: dict[str, Path]) -> None:
        self.hierarchy = hierarchy
        self.folders = folders
        """Per controller, the group's folder (controllers mounted together share one)."""
        self._cpu_fd: int | None = None

    @property
    def kind(self) -> str:
        """``cgroup v1`` or ``cgroup v2``."""
        return self.hierarchy.name

    def make(self, limits: BotLimits) -> None:
        """Make the group's folders and set its limits (OSError when the kernel refuses)."""
        for folder in dict.fromkeys(self.folders.values()):
            folder.mkdir(exist_ok=True)
        memory = str(limits.memory_mb << 20)
        if self.hierarchy.version == 2:
            folder = self.folders["memory"]
            _write(folder / "memory.max", memory)
            if (folder / "memory.swap.max").exists():
                _write(folder / "memory.swap.max", "0")
            _write(folder / "pids.max", str(limits.processes))
            _write(folder / "cpu.weight", str(CPU_WEIGHT_V2))
            return
        memory_folder = self.folders["memory"]
        _write(memory_folder / "memory.limit_in_bytes", memory)
        if (memory_folder / "memory.memsw.limit_in_bytes").exists():  # memory and swap together: no swap
            _write(memory_folder / "memory.memsw.limit_in_bytes", memory)
        _write(self.folders["pids"] / "pids.max", str(limits.processes))
        _write(self.folders["cpu"] / "cpu.shares", str(CPU_WEIGHT_V1))

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` started in this group: ``/bin/sh`` enters it (status 125 if it cannot), then execs."""
        procs = [str(folder / "cgroup.procs") for folder in dict.fromkeys(self.folders.values())]
        return ["/bin/sh", "-c", ENTER, "nap-cgroup", *procs, "--", *argv]

    def cpu_ms(self) -> float | None:
        """The CPU the group's processes have spent, alive or gone (ms); None when it cannot be read."""
        try:
            if self.hierarchy.version == 2:
                return _counter(self.folders["cpu"] / "cpu.stat", "usage_usec") / 1000
            fd = self._cpu_fd
            if fd is None:
                fd = self._cpu_fd = os.open(self.folders["cpuacct"] / "cpuacct.usage", os.O_RDONLY)
            return int(os.pread(fd, 32, 0)) / 1e6
        except (OSError, ValueError):
            return None

    def counts(self) -> tuple[int, int]:
        """The kernel's counts of the group's limits reached so far: (memory, processes).

        Memory: its processes killed for it (``oom_kill``) and the allocations refused at
        it; processes: the forks and threads refused.
        """
        memory, pids = self.folders["memory"], self.folders["pids"]
        if self.hierarchy.version == 2:
            hit = _counter(memory / "memory.events", "oom_kill") + _counter(memory / "memory.events", "max")
        else:
            hit = _counter(memory / "memory.oom_control", "oom_kill") + _count_file(memory / "memory.failcnt")
        return hit, _counter(pids / "pids.events", "max")

    @staticmethod
    def reached(limits: BotLimits, now: tuple[int, int], since: tuple[int, int]) -> str:
        """Which of ``limits`` the tree reached between the counts ``since`` and ``now`` (``""``: none)."""
        if now[0] > since[0]:
            return (
                f"it reached its memory limit ({limits.memory_mb} MiB for all its processes together, "
                "its /tmp included, --bot-memory)"
            )
        if now[1] > since[1]:
            return (
                f"it reached its limit of processes and threads ({limits.processes} for all its "
                "processes together, --bot-processes)"
            )
        return ""

    def kill(self) -> None:
        """Kill every process left in the group (SIGKILL)."""
        _kill_all(self.folders["pids"])

    def remove(self) -> None:
        """Kill what is left in the group and remove its folders."""
        self.kill()
        if self._cpu_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._cpu_fd)
            self._cpu_fd = None
        for folder in dict.fromkeys(self.folders.values()):
            with contextlib.suppress(OSError):
                folder.rmdir()


def _count_file(path: Path) -> int:
    with contextlib.suppress(OSError, ValueError):
        return int(path.read_text().strip() or 0)
    return 0


# -- where no cgroup can be made: the CPU of a process tree from /proc -------------------------

_TREE_EVERY_S: Final = 0.1
"""How often :class:`ProcessTreeCpu` looks for the tree's processes again (children come and go)."""
_TICK_MS: Final = 1000 / (os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100)
"""One clock tick of ``/proc/PID/stat``, in ms."""


class ProcessTreeCpu:
    """The CPU of a process and its descendants, read from ``/proc`` where no cgroup counts it.

    Each live process's own CPU clock (to the nanosecond), and what the ones gone spent as
    their parents waited for them (``/proc/PID/stat``, in clock ticks). The tree is looked
    for again at most every :data:`_TREE_EVERY_S` (a child started meanwhile counts from
    then); a process that exits between two looks stops counting until the next one. So
    it is coarser than a cgroup's count, and a process that leaves its tree (a daemon)
    is no longer counted. ``root`` gives the process id of the tree's root now (None: none).
    The count never goes down, across restarts of the root too.
    """

    def __init__(self, root: Callable[[], int | None], *, now: Callable[[], float] = time.monotonic) -> None:
        self._root = root
        self._now = now
        self._members: tuple[int, ...] = ()
        self._looked_at = float("-inf")
        self._of_root: int | None = None
        self._reaped = 0.0
        """The ms the tree's gone processes spent, as their parents waited for them (at the last look)."""
        self._base = 0.0
        """What earlier roots' trees spent, so the count never goes down."""
        self._last = 0.0

    def __call__(self) -> float | None:
        """The tree's CPU so far (ms); None when no process is running."""
        root = self._root()
        if root is None:
            return None
        if root != self._of_root:
            self._base = self._last
            self._of_root = root
            self._looked_at = float("-inf")
        if self._now() - self._looked_at >= _TREE_EVERY_S:
            self._look(root)
        total = self._reaped
        for pid in self._members:
            with contextlib.suppress(OSError):
                total += time.clock_gettime((~pid << 3) | 2) * 1000  # the process's CPU clock
        self._last = max(self._last, self._base + total)
        return self._last

    def _look(self, root: int) -> None:
        self._looked_at = self._now()
        members, reaped = [], 0.0
        for pid in _descendants(root):
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            members.append(pid)
            reaped += (int(fields[13]) + int(fields[14])) * _TICK_MS  # cutime, cstime
        self._members = tuple(members)
        self._reaped = reaped


def terminate_below(root: int) -> None:
    """SIGTERM every process below ``root``, not ``root`` itself (a sandbox's bubblewrap).

    A PID namespace's init among them (bubblewrap's own) takes no signal it has no handler
    for, so it is the bot and its children that are told to leave.
    """
    for pid in _descendants(root):
        if pid != root:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)


def _descendants(root: int) -> Iterable[int]:
    """``root`` and every process below it, from ``/proc/PID/task/TID/children``."""
    pending = [root]
    seen: set[int] = set()
    while pending:
        pid = pending.pop()
        if pid in seen:
            continue
        seen.add(pid)
        yield pid
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{pid}/task").iterdir():
                with contextlib.suppress(OSError, ValueError):
                    pending += [int(child) for child in (task / "children").read_text().split()]
