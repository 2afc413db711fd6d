"""Where bots can be contained, and what a bot's cgroup is told, on cgroup file systems made of plain folders.

The kernel's files are stood in for by files in a temporary folder: which hierarchy a
host uses (v2 where it is delegated, the v1 controllers where they are writable, or
neither and why), the limits written for a bot's group on each, how its command enters
it, its CPU and the limits it reached as the kernel counts them, and what a killed host
left behind. tests/test_containment.py has real bots in real groups.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from tournaments.plan.isolation import BotLimits
from tournaments.play import containment
from tournaments.play.containment import BotCgroup, Cgroups

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

HYBRID_MOUNTS = """\
30 25 0:26 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs rw,mode=755
31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw
32 30 0:28 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory
33 30 0:29 / /sys/fs/cgroup/pids rw,nosuid - cgroup cgroup rw,pids
34 30 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct
"""
HYBRID_GROUPS = """\
4:memory:/process_api/abc
3:pids:/
2:cpu,cpuacct:/
0::/
"""


def test_the_mounts_and_this_processs_groups_are_read() -> None:
    mounts = containment.cgroup_mounts(HYBRID_MOUNTS)
    assert [(point, kind) for point, kind, _ in mounts] == [
        ("/sys/fs/cgroup/unified", "cgroup2"),
        ("/sys/fs/cgroup/memory", "cgroup"),
        ("/sys/fs/cgroup/pids", "cgroup"),
        ("/sys/fs/cgroup/cpu,cpuacct", "cgroup"),
    ]
    assert {"cpu", "cpuacct"} <= mounts[3][2]
    assert containment.own_groups(HYBRID_GROUPS) == {
        "memory": "/process_api/abc",
        "pids": "/",
        "cpu": "/",
        "cpuacct": "/",
        "": "/",
    }


def _v1_tree(root: Path) -> tuple[list[tuple[str, str, set[str]]], dict[str, str]]:
    """A hybrid hierarchy under ``root``: cpu and cpuacct mounted together, memory nested."""
    (root / "memory" / "process_api" / "abc").mkdir(parents=True)
    (root / "pids").mkdir()
    (root / "cpu,cpuacct").mkdir()
    (root / "unified").mkdir()
    (root / "unified" / "cgroup.controllers").write_text("\n")
    mounts = [
        (str(root / "unified"), "cgroup2", {"rw"}),
        (str(root / "memory"), "cgroup", {"rw", "memory"}),
        (str(root / "pids"), "cgroup", {"rw", "pids"}),
        (str(root / "cpu,cpuacct"), "cgroup", {"rw", "cpu", "cpuacct"}),
    ]
    return mounts, containment.own_groups(HYBRID_GROUPS)


def test_without_delegated_v2_controllers_the_writable_v1_ones_are_used(tmp_path: Path) -> None:
    mounts, own = _v1_tree(tmp_path)
    why = containment.delegated_v2(mounts, own)
    assert why == f"cgroup v2 delegates no memory, pids, cpu controller here ({tmp_path / 'unified'})"
    found = containment.writable_v1(mounts, own)
    assert isinstance(found, containment.Hierarchy)
    assert found.name == "cgroup v1"
    assert found.bases["memory"] == tmp_path / "memory" / "process_api" / "abc"
    assert found.bases["cpu"] == found.bases["cpuacct"] == tmp_path / "cpu,cpuacct"
    assert len(found.folders) == 3


def test_a_missing_v1_controller_is_why_there_is_none(tmp_path: Path) -> None:
    mounts, own = _v1_tree(tmp_path)
    without_pids = [mount for mount in mounts if "pids" not in mount[2]]
    assert containment.writable_v1(without_pids, own) == "no cgroup v1 pids controller here"


def test_a_delegated_v2_group_is_used(tmp_path: Path) -> None:
    scope = tmp_path / "user.slice" / "nap.scope"
    scope.mkdir(parents=True)
    (scope / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    found = containment.delegated_v2([(str(tmp_path), "cgroup2", {"rw"})], {"": "/user.slice/nap.scope"})
    assert isinstance(found, containment.Hierarchy)
    assert found.name == "cgroup v2"
    assert found.folders == (scope,)


def test_a_v2_bots_group_gets_its_limits_and_its_cpu_and_counts_are_read(tmp_path: Path) -> None:
    hierarchy = containment.Hierarchy(2, dict.fromkeys(containment.V2_CONTROLLERS, tmp_path))
    (tmp_path / "cgroup.procs").write_text("")
    host = Cgroups(hierarchy)
    limits = BotLimits(memory_mb=256, processes=32)
    group = host.bot("peel#0", limits)
    folder = group.folders["memory"]
    assert folder.parent == tmp_path / host.name
    assert (tmp_path / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    assert (folder / "memory.max").read_text() == str(256 << 20)
    assert not (folder / "memory.swap.max").exists()  # (written where the kernel offers it)
    assert (folder / "pids.max").read_text() == "32"
    assert (folder / "cpu.weight").read_text() == "100"
    assert group.command(["bwrap", "--", "bot"]) == [
        "/bin/sh",
        "-c",
        containment.ENTER,
        "nap-cgroup",
        str(folder / "cgroup.procs"),
        "--",
        "bwrap",
        "--",
        "bot",
    ]
    (folder / "cpu.stat").write_text("usage_usec 1500250\nuser_usec 1000000\n")
    assert group.cpu_ms() == 1500.25
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    (folder / "pids.events").write_text("max 0\n")
    now = group.counts()
    assert now == (4, 0)
    assert BotCgroup.reached(limits, now, (0, 0)).startswith("it reached its memory limit (256 MiB")
    assert BotCgroup.reached(limits, now, now) == ""


def test_a_v1_bots_group_gets_its_limits_and_its_cpu_and_counts_are_read(tmp_path: Path) -> None:
    mounts, own = _v1_tree(tmp_path)
    hierarchy = containment.writable_v1(mounts, own)
    assert isinstance(hierarchy, containment.Hierarchy)
    group = Cgroups(hierarchy).bot("random#2", BotLimits(memory_mb=512, processes=64))
    memory = group.folders["memory"]
    (memory / "memory.memsw.limit_in_bytes").write_text("")  # (where the kernel offers swap's limit)
    group.make(BotLimits(memory_mb=512, processes=64))
    assert (memory / "memory.limit_in_bytes").read_text() == str(512 << 20)
    assert (memory / "memory.memsw.limit_in_bytes").read_text() == str(512 << 20)
    assert (group.folders["pids"] / "pids.max").read_text() == "64"
    assert (group.folders["cpu"] / "cpu.shares").read_text() == "1024"
    assert group.folders["cpu"] == group.folders["cpuacct"]
    assert len(group.command(["bot"])) == 4 + 3 + 2  # sh -c script name, three groups, --, the bot
    (group.folders["cpuacct"] / "cpuacct.usage").write_text("2500000000\n")
    assert group.cpu_ms() == 2500.0
    (group.folders["pids"] / "pids.events").write_text("max 7\n")
    (memory / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n")
    (memory / "memory.failcnt").write_text("0\n")
    assert group.counts() == (0, 7)
    assert BotCgroup.reached(BotLimits(processes=64), group.counts(), (0, 0)) == (
        "it reached its limit of processes and threads (64 for all its processes together, --bot-processes)"
    )


def test_a_killed_hosts_folder_is_removed_by_the_next_host(tmp_path: Path) -> None:
    base = tmp_path / "pids"
    dead = base / "nap-4194303-0a0b0c"  # a process id above Linux's largest
    (dead / "peel_0-1").mkdir(parents=True)
    alive = base / f"nap-{os.getpid()}-0a0b0c"
    alive.mkdir()
    other = base / "not-ours"
    other.mkdir()
    containment.sweep_dead_hosts(base)
    assert sorted(folder.name for folder in base.iterdir()) == sorted((alive.name, other.name))


def test_where_no_cgroup_can_be_made_a_host_has_none(monkeypatch: pytest.MonkeyPatch) -> None:
    reason = "no cgroup v2 here, and no cgroup v1 memory controller here"
    monkeypatch.setattr(containment, "_here", lambda: reason)
    assert containment.containment_problem() == reason
    assert containment.host_cgroups() is None
