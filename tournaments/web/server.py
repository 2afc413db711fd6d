"""What any of nap's page servers needs: 127.0.0.1, a port the system picks, a secret token, static files.

A :class:`PageServer` is an aiohttp application on the caller's asyncio loop (the
referee's, so a page and the referee share one thread and no lock). Every path starts
with the server's secret token (``http://127.0.0.1:PORT/TOKEN/``): a request without it,
or with another, is refused with 403 and a one-line message, so another user of the
machine, who can reach 127.0.0.1 but cannot read the URL, gets nothing. Pages and their
assets are the files named in ``files`` from one folder (package data; nothing else of
the folder is served), with a Content-Security-Policy that lets them load nothing from
elsewhere; anything else (a WebSocket, a JSON feed) is a handler named in ``handlers``.
"""

from __future__ import annotations

import base64
import hashlib
import mimetypes
import secrets
import socket
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Final

from aiohttp import web

from tournaments.errors import RunnerError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping, Sequence

__all__ = [
    "HEADERS",
    "HOST",
    "REFUSED",
    "PageServer",
    "content_security_policy",
    "file_handler",
    "new_token",
    "static_folder",
]

HOST: Final = "127.0.0.1"
"""Where every page server listens: this machine only."""
REFUSED: Final = "403: wrong or missing token. Open the address the nap command printed (it holds the token)."


def content_security_policy(*, scripts: Sequence[str] = (), styles: Sequence[str] = ()) -> str:
    """The pages' Content-Security-Policy: nothing loads from elsewhere, nothing frames them.

    ``scripts`` and ``styles`` are the texts of inline ``<script>`` and ``<style>``
    elements allowed on one page, by their SHA-256 (a page that inlines its script is
    allowed that script, not inline scripts in general).
    """

    def allowed(texts: Sequence[str]) -> str:
        hashes = (base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() for text in texts)
        return " ".join(["'self'", *(f"'sha256-{digest}'" for digest in hashes)])

    parts = ["default-src 'self'"]
    if scripts:
        parts.append(f"script-src {allowed(scripts)}")
    if styles:
        parts.append(f"style-src {allowed(styles)}")
    return "; ".join([*parts, "img-src 'self' data:", "connect-src 'self'", "frame-ancestors 'none'"])


HEADERS: Final = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": content_security_policy(),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}
"""Sent with every file: nothing is cached or framed, nothing loads from elsewhere, and the
token in the address is never sent on as a referrer."""


def new_token() -> str:
    """A fresh secret for a page's address: 128 random bits, URL-safe."""
    return secrets.token_urlsafe(16)


def static_folder(page: str) -> Path:
    """The folder of the pages' files (package data), checked to hold ``page``."""
    path = Path(str(resources.files("tournaments.web") / "static"))
    if not (path / page).is_file():
        msg = f"the page {page} is missing from {path} (a broken install?)"
        raise RunnerError(msg)
    return path


class PageServer:
    """Serves ``files`` from ``folder`` and the ``handlers``, under ``/TOKEN/``, on 127.0.0.1.

    ``files`` maps a path under the token (``""`` is the page itself) to a file name in
    ``folder``; ``handlers`` maps a path to an aiohttp GET handler (a WebSocket's, say).
    :meth:`bind` takes the port (one the system picks, or ``port``), so that a port taken
    is known before anything else starts; :meth:`start` serves on it (binding it first if
    :meth:`bind` was not called) and returns the page's address.
    """

    def __init__(
        self,
        *,
        folder: Path,
        files: Mapping[str, str],
        handlers: Mapping[str, Callable[[web.Request], Awaitable[web.StreamResponse]]],
        token: str | None = None,
    ) -> None:
        self.token = token or new_token()
        self._folder = folder
        self._files = dict(files)
        self._handlers = dict(handlers)
        self._runner: web.AppRunner | None = None
        self._socket: socket.socket | None = None
        self.port = 0

    @property
    def url(self) -> str:
        """The page's address, token included (valid once started)."""
        return f"http://{HOST}:{self.port}/{self.token}/"

    def app(self) -> web.Application:
        """The aiohttp application: the token check, then the files and handlers."""
        app = web.Application(middlewares=[self._check_token])
        for path, handler in self._handlers.items():
            app.router.add_get(f"/{self.token}/{path}", handler)
        for path, name in self._files.items():
            app.router.add_get(f"/{self.token}/{path}", self._file_handler(name))
        return app

    def bind(self, port: int = 0) -> str:
        """Take ``port`` (0: a free one) on 127.0.0.1 and return :attr:`url`; OSError if it is taken."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a --port free again at once
            listener.bind((HOST, port))
            listener.listen(64)
        except OSError:
            listener.close()
            raise
        self._socket = listener
        self.port = int(listener.getsockname()[1])
        return self.url

    async def start(self, port: int = 0) -> str:
        """Serve on the port :meth:`bind` took (or take ``port`` now); return :attr:`url`."""
        if self._socket is None:
            self.bind(port)
        listener = self._socket
        if listener is None:  # bound just above
            raise RuntimeError(self.url)
        runner = web.AppRunner(self.app(), access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await runner.setup()
        try:
            await web.SockSite(runner, listener).start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        return self.url

    async def stop(self) -> None:
        """Close every connection and stop listening."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()
        listener, self._socket = self._socket, None
        if listener is not None:
            listener.close()

    @web.middleware
    async def _check_token(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        first = request.path.removeprefix("/").partition("/")[0]
        if not secrets.compare_digest(first.encode(), self.token.encode()):
            return web.Response(status=403, text=REFUSED + "\n", headers=HEADERS)
        if request.path == f"/{self.token}":
            slash = f"/{self.token}/"
            raise web.HTTPFound(slash)
        return await handler(request)

    def _file_handler(self, name: str) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        return file_handler(self._folder / name)


def file_handler(path: Path) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """A GET handler serving the file at ``path`` as it is (read at each request), with :data:`HEADERS`."""
    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"

    async def serve(request: web.Request) -> web.StreamResponse:
        del request
        body = path.read_bytes()  # noqa: ASYNC240 - a small file of the package, read as the pages always were
        return web.Response(body=body, content_type=kind, charset="utf-8", headers=HEADERS)

    return serve
