"""Bots in a sandbox: bubblewrap on Linux, so that a bot learns nothing it may not see.

A bot is untrusted code. Started as a plain process it could read the tournament's
database (every finished session's deck), the output folder, the other bots' folders
and logs, every process's command line and environment (the other bots' tokens), or
reach the other workers' referees. A :class:`Sandbox` turns its command into a
`bubblewrap <https://github.com/containers/bubblewrap>`_ command line in which it sees:

- read-only: the system's programs and libraries (``/usr`` and the links beside it, a few
  files of ``/etc``), the interpreter nap runs on with its site packages, nap's own
  ``referee`` and ``clients`` packages (what a Python bot imports), the folders on
  ``PATH``, and its own folder, its working directory;
- a private, empty, writable ``/tmp`` (its home is ``/tmp/home``): a tmpfs of at most its
  memory limit, gone when the process ends;
- the referee's Unix-domain socket at ``/run/nap/referee.sock`` (:data:`REFEREE_SOCKET`);
- its own PID, IPC, UTS and network namespaces: no other process, no network at all;
- its limits (:class:`~tournaments.plan.isolation.BotLimits`): memory, processes and
  threads, open files, set by :mod:`tournaments.play.sandbox_init` before the bot starts.

What the sandbox shows must not hold the database or the output folder (``hidden``): a
bot folder that does is refused with one line. A bot's build (``cc``, ``npm ci``) runs in
the same sandbox with its folder writable and the network (the arena's unpacker: its
folder writable, no network). ``docs/security.md`` has the threat model;
:func:`sandbox_problem` says why bubblewrap cannot be used here, if it cannot.
"""

from __future__ import annotations

import compileall
import functools
import os
import re
import secrets
import shutil
import signal
import site
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import clients
import referee
from clients.environment import ADDRESS_ENV, TOKEN_ENV
from clients.environment import PROTO_ENV as NAP_PROTO
from tournaments.errors import RunnerError
from tournaments.plan.isolation import SANDBOX_MODES, BotLimits

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

__all__ = [
    "ADDRESS_ENV",
    "INSTALL_BWRAP",
    "NAP_PROTO",
    "REFEREE_SOCKET",
    "TOKEN_ENV",
    "Sandbox",
    "SandboxSpec",
    "choose_sandbox",
    "explain_exit",
    "limit_reached",
    "sandbox_for",
    "sandbox_problem",
    "this_machine_proto",
]

