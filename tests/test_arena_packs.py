"""Uploaded bot packs: refused in one line unless they are one, and unpacked only in a process of their own.

The bad packs are built here with tarfile and zlib: links, devices, paths leading out,
too many files, gzip bombs (1 GiB of zeros in about 1 MB). Each gives its one line from
the unpacker run in this process (quick), as a plain process and inside bubblewrap (slow;
the sandboxed ones skip where bubblewrap cannot run). A good pack unpacks to the content
hash of the folder it was made from.
"""

from __future__ import annotations

import functools
import gzip
import io
import json
import os
import resource
import stat
import struct
import subprocess
import sys
import tarfile
import textwrap
import zlib
from typing import TYPE_CHECKING

import pytest

from tournaments.arena import packs, unpacker
from tournaments.arena.packs import (
    PackError,
    PackLimits,
    PackTooLargeError,
    UnpackReport,
    check_upload,
    unpack,
)
from tournaments.errors import ArenaError
from tournaments.plan.manifest import content_hash, read_manifest, scaffold
from tournaments.plan.versions import pack
from tournaments.play import sandbox as sandboxing
from tournaments.play.sandbox import Sandbox, SandboxSpec, sandbox_problem

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

needs_bwrap = pytest.mark.skipif(
    sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}"
)
LIMITS = PackLimits()
MIB = 1 << 20
MANIFEST_TEXT = b'name = "mybot"\nversion = "0.1"\ncommand = ["{python}", "bot.py"]\n'
ONLY = "a pack holds regular files and folders only"
TOO_BIG = "pack refused: it unpacks to more than 64 MiB (the arena's limit)"


# ---------------------------------------------------------------------------- building packs


Member = tuple[tarfile.TarInfo, bytes]


def _file(name: str, data: bytes = b"", *, mode: int = 0o644) -> Member:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), mode
    return info, data


def _entry(name: str, kind: bytes, *, link: str = "", mode: int = 0o644) -> Member:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, mode
    return info, b""


MANIFEST_MEMBER = _file("nap-bot.toml", MANIFEST_TEXT)


def _tar(*members: Member, form: int = tarfile.PAX_FORMAT) -> bytes:
    """An uncompressed tar of ``members``, with its end marker."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=form, encoding="utf-8", errors="surrogateescape") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return out.getvalue()


def _gz(raw: bytes) -> bytes:
    return gzip.compress(raw, mtime=0)


def _pack(*members: Member) -> bytes:
    """A gzip tar holding a manifest, then ``members``."""
    return _gz(_tar(MANIFEST_MEMBER, *members))


@functools.cache
def _zeros() -> bytes:
    """One MiB of zeros, deflated and flushed in full: every copy of it is the same bytes."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(bytes(MIB)) + compressor.flush(zlib.Z_FULL_FLUSH)


def _gzip_with_zeros(*parts: bytes | int) -> bytes:
    """One gzip member holding ``parts`` in turn: bytes as given, an int as that many MiB of zeros.

    The zeros are deflated once: each MiB after a full flush is the same bytes, so 1 GiB
    of zeros costs a thousand copies of one kilobyte (and its CRC, a thousand CRC-32 steps).
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    zeros = _zeros()
    body, crc, size = [], 0, 0
    for part in parts:
        if isinstance(part, int):
            body.append(zeros * part)
            for _ in range(part):
                crc = zlib.crc32(bytes(MIB), crc)
            size += part * MIB
        else:
            body.append(compressor.compress(part) + compressor.flush(zlib.Z_FULL_FLUSH))
            crc = zlib.crc32(part, crc)
            size += len(part)
    body.append(compressor.flush(zlib.Z_FINISH))
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    return header + b"".join(body) + struct.pack("<II", crc, size & 0xFFFFFFFF)


def _header(info: tarfile.TarInfo) -> bytes:
    return info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")


def _manifest_tar() -> bytes:
    """The manifest member's header and data, without an end marker."""
    info, data = MANIFEST_MEMBER
    return _header(info) + data + bytes(-len(data) % tarfile.BLOCKSIZE)


@functools.cache
def _bomb_member() -> bytes:
    """A member whose header says, truthfully, 1 GiB of zeros."""
    zeros, _ = _file("zeros.bin")
    zeros.size = 1024 * MIB
    return _gzip_with_zeros(_manifest_tar() + _header(zeros), 1024, bytes(2 * tarfile.BLOCKSIZE))


