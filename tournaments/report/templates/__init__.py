"""The HTML pages' templates, and the one Jinja environment that renders them.

``standings.html``, ``sessions.html`` and ``replay.html`` sit in this folder with the CSS
and script files they inline (``inline("replay.js")``), so that each page is still one
self-contained file that works offline and loads nothing from the network. The templates
are loaded through this package, wherever it is installed: the folder moves with its
modules. What goes into a template is prepared, typed, by the module that renders it
(:mod:`tournaments.report.publish`, :mod:`tournaments.report.session_pages`,
:mod:`tournaments.report.replay_page`).

Every value is escaped unless marked safe; a missing variable is an error, not an empty
string. JSON embedded in a ``<script>`` goes through the ``script_json`` filter.
"""

from __future__ import annotations

import json
from typing import Final

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

__all__ = ["ENVIRONMENT", "render", "script_json"]


def script_json(value: object) -> Markup:
    r"""``value`` as compact JSON that cannot end the ``<script>`` element holding it.

    ``</`` becomes ``<\/`` (a tag can no longer close) and ``<!`` becomes ``\u003c!`` (no
    ``<!--`` that would keep the element open past its end); both read back as the same
    text in JSON. Any other character, ``<beta>`` included, is kept as it is.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return Markup(text.replace("</", "<\\/").replace("<!", "\\u003c!"))  # noqa: S704 - made safe here


def _inline(name: str) -> Markup:
    """A style sheet or script of this folder, as it is, for a page's ``<style>`` or ``<script>``.

    It is not a template (its braces are the language's own); it may not end its element early.
    """
    loader = ENVIRONMENT.loader
    assert loader is not None  # noqa: S101 - set below
    text, _, _ = loader.get_source(ENVIRONMENT, name)
    if "</script" in text.lower() or "</style" in text.lower():
        msg = f"{name} would close the element it is inlined into"
        raise ValueError(msg)
    return Markup(text)  # noqa: S704 - a file of this package, not user input


ENVIRONMENT: Final = Environment(
    loader=PackageLoader(__name__, ""),
    autoescape=select_autoescape(default_for_string=True, default=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
"""Escapes everything by default; ``{% tag %}`` lines leave no blank line or indent behind."""
ENVIRONMENT.filters["script_json"] = script_json
ENVIRONMENT.globals["inline"] = _inline


def render(name: str, /, **context: object) -> str:
    """Render the template ``name`` of this folder with ``context``."""
    return ENVIRONMENT.get_template(name).render(context)