_CHECKOUT_PROTO = Path(__file__).resolve().parents[2] / "proto" / "nap" / "v1" / "nap.proto"
"""Where the protocol is in a checkout of this repository (an installed wheel has none)."""
INSTALL_BWRAP = "install bubblewrap (Debian, Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap)"
REFEREE_SOCKET = "/run/nap/referee.sock"
"""Where a sandboxed bot finds the referee (``NAP_REFEREE=unix:/run/nap/referee.sock``)."""
_INIT = "/run/nap/init.py"
_PROTO = "/run/nap/nap.proto"
_HOME = "/tmp/home"  # noqa: S108 - inside the sandbox: a private tmpfs
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""The system's programs and libraries: bound read-only, or linked as they are (``/bin -> usr/bin``)."""
_ETC = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "localtime",
    "nsswitch.conf",
    "passwd",
    "group",
    "hosts",
)
"""What a bot's programs read of ``/etc``: the dynamic linker's files, program links, the time zone, names."""
_ETC_BUILD = (
    "resolv.conf",
    "gai.conf",
    "host.conf",
    "services",
    "protocols",
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
    "pki",
    "crypto-policies",
    "npmrc",
    "pip.conf",
    "xdg",
)
"""What a build adds: the network's names and certificates, the package managers' settings."""
_PASSED = ("LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "TERM")
_PASSED_TO_BUILDS = re.compile(
    r"(?i)(https?_proxy|no_proxy|all_proxy|npm_config_\w+|pip_\w+|cc|cxx|cflags|cxxflags|ldflags|cargo_\w+)"
)
"""The settings a build may need from nap's environment (proxies, package managers, compilers)."""
_PROBE_TIMEOUT_S = 300.0
"""Seconds the probe (an empty Python in a sandbox, a fraction of a second) may take: generous,
since a probe cut short on a busy machine would run every bot of the run unisolated."""
_UID_BASE = 0x40000000
"""The user ids a sandbox runs its bot as when nap runs as root: one of 2**30 above this, at random."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxSpec:
    """What every host of a run needs to sandbox its bots: their limits, and the paths no bot may see.

    ``hidden`` holds the database, the output folder and the logs folder: a bot folder
    that holds one of them is refused.
    """

    limits: BotLimits = field(default_factory=BotLimits)
    hidden: tuple[Path, ...] = ()


def this_machine_proto() -> Path | None:
    """The ``nap.proto`` a bot here should load: ``$NAP_PROTO``, else this checkout's (none in a wheel)."""
    for candidate in (os.environ.get(NAP_PROTO), _CHECKOUT_PROTO):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


@functools.cache
def sandbox_problem() -> str | None:
    """Why bots cannot be sandboxed on this machine, in a few words; None when they can.

    Tried once per process: bubblewrap must be on PATH and able to make the namespaces
    :class:`Sandbox` asks for (a kernel or a policy may forbid them).
    """
    if not sys.platform.startswith("linux"):
        return f"bubblewrap runs on Linux only, not on {sys.platform}"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    interpreter = Path(sys.executable).resolve()
    probe = [  # every kind of option a bot's sandbox uses (an old bubblewrap lacks --size)
        bwrap,
        *_namespaces(network=False),
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "1777",
        "--size",
        str(1 << 20),
        "--tmpfs",
        "/tmp",  # noqa: S108 - the probe's own
        "--ro-bind",  # the interpreter shown again, should it live under /tmp (a checkout there)
        str(interpreter.parent),
        str(interpreter.parent),
        "--remount-ro",
        "/",
        "--",
        str(interpreter),
        "-I",
        "-S",
        "-c",
        "",
    ]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=_PROBE_TIMEOUT_S, check=False)  # noqa: S603 - our own argv
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap does not run here: {exc}"
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()
        return f"bubblewrap cannot make a sandbox here: {said[-1] if said else f'status {done.returncode}'}"
    return None


def choose_sandbox(mode: str) -> str | None:
    """Whether a run with ``--sandbox mode`` isolates its bots: None when it does, else why not.

    Raises RunnerError (one line, with how to install bubblewrap) for ``on`` where the
    sandbox cannot be made, and ValueError for an unknown mode.
    """
    if mode not in SANDBOX_MODES:
        msg = f"--sandbox must be one of {', '.join(SANDBOX_MODES)}, got {mode!r}"
        raise ValueError(msg)
    if mode == "off":
        return "--sandbox off"
    problem = sandbox_problem()
    if problem is not None and mode == "on":
        msg = f"--sandbox on: bots cannot be isolated here: {problem}; {INSTALL_BWRAP}, or use --sandbox off"
        raise RunnerError(msg)
    return problem


def sandbox_for(mode: str, spec: SandboxSpec) -> Sandbox | None:
    """The sandbox ``--sandbox mode`` asks for here, or None (``off``, or ``auto`` where there is none).

    Raises RunnerError as :func:`choose_sandbox` does. For a step before the run (a bot's
    build); the run itself says, once, when its bots are not isolated.
    """
    return None if choose_sandbox(mode) is not None else Sandbox(spec)


def _namespaces(*, network: bool) -> list[str]:
    """Bubblewrap's namespace options: everything private (the network too, unless ``network``).

    As root no user namespace is made: the sandbox keeps only the right to change user,
    which :mod:`tournaments.play.sandbox_init` uses to drop root (see :meth:`Sandbox.bot`).
    """
    if os.geteuid() != 0:
        return ["--unshare-all", *(["--share-net"] if network else []), "--die-with-parent", "--new-session"]
    return [
        "--unshare-ipc",
        "--unshare-pid",
        *([] if network else ["--unshare-net"]),
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--cap-drop",
        "ALL",
        "--cap-add",
        "CAP_SETUID",
        "--cap-add",
        "CAP_SETGID",
        "--die-with-parent",
        "--new-session",
    ]