@functools.cache
def _bomb_after_end() -> bytes:
    """A good pack, then 1 GiB of zeros after its tar's end."""
    return _gzip_with_zeros(_tar(MANIFEST_MEMBER, _file("bot.py", b"pass\n")), 1024)


@functools.cache
def _bomb_pax() -> bytes:
    """A pax header of 1 GiB (of zeros) that tarfile would read whole."""
    pax = tarfile.TarInfo("././@PaxHeader")
    pax.type, pax.size = tarfile.XHDTYPE, 1024 * MIB
    return _gzip_with_zeros(_manifest_tar() + pax.tobuf(tarfile.USTAR_FORMAT), 1024)


def _bomb_of_files(count: int) -> bytes:
    """``count`` members of 1 MiB of zeros each."""
    parts: list[bytes | int] = [_manifest_tar()]
    for number in range(count):
        info, _ = _file(f"zeros-{number:04}.bin")
        info.size = MIB
        parts += [_header(info), 1]
    parts.append(bytes(2 * tarfile.BLOCKSIZE))
    return _gzip_with_zeros(*parts)


def _cut(raw: bytes, end: int) -> bytes:
    return _gz(raw[:end])


def _corrupt_second_header() -> bytes:
    raw = bytearray(_tar(MANIFEST_MEMBER, _file("bot.py", b"pass\n")))
    raw[1024:1536] = b"\x01" * 512
    return _gz(bytes(raw))


@functools.cache
def _many_files(count: int) -> bytes:
    return _pack(*(_file(f"f{number:04}") for number in range(count)))


def _named_in_pax(name: str) -> Member:
    """An empty file whose name is given in a pax header (which may hold any byte)."""
    info, data = _file("placeholder")
    info.pax_headers = {"path": name}
    return info, data


def _shown_long(name: str) -> str:
    return repr(name[:80] + "...")


