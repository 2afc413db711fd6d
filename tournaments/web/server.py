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

import mimetypes
import secrets
from typing import TYPE_CHECKING, Final

from aiohttp import web

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping
    from pathlib import Path

__all__ = ["HOST", "REFUSED", "PageServer", "new_token"]

HOST: Final = "127.0.0.1"
"""Where every page server listens: this machine only."""
REFUSED: Final = "403: wrong or missing token. Open the address the nap command printed (it holds the token)."
_HEADERS: Final = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'"
    ),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}
"""Sent with every file: nothing is cached or framed, nothing loads from elsewhere, and the
token in the address is never sent on as a referrer."""


def new_token() -> str:
    """A fresh secret for a page's address: 128 random bits, URL-safe."""
    return secrets.token_urlsafe(16)


class PageServer:
    """Serves ``files`` from ``folder`` and the ``handlers``, under ``/TOKEN/``, on 127.0.0.1.

    ``files`` maps a path under the token (``""`` is the page itself) to a file name in
    ``folder``; ``handlers`` maps a path to an aiohttp GET handler (a WebSocket's, say).
    :meth:`start` binds a port the system picks (or ``port``) and returns the page's address.
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

    async def start(self, port: int = 0) -> str:
        """Listen on 127.0.0.1 (a free port unless ``port``); return :attr:`url`."""
        runner = web.AppRunner(self.app(), access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, HOST, port, reuse_address=False)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        self.port = int(runner.addresses[0][1])
        return self.url

    async def stop(self) -> None:
        """Close every connection and stop listening."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    @web.middleware
    async def _check_token(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        first = request.path.removeprefix("/").partition("/")[0]
        if not secrets.compare_digest(first.encode(), self.token.encode()):
            return web.Response(status=403, text=REFUSED + "\n", headers=_HEADERS)
        if request.path == f"/{self.token}":
            slash = f"/{self.token}/"
            raise web.HTTPFound(slash)
        return await handler(request)

    def _file_handler(self, name: str) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        path = self._folder / name
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"

        async def serve(request: web.Request) -> web.StreamResponse:
            del request
            return web.Response(body=path.read_bytes(), content_type=kind, charset="utf-8", headers=_HEADERS)

        return serve