class _Mounts:
    """Bubblewrap's mount options, in order: each bound path's parents made first (mode 0755)."""

    def __init__(self) -> None:
        self.args: list[str] = []
        self._bound: list[Path] = []
        self._made: set[Path] = set()

    def covered(self, path: Path) -> bool:
        """Whether ``path`` is already visible through a bound folder."""
        return any(path == bound or bound in path.parents for bound in self._bound)

    def bind(self, source: Path, destination: Path | None = None, *, writable: bool = False) -> None:
        """Show ``source`` at ``destination`` (its own path by default), read-only unless ``writable``."""
        target = destination or source
        if self.covered(target) and not writable:
            return
        self._parents(target)
        self.args += ["--bind" if writable else "--ro-bind", str(source), str(target)]
        self._bound.append(target)

    def link(self, target: str, path: Path) -> None:
        """A symbolic link at ``path`` to ``target``."""
        self.args += ["--symlink", target, str(path)]
        self._bound.append(path)

    def scratch(self, path: Path, *, size: int) -> None:
        """A private, empty, world-writable tmpfs of at most ``size`` bytes at ``path``."""
        self.args += ["--perms", "1777", "--size", str(size), "--tmpfs", str(path)]
        self._made.add(path)

    def folder(self, path: Path, *, mode: str = "0755") -> None:
        """An empty folder at ``path`` (inside a scratch tmpfs or the sandbox's root)."""
        self._parents(path)
        self.args += ["--perms", mode, "--dir", str(path)]
        self._made.add(path)

    def _parents(self, path: Path) -> None:
        for parent in reversed(path.parents[:-1]):
            if parent not in self._made and not self.covered(parent):
                self.args += ["--perms", "0755", "--dir", str(parent)]
                self._made.add(parent)