BAD_PACKS: list[tuple[str, Callable[[], bytes], str]] = [
    ("not-gzip", lambda: b"PK\x03\x04" + bytes(100), unpacker.NOT_GZIP),
    (
        "not-tar",
        lambda: _gz(b"hello, world\n" * 100),
        "not a bot pack: it is gzip-compressed but not a tar archive (make it with nap bot submit --arena)",
    ),
    ("empty", lambda: _gz(b""), "not a bot pack: it is empty (make it with nap bot submit --arena)"),
    (
        "truncated-gzip",
        lambda: _pack(_file("bot.py", os.urandom(20_000)))[:-5000],
        "not a bot pack: it is truncated (it stops before the end of its archive): upload it again",
    ),
    (
        "truncated-tar",
        lambda: _cut(_tar(MANIFEST_MEMBER, _file("bot.py", b"x" * 5000)), 3 * 512),
        "not a bot pack: it is truncated (it stops before the end of its archive): upload it again",
    ),
    (
        "no-end-marker",
        lambda: _cut(_tar(MANIFEST_MEMBER), 1024),
        "not a bot pack: it is truncated (it stops before the end of its archive): upload it again",
    ),
    (
        "corrupt-header",
        _corrupt_second_header,
        "not a bot pack: its tar data is corrupt at byte 1024 (invalid header)",
    ),
    (
        "data-after-end",
        lambda: _gz(_tar(MANIFEST_MEMBER) + b"more"),
        "not a bot pack: data follows the end of its tar archive",
    ),
    (
        "symlink",
        lambda: _pack(_entry("passwd", tarfile.SYMTYPE, link="/etc/passwd")),
        f"pack refused: 'passwd' is a symbolic link (to '/etc/passwd'); {ONLY}",
    ),
    (
        "hard-link",
        lambda: _pack(_entry("copy", tarfile.LNKTYPE, link="/etc/passwd")),
        f"pack refused: 'copy' is a hard link (to '/etc/passwd'); {ONLY}",
    ),
    (
        "device",
        lambda: _pack(_entry("null", tarfile.CHRTYPE)),
        f"pack refused: 'null' is a device; {ONLY}",
    ),
    ("fifo", lambda: _pack(_entry("pipe", tarfile.FIFOTYPE)), f"pack refused: 'pipe' is a fifo; {ONLY}"),
    (
        "sparse",
        lambda: _gz(_tar(MANIFEST_MEMBER, _entry("sparse", tarfile.GNUTYPE_SPARSE), form=tarfile.GNU_FORMAT)),
        f"pack refused: 'sparse' is a sparse file; {ONLY}",
    ),
    (
        "other-type",
        lambda: _pack(_entry("volume", b"V")),
        f"pack refused: 'volume' is not a regular file or folder (tar type b'V'); {ONLY}",
    ),
    (
        "absolute",
        lambda: _pack(_file("/etc/cron.d/evil", b"* * * * * root sh\n")),
        "pack refused: '/etc/cron.d/evil' is an absolute path; a pack's paths are in the bot's folder",
    ),
    (
        "dot-dot",
        lambda: _pack(_file("../escape", b"out\n")),
        "pack refused: '../escape' leads out of the bot's folder (..)",
    ),
    (
        "dot-dot-inside",
        lambda: _pack(_file("lib/../../escape", b"out\n")),
        "pack refused: 'lib/../../escape' leads out of the bot's folder (..)",
    ),
    (
        "not-utf8",
        lambda: _gz(_tar(MANIFEST_MEMBER, _file("\udcff.py"), form=tarfile.USTAR_FORMAT)),
        "pack refused: the name '\\udcff.py' is not UTF-8",
    ),
    (
        "nul-in-name",
        lambda: _pack(_named_in_pax("a\0b")),
        "pack refused: the name 'a\\x00b' holds a NUL byte",
    ),
    (
        "path-too-long",
        lambda: _pack(_file("a" * 300)),
        f"pack refused: the path {_shown_long('a' * 300)} is longer than 256 bytes",
    ),
    (
        "too-deep",
        lambda: _pack(_file("d/" * 32 + "f.py")),
        f"pack refused: the path {'d/' * 32 + 'f.py'!r} is deeper than 32 levels",
    ),
    (
        "too-many-files",
        lambda: _many_files(6000),
        "pack refused: it holds more than 5,000 files and folders (the arena's limit)",
    ),
    ("bomb-member", _bomb_member, TOO_BIG),
    ("bomb-after-end", _bomb_after_end, TOO_BIG),
    ("bomb-pax-header", _bomb_pax, TOO_BIG),
    (
        "twice",
        lambda: _pack(MANIFEST_MEMBER),
        "pack refused: 'nap-bot.toml' is in the pack twice",
    ),
    (
        "inside-a-file",
        lambda: _pack(_file("lib", b"x"), _file("lib/x.py")),
        "pack refused: 'lib/x.py' is inside 'lib', which is a file",
    ),
    (
        "file-then-folder",
        lambda: _pack(_file("lib", b"x"), _entry("lib/", tarfile.DIRTYPE)),
        "pack refused: 'lib' is both a file and a folder",
    ),
    (
        "folder-then-file",
        lambda: _pack(_entry("lib/", tarfile.DIRTYPE), _file("lib", b"x")),
        "pack refused: 'lib' is both a file and a folder",
    ),
    (
        "no-manifest",
        lambda: _gz(_tar(_file("bot.py", b"pass\n"))),
        "not a bot pack: there is no nap-bot.toml at its top",
    ),
    (
        "manifest-in-a-folder",
        lambda: _gz(_tar(_file("mybot/nap-bot.toml", MANIFEST_TEXT))),
        (
            "not a bot pack: there is no nap-bot.toml at its top "
            "(it holds mybot/nap-bot.toml: pack the folder's content, not the folder)"
        ),
    ),
    (
        "manifest-too-large",
        lambda: _gz(_tar(_file("nap-bot.toml", b"#" * (65 << 10)))),
        "pack refused: its nap-bot.toml is larger than 64 KiB",
    ),
]
BAD = [pytest.param(build, line, id=name) for name, build, line in BAD_PACKS]
COSTLY = {"too-many-files", "bomb-member", "bomb-after-end", "bomb-pax-header"}
"""Bad packs that take a second or so to make and refuse: slow even in this process."""
BAD_IN_PROCESS = [
    pytest.param(build, line, id=name, marks=[pytest.mark.slow] if name in COSTLY else [])
    for name, build, line in BAD_PACKS
]


@pytest.fixture
def into(tmp_path: Path) -> Path:
    """The folder a pack is unpacked into, one level below the test's own (where nothing may appear)."""
    return tmp_path / "into"


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    """One sandbox for the module (making one compiles nap's packages once)."""
    return Sandbox(SandboxSpec())


