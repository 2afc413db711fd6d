"""The command line's client of an arena's API (``/api/v1/``): where the arena is, who you are, each call.

**Where and who** (:func:`connect`): the arena's URL is ``--arena URL`` where the command
takes it, else ``$NAP_ARENA_URL``, else the config file's; the token is
``$NAP_ARENA_TOKEN``, else the config file's, and the file's token only for the file's own
URL, so that a token is never sent to an arena other than the one it was saved for. The
config file, ``$XDG_CONFIG_HOME/nap/arena.toml`` (``~/.config/nap/arena.toml``), holds
``url`` and ``token``; ``nap arena login`` writes it (:func:`write_config`) with mode 0600
in a 0700 folder, and it is refused, as ssh refuses a private key, when others may read it.

**Every failure is one line** (:class:`ClientError`) that names the fix: no arena
configured, the arena unreachable (naming the URL), the token refused (401), the arena's
own ``{"error"}`` line for any other refusal, and an answer that is not the API's (a web
page at that URL, a redirect). Redirects are not followed: the token would go along to
wherever they point. No message ever holds the token.

The answers are checked as they are read (:class:`Me`, :class:`PersonView`,
:class:`SubmissionView`): whatever does not have the API's shape is refused as not an
arena's answer, in one line, rather than failing later on a missing field.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import os
import re
import socket
import ssl
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeGuard, TypeVar

from tournaments.errors import ArenaError

if TYPE_CHECKING:
    import email.message
    from collections.abc import Callable, Mapping

__all__ = [
    "FINAL",
    "TOKEN_VARIABLE",
    "URL_VARIABLE",
    "ArenaClient",
    "ClientError",
    "Config",
    "Connection",
    "Me",
    "PersonView",
    "Step",
    "SubmissionView",
    "checked_token",
    "config_path",
    "connect",
    "normalize_url",
    "read_config",
    "sent_in_clear",
    "write_config",
]

URL_VARIABLE: Final = "NAP_ARENA_URL"
TOKEN_VARIABLE: Final = "NAP_ARENA_TOKEN"  # noqa: S105 - the variable's name, not a token
TIMEOUT_S: Final = 30.0
"""How long a connection, and each read of an answer, may take before the arena counts as unreachable."""
ANSWER_BYTES: Final = 32 << 20
"""The largest answer read (a long list of submissions is far below it; a stream that never ends is not)."""
FINAL: Final = frozenset({"placed", "refused", "retired"})
"""A submission's statuses that no longer change by admission (a retired one was placed first)."""
_TOKEN_TEXT: Final = re.compile(r"[\x21-\x7e]{1,200}")
"""What can be a token at all (visible ASCII, no space): anything else is refused before it is sent."""
_MODE_OTHERS: Final = 0o077

T = TypeVar("T")