class Sandbox:
    """Bubblewrap command lines for this machine's bots: see the module's docstring.

    Made once per host (a worker process, a Ray worker): what it shares with every bot
    (the system, the interpreter, nap's packages) is worked out here, from this process's
    own interpreter. Raises RunnerError when bubblewrap cannot be used here.
    """

    def __init__(self, spec: SandboxSpec) -> None:
        problem = sandbox_problem()
        if problem is not None:
            msg = f"bots cannot be isolated here: {problem}; {INSTALL_BWRAP}, or use --sandbox off"
            raise RunnerError(msg)
        self.spec = spec
        self._bwrap = shutil.which("bwrap") or "bwrap"
        self._hidden = tuple(path.resolve() for path in spec.hidden)
        self._roots = tuple(
            dict.fromkeys(str(Path(package.__path__[0]).resolve().parent) for package in (referee, clients))
        )
        self._proto = this_machine_proto()
        for root in self._roots:  # a sandboxed bot cannot write bytecode: compile nap's packages once here
            for package in ("referee", "clients"):
                compileall.compile_dir(Path(root) / package, quiet=2)

    @property
    def limits(self) -> BotLimits:
        """The limits of every bot process this sandbox starts."""
        return self.spec.limits

    def bot(
        self, command: Sequence[str], *, name: str, folder: Path | None, socket: Path, token: str
    ) -> tuple[list[str], dict[str, str]]:
        """The argv and environment that start bot ``name``'s ``command`` in a sandbox of its own.

        ``folder`` is its working directory (None: its empty home); ``socket`` the
        referee's Unix-domain socket on this machine. Raises RunnerError (one line) when
        the folder holds a hidden path, or cannot be read by the sandbox's user.
        """
        mounts = self._shared(command, folder=folder, name=name, build=False)
        mounts.bind(socket, Path(REFEREE_SOCKET), writable=True)
        uid = -1 if os.geteuid() != 0 else _UID_BASE + secrets.randbelow(_UID_BASE - 1)
        if uid >= 0 and folder is not None and (folder.stat().st_mode & 0o005) != 0o005:
            msg = (
                f"bot {name}: the sandbox runs it as an unprivileged user (nap runs as root), who cannot "
                f"read its folder {folder}: make it readable (chmod o+rX)"
            )
            raise RunnerError(msg)
        env = self._environment(build=False)
        env[ADDRESS_ENV] = f"unix:{REFEREE_SOCKET}"
        env[TOKEN_ENV] = token
        if self._proto is not None:
            env[NAP_PROTO] = _PROTO
        return self._argv(mounts, command, folder=folder, uid=uid, network=False), env

    def build(
        self,
        command: Sequence[str],
        *,
        name: str,
        folder: Path,
        network: bool = True,
        tools: Mapping[str, Path] | None = None,
    ) -> tuple[list[str], dict[str, str]]:
        """The argv and environment that run bot ``name``'s build ``command`` in its folder, sandboxed.

        The folder is writable and, unless ``network`` is False, the network reachable (a
        build downloads and compiles); nothing else of nap's is shown but what a bot sees,
        and ``tools``: files of nap's own shown read-only at the given paths inside (the
        arena's unpacker at ``/run/nap/unpacker.py``, which unpacks an upload into the folder).
        """
        mounts = self._shared(command, folder=None, name=name, build=True)
        for inside, source in (tools or {}).items():
            mounts.bind(source.resolve(), Path(inside))
        mounts.bind(folder.resolve(), writable=True)
        env = self._environment(build=True)
        return self._argv(mounts, command, folder=folder, uid=-1, network=network), env

    def _argv(
        self, mounts: _Mounts, command: Sequence[str], *, folder: Path | None, uid: int, network: bool
    ) -> list[str]:
        limits = self.limits
        memory = limits.memory_mb << 20
        return [
            self._bwrap,
            *_namespaces(network=network),
            "--hostname",
            "nap-bot",
            *mounts.args,
            "--remount-ro",
            "/",
            "--chdir",
            _HOME if folder is None else str(folder.resolve()),
            "--",
            sys.executable,
            "-I",
            "-S",
            _INIT,
            str(memory),
            str(limits.processes),
            str(limits.open_files),
            str(uid),
            "--",
            *command,
        ]

    def _shared(self, command: Sequence[str], *, folder: Path | None, name: str, build: bool) -> _Mounts:
        """The mounts every sandbox of this machine has, then ``command``'s program and ``folder``."""
        mounts = _system_mounts(build=build, size=self.limits.memory_mb << 20)
        mounts.bind(Path(__file__).with_name("sandbox_init.py").resolve(), Path(_INIT))
        if self._proto is not None:
            mounts.bind(self._proto, Path(_PROTO))
        for library in self._libraries(command):
            if self._holds_hidden(library) is None:
                mounts.bind(library)
        if folder is not None:
            resolved = folder.resolve()
            hidden = self._holds_hidden(resolved)
            if hidden is not None:
                msg = f"bot {name}: its folder {folder} holds {hidden}, which bots must not see: move one"
                raise RunnerError(msg)
            mounts.bind(resolved)
        return mounts

    def _libraries(self, command: Sequence[str]) -> list[Path]:
        """What ``command`` may need, read-only: the interpreter, site packages, nap's, PATH, its program."""
        paths: list[Path] = [
            Path(prefix) for prefix in (sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix)
        ]
        paths += [Path(folder) for folder in site.getsitepackages()]
        user_site = site.getusersitepackages()
        paths.append(Path(user_site))
        paths += [Path(root) / package for root in self._roots for package in ("referee", "clients")]
        paths += [
            Path(entry) for entry in os.environ.get("PATH", "").split(os.pathsep) if entry.startswith("/")
        ]
        paths += _program_folders(command)
        found: list[Path] = []
        for path in paths:
            for form in (path.absolute(), path.resolve()):
                if form.is_dir() and form not in found:
                    found.append(form)
        return found

    def _holds_hidden(self, path: Path) -> Path | None:
        """The first hidden path that ``path`` is or holds, if any."""
        resolved = path.resolve()
        for hidden in self._hidden:
            if hidden == resolved or resolved in hidden.parents:
                return hidden
        return None

    def _environment(self, *, build: bool) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "HOME": _HOME,
            "TMPDIR": "/tmp",  # noqa: S108 - the sandbox's own
            "PYTHONUNBUFFERED": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONPATH": os.pathsep.join(self._roots),
        }
        env.update(
            (name, value)
            for name, value in os.environ.items()
            if name in _PASSED or (build and _PASSED_TO_BUILDS.fullmatch(name))
        )
        return env