def _bot(parent: Path) -> Path:
    """A bot folder with what a pack must carry exactly: subfolders, a long and a non-ASCII path, modes."""
    folder = scaffold(parent, "mybot")
    (folder / "lib").mkdir()
    (folder / "lib" / "helpers.py").write_text("SEATS = 4\n", encoding="utf-8")
    (folder / "data").mkdir()
    (folder / "data" / "règles-é.txt").write_text("nap\n", encoding="utf-8")
    (folder / "data" / "weights.bin").write_bytes(bytes(range(256)) * 64)
    (folder / "data" / "empty").write_bytes(b"")
    long = folder / ("x" * 60) / ("y" * 60)
    long.mkdir(parents=True)
    (long / "deep.py").write_text("", encoding="utf-8")
    (folder / "node_modules" / "dep").mkdir(parents=True)  # packed (a build product), not hashed
    (folder / "node_modules" / "dep" / "index.js").write_text("module.exports = 1;\n", encoding="utf-8")
    (folder / "__pycache__").mkdir()  # neither packed nor hashed
    (folder / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"\0")
    return folder


def _modes(folder: Path) -> dict[str, int]:
    return {
        path.relative_to(folder).as_posix(): stat.S_IMODE(path.lstat().st_mode) for path in folder.rglob("*")
    }


def _left_empty(into: Path) -> bool:
    """Whether a refused pack left nothing: ``into`` empty or not made, nothing beside it."""
    return [path.name for path in into.parent.iterdir()] in ([], ["into"]) and not (
        into.exists() and any(into.iterdir())
    )


def _held(folder: Path) -> int:
    """The bytes of the files under ``folder``."""
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


# ---------------------------------------------------------------------------- the server's own checks


def test_an_upload_over_the_size_limit_is_refused_before_anything_is_read() -> None:
    limits = PackLimits(upload_bytes=1 << 20)
    with pytest.raises(PackTooLargeError) as refused:
        check_upload(b"\x1f\x8b" + bytes(3 << 20), limits=limits)
    assert str(refused.value) == "pack refused: it is 3.0 MiB, over the arena's limit of 1 MiB"


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (b"", "not a bot pack: the upload is empty (make it with nap bot submit --arena)"),
        (b"PK\x03\x04", "not a bot pack: it is not gzip-compressed (make it with nap bot submit --arena)"),
        (
            b"name = 'mybot'",
            "not a bot pack: it is not gzip-compressed (make it with nap bot submit --arena)",
        ),
    ],
)
def test_an_upload_that_is_not_gzip_is_refused_in_one_line(data: bytes, line: str) -> None:
    with pytest.raises(PackError) as refused:
        check_upload(data, limits=LIMITS)
    assert not isinstance(refused.value, PackTooLargeError)
    assert isinstance(refused.value, ArenaError)
    assert str(refused.value) == line


def test_a_pack_passes_the_servers_checks_up_to_the_size_limit_itself(tmp_path: Path) -> None:
    data = pack(_bot(tmp_path))
    check_upload(data, limits=PackLimits(upload_bytes=len(data)))
    with pytest.raises(PackTooLargeError, match="over the arena's limit of"):
        check_upload(data, limits=PackLimits(upload_bytes=len(data) - 1))


def test_pack_limits_have_documented_defaults_and_read_back() -> None:
    assert LIMITS.to_json() == {
        "upload_bytes": 16 << 20,
        "unpacked_bytes": 64 << 20,
        "files": 5000,
        "path_length": 256,
        "depth": 32,
    }
    custom = PackLimits(upload_bytes=1 << 20, files=10)
    assert PackLimits.from_json(custom.to_json()) == custom
    assert PackLimits.from_json({"files": "10"}) == PackLimits(files=10)
    assert PackLimits.from_json(None) == LIMITS
    assert sorted(LIMITS.to_json()) == sorted(unpacker.LIMIT_KEYS)
    assert unpacker.read_limits(json.dumps(custom.to_json())) == custom.to_json()