class ClientError(ArenaError):
    """A call to the arena failed; ``str()`` is one line naming the fix.

    ``status`` is the HTTP status of the arena's refusal (None: no answer, or not the
    API's); ``transient`` says the arena may answer if asked again later (unreachable,
    or stopping: 503).
    """

    def __init__(self, message: str, *, status: int | None = None, transient: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.transient = transient


# Where the arena is, and the token


@dataclass(frozen=True, slots=True)
class Config:
    """The config file's arena (``url``) and token; either may be missing."""

    path: Path
    url: str | None = None
    token: str | None = None


def config_path(environ: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/nap/arena.toml``; ``~/.config/nap/arena.toml`` when it is unset or not absolute."""
    base = environ.get("XDG_CONFIG_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "nap" / "arena.toml"


def read_config(path: Path) -> Config:
    """The config file (an empty :class:`Config` if there is none); refused if others may read it."""
    import tomllib  # noqa: PLC0415 - read only when the file is

    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return Config(path)
    if mode & _MODE_OTHERS:
        msg = f"{path} holds a token and others may read it (mode {mode & 0o777:04o}): run chmod 600 {path}"
        raise ClientError(msg)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        msg = f"{path}: not valid TOML ({exc}): fix it, or run nap arena login URL to write it again"
        raise ClientError(msg) from None
    url, token = data.get("url"), data.get("token")
    if not isinstance(url, str | None) or not isinstance(token, str | None):
        msg = f"{path}: url and token must be strings: run nap arena login URL to write it again"
        raise ClientError(msg)
    return Config(path, url=None if url is None else normalize_url(url), token=token)


def write_config(path: Path, *, url: str, token: str) -> None:
    """Write ``url`` and ``token`` to ``path``: mode 0600 in a 0700 folder, replaced whole."""
    folder = path.parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.chmod(0o700)  # nap's own folder: nobody else has a reason to list it
    # TOML's basic strings take JSON's escapes; the file is replaced whole, so a reader never sees half of it.
    text = (
        "# written by nap arena login: the arena and your token (keep it private)\n"
        f"url = {json.dumps(url)}\ntoken = {json.dumps(token)}\n"
    )
    handle, temporary = tempfile.mkstemp(prefix=".arena-", suffix=".toml", dir=folder)  # 0600 already
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        Path(temporary).replace(path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def normalize_url(text: str) -> str:
    """The arena's address as used and saved: ``http(s)://host[:port][/prefix]``, no slash at the end."""
    url = text.strip()
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() not in {"http", "https"} or not parts.hostname:
        msg = f"{url!r} is not an arena's address: give http://HOST:PORT or https://HOST"
        raise ClientError(msg)
    if parts.query or parts.fragment or parts.username or parts.password:
        msg = f"{url!r}: give the arena's address alone (no user, query or #fragment)"
        raise ClientError(msg)
    return urllib.parse.urlunsplit(
        (parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/"), "", "")
    )


def sent_in_clear(url: str) -> bool:
    """Whether a token sent to ``url`` crosses the network readable: plain http to another machine."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http":
        return False
    host = parts.hostname or ""
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host != "localhost"


@dataclass(frozen=True, slots=True)
class Connection:
    """The arena to ask and the token to ask with; ``default_url`` is the arena found without ``--arena``."""

    url: str
    token: str | None
    token_source: str
    """Where the token came from, for the line that says it was refused: a variable, a file, a prompt."""
    default_url: str | None = None


def connect(*, url: str | None, environ: Mapping[str, str]) -> Connection:
    """The arena to ask (``url``: ``--arena``'s, if given) and the token to ask it with.

    Raises :class:`ClientError` when no arena is configured, or no token is known for it
    (the config file's token goes only to the config file's URL). The config file is read
    only when the variables (and ``url``) leave something to find.
    """
    path = config_path(environ)
    flag_url = normalize_url(url) if url else None
    env_url = normalize_url(environ[URL_VARIABLE]) if environ.get(URL_VARIABLE) else None
    env_token = environ.get(TOKEN_VARIABLE) or None
    needs_file = (flag_url is None and env_url is None) or env_token is None
    config = read_config(path) if needs_file else Config(path)
    default_url = env_url or config.url
    chosen = flag_url or default_url
    if chosen is None:
        msg = "no arena configured: give --arena URL or run nap arena login URL"
        raise ClientError(msg)
    token, token_source = None, ""
    if env_token is not None:
        token, token_source = env_token, f"${TOKEN_VARIABLE}"
    elif config.token is not None and chosen == config.url:
        token, token_source = config.token, str(config.path)
    if token is None:
        msg = f"no token for {chosen}: run nap arena login {chosen} (or set {TOKEN_VARIABLE})"
        raise ClientError(msg)
    return Connection(
        url=chosen,
        token=checked_token(token, token_source),
        token_source=token_source,
        default_url=default_url,
    )


def checked_token(token: str, source: str) -> str:
    """``token`` if it can be one (visible ASCII, no space: it goes in a header); ClientError otherwise."""
    if not _TOKEN_TEXT.fullmatch(token):
        msg = f"the token from {source} is not a token (an arena's token is nap_ and 43 characters)"
        raise ClientError(msg)
    return token


# What the API answers


class _NotTheApiError(Exception):
    """An answer without the API's shape (the caller says where it came from)."""


def _get(data: Mapping[str, object], key: str, kind: type[T]) -> T:
    value = data.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise _NotTheApiError(key)
    return value


def _maybe(data: Mapping[str, object], key: str, kind: type[T]) -> T | None:
    return None if data.get(key) is None else _get(data, key, kind)


def _object(value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _NotTheApiError
    return value


def _list(value: object) -> list[object]:
    if not isinstance(value, list):
        raise _NotTheApiError
    return value


@dataclass(frozen=True, slots=True)
class Me:
    """Who a token names: ``GET /api/v1/me``."""

    name: str
    admin: bool
    scopes: tuple[str, ...]

    @classmethod
    def from_json(cls, value: object) -> Me:
        """Read the API's JSON."""
        data = _object(value)
        scopes = _list(data.get("scopes"))
        if not all(isinstance(s, str) for s in scopes):
            raise _NotTheApiError
        return cls(_get(data, "name", str), _get(data, "admin", bool), tuple(str(s) for s in scopes))


@dataclass(frozen=True, slots=True)
class PersonView:
    """Someone of the arena's, as an admin sees them: ``GET /api/v1/people``."""

    name: str
    admin: bool
    created_at: str
    tokens: int
    """How many of their tokens are valid."""

    @classmethod
    def from_json(cls, value: object) -> PersonView:
        """Read the API's JSON."""
        data = _object(value)
        return cls(
            _get(data, "name", str),
            _get(data, "admin", bool),
            _get(data, "created_at", str),
            _get(data, "tokens", int),
        )


@dataclass(frozen=True, slots=True)
class Step:
    """A line of a submission's admission log (its text may span lines: a check's report)."""

    at: str
    step: str
    text: str

    @classmethod
    def from_json(cls, value: object) -> Step:
        """Read the API's JSON."""
        data = _object(value)
        return cls(_get(data, "at", str), _get(data, "step", str), _get(data, "text", str))


@dataclass(frozen=True, slots=True)
class SubmissionView:
    """A submission as the API serves it; ``steps`` only where the answer holds its log (one submission).

    ``document`` is the API's JSON itself, as served: what ``--json`` prints.
    """

    id: int
    owner: str
    status: str
    reason: str | None
    name: str | None
    version: str | None
    entry: str | None
    submitted_at: str
    updated_at: str
    rating: tuple[float, float | None, int] | None
    """The provisional rating: mean chips a session against the anchors, its 95% half-width, blocks."""
    steps: tuple[Step, ...] | None
    document: Mapping[str, object] = field(compare=False, repr=False)

    @property
    def final(self) -> bool:
        """Whether admission is over: placed (or retired since) or refused."""
        return self.status in FINAL

    @classmethod
    def from_json(cls, value: object) -> SubmissionView:
        """Read the API's JSON."""
        data = _object(value)
        rating = _maybe(data, "rating", dict)
        steps = data.get("steps")
        return cls(
            id=_get(data, "id", int),
            owner=_get(data, "owner", str),
            status=_get(data, "status", str),
            reason=_maybe(data, "reason", str),
            name=_maybe(data, "name", str),
            version=_maybe(data, "version", str),
            entry=_maybe(data, "entry", str),
            submitted_at=_get(data, "submitted_at", str),
            updated_at=_get(data, "updated_at", str),
            rating=None if rating is None else _rating(rating),
            steps=None if steps is None else tuple(Step.from_json(s) for s in _list(steps)),
            document=data,
        )


def _rating(data: Mapping[str, object]) -> tuple[float, float | None, int]:
    mean, half = data.get("mean"), data.get("half_width")
    if not _number(mean) or not (half is None or _number(half)):
        raise _NotTheApiError
    return float(mean), None if half is None else float(half), _get(data, "n", int)


def _number(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


# The calls


def _opener() -> urllib.request.OpenerDirector:
    """A urllib opener without its redirect handler: a redirect is answered as what it is, not followed.

    (Following it would carry the token to wherever it points.) The proxies of the
    environment (``$https_proxy``) are honoured, certificates checked as urllib checks them.
    """
    opener = urllib.request.OpenerDirector()
    for handler in (
        urllib.request.ProxyHandler(),
        urllib.request.HTTPHandler(),
        urllib.request.HTTPSHandler(),
        urllib.request.HTTPDefaultErrorHandler(),
        urllib.request.HTTPErrorProcessor(),
    ):
        opener.add_handler(handler)
    return opener


def _user_agent() -> str:
    try:
        return f"nap-arena/{version('nap-arena')}"
    except PackageNotFoundError:  # pragma: no cover - run from a source tree without its metadata
        return "nap-arena"


class ArenaClient:
    """The API's calls as one person (the connection's token); each raises :class:`ClientError`, one line."""

    def __init__(self, connection: Connection, *, timeout_s: float = TIMEOUT_S) -> None:
        self.connection = connection
        self._timeout_s = timeout_s
        self._opener = _opener()

    @property
    def url(self) -> str:
        """The arena's address."""
        return self.connection.url

    def me(self) -> Me:
        """Who the token names."""
        return self._read("GET", "/me", Me.from_json)

    def add_person(self, name: str, *, admin: bool = False) -> str:
        """Add ``name`` (an admin's call); their token, which the arena shows this once."""
        return self._read("POST", "/people", _token, body={"name": name, "admin": admin})

    def people(self) -> list[PersonView]:
        """Everyone, with their valid tokens' count (an admin's call)."""
        return self._read("GET", "/people", lambda v: [PersonView.from_json(p) for p in _list(v)])

    def revoke(self, name: str) -> int:
        """Revoke every token of ``name``; how many were valid."""
        return self._read(
            "POST", f"/people/{_quoted(name)}/revoke", lambda v: _get(_object(v), "revoked", int)
        )

    def new_token(self, name: str) -> str:
        """A new token for ``name`` (an admin's call, or their own)."""
        return self._read("POST", f"/people/{_quoted(name)}/tokens", _token)

    def submit(self, pack: bytes) -> SubmissionView:
        """Upload a bot's pack (:func:`tournaments.plan.versions.pack`): the new submission, queued."""
        return self._read("POST", "/submissions", SubmissionView.from_json, data=pack)

    def submissions(self, *, owner: str | None = None) -> list[SubmissionView]:
        """The caller's submissions, oldest first (an admin's: ``owner``'s, or everyone's)."""
        query = "" if owner is None else "?" + urllib.parse.urlencode({"owner": owner})
        return self._read(
            "GET", f"/submissions{query}", lambda v: [SubmissionView.from_json(s) for s in _list(v)]
        )

    def submission(self, number: int) -> SubmissionView:
        """One of the caller's submissions, with its whole admission log."""
        return self._read("GET", f"/submissions/{number}", SubmissionView.from_json)

    def leaderboard(self) -> dict[str, Any]:
        """The leaderboard as the API serves it (its JSON document)."""
        return self._read("GET", "/leaderboard", _object)

    def _read(
        self,
        method: str,
        path: str,
        parse: Callable[[object], T],
        *,
        body: Mapping[str, object] | None = None,
        data: bytes | None = None,
    ) -> T:
        """Ask ``method /api/v1/path`` and read its answer with ``parse``."""
        answer = self._call(method, path, body=body, data=data)
        try:
            return parse(answer)
        except _NotTheApiError:
            raise self._not_the_api(method, path, "an answer of another shape") from None

    def _call(
        self, method: str, path: str, *, body: Mapping[str, object] | None, data: bytes | None
    ) -> object:
        headers = {"Accept": "application/json", "User-Agent": _user_agent()}
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        elif data is not None:
            headers["Content-Type"] = "application/gzip"
        request = urllib.request.Request(  # noqa: S310 - the URL is checked to be http(s) by normalize_url
            f"{self.url}/api/v1{path}", data=data, method=method, headers=headers
        )
        if self.connection.token is not None:  # never carried on to another address
            request.add_unredirected_header("Authorization", f"Bearer {self.connection.token}")
        try:
            with self._opener.open(request, timeout=self._timeout_s) as response:
                return self._document(
                    method, path, response.status, response.headers, response.read(ANSWER_BYTES + 1)
                )
        except urllib.error.HTTPError as exc:
            with exc:
                raise self._refusal(method, path, exc) from None
        except urllib.error.URLError as exc:
            raise self._unreachable(exc.reason, sent=data) from None
        except (OSError, http.client.HTTPException) as exc:  # a read that timed out, a connection dropped
            raise self._unreachable(exc, sent=data) from None

    def _document(
        self, method: str, path: str, status: int, headers: email.message.Message, content: bytes
    ) -> object:
        """The answer's JSON document, if it is one of the API's."""
        kind = headers.get_content_type()
        if kind != "application/json" or len(content) > ANSWER_BYTES:
            raise self._not_the_api(method, path, f"HTTP {status} {kind}")
        try:
            return json.loads(content)
        except ValueError:
            raise self._not_the_api(method, path, f"HTTP {status}, not JSON") from None

    def _refusal(self, method: str, path: str, error: urllib.error.HTTPError) -> ClientError:
        """The line for a failed answer: a refused token, the arena's own line, or not the API's."""
        status = error.code
        if 300 <= status < 400:
            where = error.headers.get("Location", "elsewhere")
            msg = f"{self.url} redirects to {where}: give the arena's address itself (it is not followed)"
            return ClientError(msg, status=status)
        if status == 401:
            source = self.connection.token_source
            fix = (
                f"set {TOKEN_VARIABLE} to a good one"
                if source == f"${TOKEN_VARIABLE}"
                else f"run nap arena login {self.url} with a good one"
            )
            msg = f"the arena at {self.url} refused the token from {source} (wrong or revoked): {fix}"
            return ClientError(msg, status=status)
        try:
            content = error.read(ANSWER_BYTES + 1)
            document = self._document(method, path, status, error.headers, content)
            line = _get(_object(document), "error", str).splitlines()[0]
        except (ClientError, _NotTheApiError, IndexError, OSError, http.client.HTTPException):
            return self._not_the_api(
                method, path, f"HTTP {status} {error.headers.get_content_type()}", status=status
            )
        return ClientError(line, status=status, transient=status == 503)

    def _not_the_api(self, method: str, path: str, what: str, *, status: int | None = None) -> ClientError:
        msg = (
            f"{self.url} does not answer as a Nap arena ({what} to {method} /api/v1{path}): "
            "is it the arena's address?"
        )
        return ClientError(msg, status=status)

    def _unreachable(self, reason: object, *, sent: bytes | None) -> ClientError:
        return ClientError(
            f"cannot reach the arena at {self.url}: {_why(reason, self._timeout_s, sent)}", transient=True
        )


def _why(reason: object, timeout_s: float, sent: bytes | None) -> str:  # noqa: PLR0911 - one line a kind
    """Why a connection failed, in words (``sent``: the body it was sending)."""
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused (is it running, on that port?)"
    if isinstance(reason, socket.gaierror):
        return "no such host (check the address)"
    if isinstance(reason, TimeoutError):
        return f"no answer within {timeout_s:g} s"
    if isinstance(reason, ssl.SSLCertVerificationError):
        return f"its certificate cannot be trusted ({reason.verify_message})"
    if isinstance(reason, ConnectionResetError | BrokenPipeError) and sent:
        return (
            f"the connection was closed while {len(sent):,} bytes were sent "
            "(over the arena's size limit, or a proxy's?)"
        )
    if isinstance(reason, http.client.RemoteDisconnected):
        return "it closed the connection without an answer (is it the arena's address and port?)"
    if isinstance(reason, http.client.HTTPException):
        return f"not an HTTP answer ({type(reason).__name__}): is it the arena's address and port?"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror.lower()
    return str(reason) or type(reason).__name__


def _token(value: object) -> str:
    return _get(_object(value), "token", str)


def _quoted(name: str) -> str:
    return urllib.parse.quote(name, safe="")
