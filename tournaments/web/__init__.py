"""Pages served on 127.0.0.1 to a person: ``nap play``'s table and a tournament's live page.

:mod:`tournaments.web.server` is what every page server needs (127.0.0.1 on a port the
system picks, a secret token in every path, static files, a WebSocket); the play pages
are :mod:`tournaments.web.table` (pure: what the page is sent, built from what one seat
is told), :mod:`tournaments.web.seat` (the person's seat: an SDK client of the referee
with a WebSocket to the page) and :mod:`tournaments.web.play` (the sessions, stored); the
live page of ``nap tournament run --watch`` is :mod:`tournaments.web.watch` (its server)
and :mod:`tournaments.web.watch_feed` (pure: what the page is sent). The stack is aiohttp
on the referee's asyncio loop and plain HTML, CSS and JavaScript shipped as package data
(``static/``): no build step, no CDN. Nothing here prints.
"""