@pytest.mark.parametrize(
    ("data", "line"),
    [
        ({"files": 0}, "pack limit files must be a positive integer, got 0"),
        ({"depth": -1}, "pack limit depth must be a positive integer, got -1"),
        (
            {"bytes": 3},
            "unknown pack limit 'bytes' (known: depth, files, path_length, unpacked_bytes, upload_bytes)",
        ),
    ],
)
def test_bad_pack_limits_are_refused_in_one_line(data: dict[str, int], line: str) -> None:
    with pytest.raises(ArenaError) as refused:
        PackLimits.from_json(data)
    assert str(refused.value) == line


@pytest.mark.parametrize(
    ("size", "text"),
    [(1, "1 byte"), (900, "900 bytes"), (64 << 10, "64 KiB"), (16 << 20, "16 MiB"), (21_300_000, "20.3 MiB")],
)
def test_sizes_read_as_people_write_them(size: int, text: str) -> None:
    assert unpacker.size_text(size) == text


# ---------------------------------------------------------------------------- the unpacker, in this process


@pytest.mark.parametrize(("build", "line"), BAD_IN_PROCESS)
def test_the_unpacker_refuses_a_bad_pack_in_one_line(
    build: Callable[[], bytes], line: str, into: Path
) -> None:
    into.mkdir()
    with pytest.raises(unpacker.Refused) as refused:
        unpacker.unpack_into(into, build(), LIMITS.to_json())
    assert str(refused.value) == line
    assert not (into.parent / "escape").exists()


def test_a_gzip_bomb_is_stopped_at_the_limit_without_writing_past_it(into: Path) -> None:
    into.mkdir()
    limits = PackLimits(unpacked_bytes=8 * MIB)
    bomb = _bomb_of_files(64)
    assert len(bomb) < 100_000  # 64 MiB of zeros in 64 files
    with pytest.raises(
        unpacker.Refused, match=r"^pack refused: it unpacks to more than 8 MiB \(the arena's limit\)$"
    ):
        unpacker.unpack_into(into, bomb, limits.to_json())
    assert 7 * MIB < _held(into) <= 8 * MIB


@pytest.mark.slow
def test_the_bombs_are_what_they_claim(into: Path) -> None:
    """The zeros helper makes valid gzip (a pack of files of zeros within the limit unpacks whole); a bomb
    is about 1 MB that says it inflates to more than 1 GiB."""
    into.mkdir()
    assert unpacker.unpack_into(into, _bomb_of_files(3), LIMITS.to_json()) == (
        4,
        len(MANIFEST_TEXT) + 3 * MIB,
    )
    for bomb in (_bomb_member(), _bomb_after_end(), _bomb_pax()):
        assert len(bomb) < 1.1 * MIB
        assert struct.unpack("<I", bomb[-4:])[0] > len(_manifest_tar())  # 1 GiB and more, modulo 2**32


def test_modes_are_0644_or_0755_and_never_setuid_whatever_the_umask(into: Path) -> None:
    into.mkdir()
    data = _pack(
        _file("setuid", b"#!/bin/sh\n", mode=0o4755),
        _file("world-writable", b"x", mode=0o666),
        _entry("tools", tarfile.DIRTYPE, mode=0o7777),
        _file("tools/run", b"#!/bin/sh\n", mode=0o700),
    )
    umask = os.umask(0o077)
    try:
        assert unpacker.unpack_into(into, data, LIMITS.to_json()) == (4, len(MANIFEST_TEXT) + 21)
    finally:
        os.umask(umask)
    assert _modes(into) == {
        "nap-bot.toml": 0o644,
        "setuid": 0o755,
        "world-writable": 0o644,
        "tools": 0o755,
        "tools/run": 0o755,
    }


def test_a_tar_made_by_hand_with_dot_slash_paths_and_folders_unpacks(into: Path) -> None:
    into.mkdir()
    data = _gz(
        _tar(
            _entry("./", tarfile.DIRTYPE),
            _entry("./lib/", tarfile.DIRTYPE),
            _file("./lib/helpers.py", b"X = 1\n"),
            _file("./nap-bot.toml", MANIFEST_TEXT),
        )
    )
    assert unpacker.unpack_into(into, data, LIMITS.to_json()) == (2, 6 + len(MANIFEST_TEXT))
    assert (into / "lib" / "helpers.py").read_bytes() == b"X = 1\n"


