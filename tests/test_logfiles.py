"""Session logs: their bytes (encode_log, decode_log), their exported files, and clear errors on bad ones.

Logs live in the database (tests/test_store.py); here is what the store is given
(:func:`encode_log`), what reads it back (:func:`decode_log`), and the files ``nap log
export`` writes (:func:`write_encoded_log`, read by :func:`read_log`).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import stat
import time
from pathlib import Path

import pytest

from tournaments.errors import LogError
from tournaments.store import logs as logfiles
from tournaments.store.logs import (
    LOG_FORMAT,
    LOG_VERSION,
    decode_log,
    encode_log,
    read_log,
    write_encoded_log,
)

PAYLOAD: dict[str, object] = {
    "board_seed": 1003,
    "profile": "heather",
    "bots": [{"seat": 0, "bot": "alpha"}, {"seat": 1, "bot": "beta"}],
    "record": {"deals": [{"deck": ["QH", "10S"], "actions": ["bid:three"]}]},
    "decisions": [[{"action": "bid:three", "seat": 1, "latency_ms": 0.75}]],
    "faults": [],
    "result": {"chips": [3, -3], "win_share": [1.0, 0.0]},
}

DOCUMENT: dict[str, object] = {
    "format": LOG_FORMAT,
    "version": LOG_VERSION,
    "tournament": 2,
    "block": 3,
    "rotation": 1,
    **PAYLOAD,
}
"""What PAYLOAD reads back as, logged for tournament 2, block 3, rotation 1."""


def encode(payload: dict[str, object] | None = None) -> bytes:
    return encode_log(payload or PAYLOAD, tournament=2, block=3, rotation=1)


def export(root: Path, data: bytes | None = None) -> Path:
    return write_encoded_log(root, tournament=2, block=3, rotation=1, data=encode() if data is None else data)


def files_under(root: Path) -> list[str]:
    """Every file below ``root`` (temporaries included), relative, sorted."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


