"""Session log files: where they go, atomic replacement, and clear errors on bad files."""

from __future__ import annotations

import gzip
import json
import os
from typing import TYPE_CHECKING

import pytest

from tournaments import logfiles
from tournaments.logfiles import LOG_FORMAT, LOG_VERSION, LogError, read_log, write_log

if TYPE_CHECKING:
    from pathlib import Path

PAYLOAD: dict[str, object] = {
    "board_seed": 1003,
    "profile": "heather",
    "bots": [{"seat": 0, "bot": "alpha"}, {"seat": 1, "bot": "beta"}],
    "record": {"deals": [{"deck": ["QH", "10S"], "actions": ["bid:three"]}]},
    "decisions": [[{"action": "bid:three", "seat": 1, "latency_ms": 0.75}]],
    "faults": [],
    "result": {"chips": [3, -3], "win_share": [1.0, 0.0]},
}


def write(root: Path, payload: dict[str, object] | None = None) -> Path:
    return write_log(root, tournament=2, block=3, rotation=1, payload=payload or PAYLOAD)


def test_write_then_read_round_trips_with_header(tmp_path: Path) -> None:
    """A log is written under t<T>/b<B>-r<R>.json.gz, gzip'd, and reads back with its header."""
    path = write(tmp_path)
    assert path == tmp_path / "t2" / "b3-r1.json.gz"
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    document = read_log(path)
    assert document == {
        "format": LOG_FORMAT,
        "version": LOG_VERSION,
        "tournament": 2,
        "block": 3,
        "rotation": 1,
        **PAYLOAD,
    }
    assert list(document)[:5] == ["format", "version", "tournament", "block", "rotation"]


def test_same_content_gives_same_bytes(tmp_path: Path) -> None:
    """The file holds no timestamp: the same session writes the same bytes."""
    first = write(tmp_path).read_bytes()
    second = write(tmp_path).read_bytes()
    assert first == second


def test_overwrite_replaces_a_stale_log(tmp_path: Path) -> None:
    """A log left by a crash before the store commit is replaced when the session replays."""
    write(tmp_path, {**PAYLOAD, "result": {"stale": True}})
    path = write(tmp_path)
    assert read_log(path)["result"] == PAYLOAD["result"]
    assert sorted(p.name for p in path.parent.iterdir()) == ["b3-r1.json.gz"]


def test_failed_write_keeps_the_old_log_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash while writing leaves the previous log intact and no temporary file behind."""
    path = write(tmp_path)
    before = path.read_bytes()

    def crash(_fd: int) -> None:
        message = "power cut"
        raise OSError(5, message)

    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(LogError, match=r"cannot write .*b3-r1\.json\.gz: power cut"):
        write(tmp_path, {**PAYLOAD, "result": {"new": True}})
    assert path.read_bytes() == before
    assert [p.name for p in path.parent.iterdir()] == ["b3-r1.json.gz"]


def test_payload_that_is_not_json_is_refused_before_touching_disk(tmp_path: Path) -> None:
    """A payload json cannot encode is a LogError and writes no file."""
    with pytest.raises(LogError, match="payload is not JSON"):
        write(tmp_path, {**PAYLOAD, "record": {1, 2}})
    assert not (tmp_path / "t2" / "b3-r1.json.gz").exists()


def test_payload_disagreeing_with_the_key_is_refused(tmp_path: Path) -> None:
    """A payload naming another session than the file's key is a LogError."""
    with pytest.raises(LogError, match="block=4"):
        write(tmp_path, {**PAYLOAD, "block": 4})


def test_missing_log(tmp_path: Path) -> None:
    """Reading a log that does not exist says so and names the path."""
    with pytest.raises(LogError, match=r"^no session log at .*b3-r1\.json\.gz$"):
        read_log(tmp_path / "b3-r1.json.gz")


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"plain text, not gzip", "Not a gzipped file"),
        (gzip.compress(b"{not json"), "Expecting property name"),
        (gzip.compress(b"\xff\xfe\xfa"), "codec can't decode"),
        (gzip.compress(b"[1, 2]"), 'no "format"'),
        (gzip.compress(json.dumps({"format": "other"}).encode()), 'no "format"'),
        (
            gzip.compress(json.dumps({"format": LOG_FORMAT, "version": 99}).encode()),
            "version 99 is newer",
        ),
        (gzip.compress(json.dumps({"format": LOG_FORMAT}).encode()), "bad version None"),
    ],
)
def test_corrupt_log(tmp_path: Path, content: bytes, reason: str) -> None:
    """Each kind of bad file is one LogError line naming the file and the reason."""
    path = tmp_path / "b3-r1.json.gz"
    path.write_bytes(content)
    with pytest.raises(LogError, match=r"^b3-r1\.json\.gz is not a valid session log: ") as caught:
        read_log(path)
    assert reason in str(caught.value)
    assert "\n" not in str(caught.value)


def test_truncated_log(tmp_path: Path) -> None:
    """A log cut short (a copy interrupted, a full disk) is reported, not half-read."""
    path = write(tmp_path)
    path.write_bytes(path.read_bytes()[:-12])
    with pytest.raises(LogError, match="is not a valid session log"):
        read_log(path)


def test_remove_temporaries(tmp_path: Path) -> None:
    """Temporaries left by interrupted writes are removed; logs are not."""
    path = write(tmp_path)
    stale = path.parent / f".{path.name}.abc123.tmp"
    stale.write_bytes(b"half")
    assert logfiles.remove_temporaries(tmp_path) == 1
    assert [p.name for p in path.parent.iterdir()] == ["b3-r1.json.gz"]