def test_every_part_of_a_path_counts_against_the_file_limit(into: Path) -> None:
    into.mkdir()
    limits = PackLimits(files=4).to_json()
    assert unpacker.unpack_into(into, _pack(_file("a/b/c.py")), limits) == (2, len(MANIFEST_TEXT))
    other = into.parent / "other"
    other.mkdir()
    with pytest.raises(unpacker.Refused, match="more than 4 files and folders"):
        unpacker.unpack_into(other, _pack(_file("a/b/c/d/e/f.py")), limits)
    assert len(list(other.rglob("*"))) == 4  # the manifest, a, a/b, a/b/c: not one folder more


# ---------------------------------------------------------------------------- the sandbox's command line


@pytest.fixture
def no_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """Command lines are built as if bubblewrap worked here (they are not run)."""
    monkeypatch.setattr(sandboxing, "sandbox_problem", lambda: None)


def _network(argv: list[str]) -> bool:
    sandboxed = argv[: argv.index("--")]
    return "--share-net" in sandboxed or not {"--unshare-all", "--unshare-net"} & set(sandboxed)


@pytest.mark.usefixtures("no_probe")
def test_the_unpackers_sandbox_has_no_network_its_folder_writable_and_its_script_read_only(
    tmp_path: Path,
) -> None:
    command = [sys.executable, "-I", "-S", "/run/nap/unpacker.py", "{}"]
    plain = Sandbox(SandboxSpec())
    argv, _ = plain.build(
        command, name="upload", folder=tmp_path, network=False, tools={"/run/nap/unpacker.py": packs.UNPACKER}
    )
    assert not _network(argv)
    assert _network(plain.build(command, name="upload", folder=tmp_path)[0])  # a build keeps its network
    binds = [tuple(argv[i : i + 3]) for i, arg in enumerate(argv[: argv.index("--")]) if arg.endswith("bind")]
    assert ("--ro-bind", str(packs.UNPACKER), "/run/nap/unpacker.py") in binds
    assert ("--bind", str(tmp_path.resolve()), str(tmp_path.resolve())) in binds
    assert [bind for bind in binds if bind[0] == "--bind"] == [
        ("--bind", str(tmp_path.resolve()), str(tmp_path.resolve()))
    ]
    assert argv[-len(command) :] == command


# ---------------------------------------------------------------------------- in a process of its own


@pytest.mark.slow
@pytest.mark.parametrize(("build", "line"), BAD)
def test_a_bad_pack_is_refused_by_the_plain_unpacker(
    build: Callable[[], bytes], line: str, into: Path
) -> None:
    with pytest.raises(PackError) as refused:
        unpack(build(), into=into, limits=LIMITS, sandbox=None)
    assert str(refused.value) == line
    assert _left_empty(into)


@pytest.mark.slow
@needs_bwrap
@pytest.mark.parametrize(("build", "line"), BAD)
def test_a_bad_pack_is_refused_in_the_sandbox(
    build: Callable[[], bytes], line: str, into: Path, sandbox: Sandbox
) -> None:
    with pytest.raises(PackError) as refused:
        unpack(build(), into=into, limits=LIMITS, sandbox=sandbox)
    assert str(refused.value) == line
    assert _left_empty(into)


@pytest.mark.slow
@pytest.mark.parametrize("where", ["plain", pytest.param("sandbox", marks=needs_bwrap)])
def test_a_pack_unpacks_to_the_content_hash_of_its_folder(
    where: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    chosen = request.getfixturevalue("sandbox") if where == "sandbox" else None
    folder = _bot(tmp_path / "src")
    data = pack(folder)
    into = tmp_path / "uploads" / "17"
    report = unpack(data, into=into, limits=LIMITS, sandbox=chosen)
    assert content_hash(into) == content_hash(folder)
    assert read_manifest(into).name == "mybot"
    packed = [path for path in folder.rglob("*") if path.is_file() and "__pycache__" not in path.parts]
    assert report == UnpackReport(files=len(packed), bytes=sum(path.stat().st_size for path in packed))
    modes = _modes(into)
    assert modes.pop("bot.py") == 0o755
    assert {mode for name, mode in modes.items() if (into / name).is_file()} == {0o644}
    assert {mode for name, mode in modes.items() if (into / name).is_dir()} == {0o755}
    assert not (into / "__pycache__").exists()


@pytest.mark.slow
def test_unpacking_into_a_folder_that_is_not_empty_is_the_callers_mistake(into: Path) -> None:
    into.mkdir()
    (into / "left").write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match="is not empty"):
        unpack(_pack(), into=into, limits=LIMITS, sandbox=None)
    assert [path.name for path in into.iterdir()] == ["left"]