class TestBytes:
    def test_encode_then_decode_round_trips_with_header(self) -> None:
        """A log is gzip'd JSON that decodes to the payload under its header, header first."""
        data = encode()
        assert data[:2] == b"\x1f\x8b"
        document = decode_log(data, name="b3-r1")
        assert document == DOCUMENT
        assert list(document)[:5] == ["format", "version", "tournament", "block", "rotation"]

    def test_same_content_gives_same_bytes(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The bytes hold no timestamp: the same session always encodes to the same log."""
        first = encode()
        later = time.time() + 3600
        monkeypatch.setattr(time, "time", lambda: later)
        assert encode() == first
        assert encode() != encode({**PAYLOAD, "board_seed": 1004})

    def test_non_ascii_text_is_kept(self) -> None:
        """Bot names and details outside ASCII read back as they were."""
        payload = {**PAYLOAD, "bots": [{"seat": 0, "bot": "łoś"}, {"seat": 1, "bot": "川"}]}
        assert decode_log(encode(payload), name="x")["bots"] == payload["bots"]

    def test_a_payload_repeating_its_header_is_accepted(self) -> None:
        """A payload that names its own session (the same one) is the same log."""
        payload = {**PAYLOAD, "tournament": 2, "block": 3, "rotation": 1, "format": LOG_FORMAT}
        assert encode(payload) == encode()

    def test_payload_that_is_not_json_is_refused(self) -> None:
        """A payload json cannot encode is a LogError naming the log."""
        with pytest.raises(LogError, match=r"^cannot write b3-r1\.json\.gz: payload is not JSON: "):
            encode({**PAYLOAD, "record": {1, 2}})

    @pytest.mark.parametrize(
        ("key", "value"),
        [("block", 4), ("tournament", 1), ("rotation", 0), ("version", 2), ("format", "other")],
    )
    def test_payload_disagreeing_with_the_header_is_refused(self, key: str, value: object) -> None:
        """A payload naming another session (or format) than the log's is a LogError."""
        with pytest.raises(LogError, match=rf"^payload has {key}={value!r}, the log is for {key}="):
            encode({**PAYLOAD, key: value})


class TestExport:
    def test_export_then_read_round_trips(self, tmp_path: Path) -> None:
        """An exported log goes under t<T>/b<B>-r<R>.json.gz, holds the bytes given, and reads back."""
        data = encode()
        path = export(tmp_path, data)
        assert path == tmp_path / "t2" / "b3-r1.json.gz"
        assert path == logfiles.log_path(tmp_path, tournament=2, block=3, rotation=1)
        assert path.read_bytes() == data
        assert read_log(path) == DOCUMENT
        assert files_under(tmp_path) == ["t2/b3-r1.json.gz"]

    def test_an_exported_log_is_for_anyone_to_read(self, tmp_path: Path) -> None:
        """The temporary file is private when made; the log it becomes is not."""
        path = export(tmp_path)
        assert stat.S_IMODE(path.stat().st_mode) == 0o644

    def test_export_replaces_an_older_export(self, tmp_path: Path) -> None:
        """Exporting again replaces the file, leaving nothing else beside it."""
        export(tmp_path, encode({**PAYLOAD, "result": {"stale": True}}))
        path = export(tmp_path)
        assert read_log(path)["result"] == PAYLOAD["result"]
        assert files_under(tmp_path) == ["t2/b3-r1.json.gz"]

    def test_a_write_cut_short_leaves_no_half_file_under_the_name(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A crash in mid-write (half the bytes out): no file under the log's name, no temporary."""
        real_fdopen = os.fdopen

        class HalfWriter(io.FileIO):
            def write(self, data: object) -> int:
                assert isinstance(data, bytes)
                super().write(data[: len(data) // 2])
                self.flush()
                raise OSError(28, "No space left on device")

        def fdopen(fd: int, mode: str = "r", *args: object, **kwargs: object) -> object:
            if mode == "wb":
                return HalfWriter(fd, "wb")
            return real_fdopen(fd, mode, *args, **kwargs)  # type: ignore[call-overload]

        monkeypatch.setattr(os, "fdopen", fdopen)
        with pytest.raises(LogError, match=r"^cannot write .*t2/b3-r1\.json\.gz: No space left on device$"):
            export(tmp_path)
        assert files_under(tmp_path) == []

    def test_a_failed_export_keeps_the_old_file(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A failure at the rename leaves the previous export intact, and no temporary behind."""
        path = export(tmp_path)
        before = path.read_bytes()

        def crash(_self: Path, _target: Path) -> Path:
            raise OSError(5, "power cut")

        monkeypatch.setattr(Path, "replace", crash)
        with pytest.raises(LogError, match=r"cannot write .*b3-r1\.json\.gz: power cut$"):
            export(tmp_path, encode({**PAYLOAD, "result": {"new": True}}))
        assert path.read_bytes() == before
        assert files_under(tmp_path) == ["t2/b3-r1.json.gz"]

    def test_an_interrupt_during_export_leaves_no_temporary(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Ctrl-C between writing and renaming is not swallowed, and the temporary goes."""

        def interrupted(_self: Path, _target: Path) -> Path:
            raise KeyboardInterrupt

        monkeypatch.setattr(Path, "replace", interrupted)
        with pytest.raises(KeyboardInterrupt):
            export(tmp_path)
        assert files_under(tmp_path) == []

    def test_an_unwritable_folder_is_one_line(self, tmp_path: Path) -> None:
        """A folder that cannot be made (a file is in its way) is a LogError naming the log."""
        (tmp_path / "t2").write_bytes(b"a file, not a folder")
        with pytest.raises(LogError, match=r"^cannot write .*t2/b3-r1\.json\.gz: ") as raised:
            export(tmp_path)
        assert "\n" not in str(raised.value)


def test_missing_log(tmp_path: Path) -> None:
    """Reading an exported log that does not exist says so and names the path."""
    with pytest.raises(LogError, match=r"^no session log at .*b3-r1\.json\.gz$"):
        read_log(tmp_path / "b3-r1.json.gz")


def test_unreadable_log(tmp_path: Path) -> None:
    """A path that cannot be read (here a folder) is a LogError naming it."""
    (tmp_path / "b3-r1.json.gz").mkdir()
    with pytest.raises(LogError, match=r"^cannot read .*b3-r1\.json\.gz: "):
        read_log(tmp_path / "b3-r1.json.gz")


def _gzip(data: bytes) -> bytes:
    """gzip without a timestamp: the same bytes, and so the same test ids, in every process."""
    return gzip.compress(data, mtime=0)


CORRUPT = [
    (b"plain text, not gzip", "Not a gzipped file"),
    (_gzip(b"{not json"), "Expecting property name"),
    (_gzip(b"\xff\xfe\xfa"), "codec can't decode"),
    (_gzip(b"[1, 2]"), 'no "format"'),
    (_gzip(json.dumps({"format": "other"}).encode()), 'no "format"'),
    (
        _gzip(json.dumps({"format": LOG_FORMAT, "version": 99}).encode()),
        "version 99 is newer",
    ),
    (_gzip(json.dumps({"format": LOG_FORMAT}).encode()), "bad version None"),
    (_gzip(json.dumps({"format": LOG_FORMAT, "version": True}).encode()), "bad version True"),
    (_gzip(json.dumps({"format": LOG_FORMAT, "version": 0}).encode()), "bad version 0"),
    (b"", "Expecting value"),
    (_gzip(b"{}")[:5], "ended before the end-of-stream marker"),
]


@pytest.mark.parametrize(("content", "reason"), CORRUPT)
def test_corrupt_log_file(tmp_path: Path, content: bytes, reason: str) -> None:
    """Each kind of bad file is one LogError line naming the file and the reason."""
    path = tmp_path / "b3-r1.json.gz"
    path.write_bytes(content)
    with pytest.raises(LogError, match=r"^b3-r1\.json\.gz is not a valid session log: ") as caught:
        read_log(path)
    assert reason in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(("content", "reason"), CORRUPT)
def test_corrupt_log_bytes(content: bytes, reason: str) -> None:
    """Bad bytes from the database are the same one line, naming the log as the caller says."""
    with pytest.raises(LogError, match=r"^session 12 is not a valid session log: ") as caught:
        decode_log(content, name="session 12")
    assert reason in str(caught.value)
    assert "\n" not in str(caught.value)


def test_truncated_log(tmp_path: Path) -> None:
    """A log cut short (a copy interrupted, a full disk) is reported, not half-read."""
    data = encode()
    with pytest.raises(LogError, match="is not a valid session log"):
        decode_log(data[:-12], name="b3-r1")
    path = export(tmp_path, data[: len(data) // 2])
    with pytest.raises(LogError, match=r"^b3-r1\.json\.gz is not a valid session log"):
        read_log(path)