def _system_mounts(*, build: bool, size: int) -> _Mounts:
    """What every sandbox shows: /proc, /dev, a scratch /tmp of ``size`` bytes, the system, some of /etc."""
    mounts = _Mounts()
    mounts.args += ["--proc", "/proc", "--dev", "/dev"]
    mounts.scratch(Path("/tmp"), size=size)  # noqa: S108 - the sandbox's own
    mounts.folder(Path(_HOME), mode="0777")
    for system in map(Path, _SYSTEM):
        if system.is_symlink():
            mounts.link(str(system.readlink()), system)
        elif system.is_dir():
            mounts.bind(system)
    for entry in (*_ETC, *(_ETC_BUILD if build else ())):
        path = Path("/etc") / entry
        if path.exists():
            mounts.bind(path)
    return mounts


def _program_folders(command: Sequence[str]) -> list[Path]:
    """The install folders of the command's program (``/opt/node`` for ``/opt/node/bin/node``) and scripts.

    A program named by path, or found on PATH, is shown with the folder it was installed
    in; an argument that is an absolute path to a file (a script) is shown with its folder.
    """
    folders: list[Path] = []
    if command:
        program = command[0] if "/" in command[0] else shutil.which(command[0])
        if program is not None and Path(program).is_absolute():
            real = Path(program).resolve()
            folders.append(real.parent.parent if real.parent.name == "bin" else real.parent)
    folders += [Path(arg).parent for arg in command[1:] if arg.startswith("/") and Path(arg).is_file()]
    return [folder for folder in folders if folder != Path("/")]


_MEMORY = re.compile(
    r"MemoryError|Cannot allocate memory|out of memory|bad_alloc|allocation failed|ENOMEM", re.IGNORECASE
)
_FILES = re.compile(r"Too many open files|EMFILE")
_PROCESSES = re.compile(r"can't start new thread|Resource temporarily unavailable|EAGAIN|fork: retry")


def limit_reached(lines: Iterable[str], limits: BotLimits) -> str:
    """Which of its ``limits`` a sandboxed bot reached, if its output ``lines`` say so ("" if they do not).

    A memory, process or file error (Python's ``MemoryError``, Node's ``allocation failed``,
    ``EMFILE``, ``can't start new thread``, ...) means it reached that limit: nothing else
    limits it in its sandbox.
    """
    said = "\n".join(lines)
    if _MEMORY.search(said):
        return f"it reached its memory limit ({limits.memory_mb} MiB, --bot-memory)"
    if _FILES.search(said):
        return f"it reached its limit of open files ({limits.open_files}, --bot-files)"
    if _PROCESSES.search(said):
        return f"it reached its limit of processes and threads ({limits.processes}, --bot-processes)"
    return ""


def explain_exit(status: int, last_lines: Iterable[str], limits: BotLimits | None) -> str:
    """Why a bot process exited, in a few words, when its status or last lines say ("" if they do not).

    ``limits`` are its sandbox's (None: it ran without one, so it had no limits to reach).
    """
    reached = "" if limits is None else limit_reached(last_lines, limits)
    if reached or status >= 0:
        return reached
    try:
        return f"killed by {signal.Signals(-status).name}"
    except ValueError:
        return f"killed by signal {-status}"