def _fake_unpacker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str) -> None:
    """Run ``code`` in place of the unpacker: what a subverted or hung unpacker would do."""
    script = tmp_path / "fake_unpacker.py"
    script.write_text(textwrap.dedent(code), encoding="utf-8")
    monkeypatch.setattr(packs, "UNPACKER", script)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("code", "line"),
    [
        pytest.param(
            "import time\ntime.sleep(600)\n", "pack refused: unpacking it took longer than 1 s", id="hung"
        ),
        pytest.param(
            "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
            "the arena could not unpack it (killed by SIGKILL); tell the organiser",
            id="killed",
        ),
        pytest.param(
            "import os, signal\nos.kill(os.getpid(), signal.SIGXCPU)\n",
            "pack refused: unpacking it took more than 60 s of CPU",
            id="out-of-cpu",
        ),
        pytest.param(
            "import sys\nsys.exit(3)\n",
            "the arena could not unpack it (status 3); tell the organiser",
            id="silent-exit",
        ),
        pytest.param(
            'raise RuntimeError("a bug")\n',
            "the arena could not unpack it (RuntimeError: a bug); tell the organiser",
            id="failed",
        ),
        pytest.param(
            """
            import os
            os.symlink("/etc/passwd", "nap-bot.toml")
            print('{"files": 1, "bytes": 100}')
            """,
            (
                "the arena could not unpack it (its unpacker left 'nap-bot.toml', mode 120777, "
                "which it never makes); tell the organiser"
            ),
            id="left-a-link",
        ),
        pytest.param(
            """
            open("nap-bot.toml", "w").write("x")
            print('{"files": 2, "bytes": 1}')
            """,
            "the arena could not unpack it (its unpacker's count is not the folder's); tell the organiser",
            id="miscounted",
        ),
    ],
)
def test_an_unpacker_that_hangs_dies_or_misbehaves_is_caught(
    code: str, line: str, into: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_unpacker(tmp_path, monkeypatch, code)
    with pytest.raises(PackError) as refused:
        unpack(_pack(), into=into, limits=LIMITS, sandbox=None, timeout_s=1)
    assert str(refused.value) == line
    assert list(into.iterdir()) == []


@pytest.mark.slow
@needs_bwrap
def test_the_sandboxed_unpacker_has_no_network_and_writes_only_its_folder(
    into: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: Sandbox
) -> None:
    _fake_unpacker(
        tmp_path,
        monkeypatch,
        f"""
        import os, socket, sys
        for path in ("../outside", {str(tmp_path / "outside")!r}, "/run/nap/unpacker.py"):
            try:
                open(path, "w").write("x")
            except OSError:
                pass
        open("inside", "w").write("x")
        sys.stderr.write(",".join(name for _, name in socket.if_nameindex()) + "\\n")
        sys.exit({unpacker.REFUSED})
        """,
    )
    with pytest.raises(PackError) as refused:
        unpack(_pack(), into=into, limits=LIMITS, sandbox=sandbox)
    assert str(refused.value) == "lo"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["fake_unpacker.py", "into"]
    assert list(into.iterdir()) == []  # emptied after the refusal


@pytest.mark.slow
def test_the_unpacker_caps_its_own_file_size_cpu_and_memory() -> None:
    limits = PackLimits(unpacked_bytes=8 * MIB).to_json()
    probe = textwrap.dedent(
        f"""
        import resource, sys
        sys.path.insert(0, {str(packs.UNPACKER.parent)!r})
        import unpacker
        unpacker.limit_self({limits!r})
        print([resource.getrlimit(kind)[0] for kind in (
            resource.RLIMIT_FSIZE, resource.RLIMIT_CPU, resource.RLIMIT_CORE, resource.RLIMIT_DATA)])
        """
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", probe], capture_output=True, text=True, check=True
    )
    size, cpu, core, data = (int(value) for value in done.stdout.strip("[]\n").split(", "))
    assert (size, cpu, core) == (8 * MIB, unpacker.CPU_S, 0)
    assert data <= (1 << 30)
    assert resource.getrlimit(resource.RLIMIT_FSIZE)[0] != size  # this process is not limited
