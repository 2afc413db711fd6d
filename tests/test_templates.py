"""The pages' Jinja environment: everything escaped, nothing missing, no JSON that ends its script."""

from __future__ import annotations

import json
import re

import pytest
from jinja2 import UndefinedError

from tournaments.report.templates import ENVIRONMENT, render, script_json


class TestScriptJson:
    """JSON embedded in a ``<script>`` reads back as it was and cannot end the element early."""

    @pytest.mark.parametrize(
        "text", ["</script>", "</SCRIPT >", "<!--<script>", "<beta> & 'x' \"y\"", "a\u2028b", "\\u003c!"]
    )
    def test_reads_back_and_cannot_close_the_element(self, text: str) -> None:
        embedded = str(script_json({"bot": text, "list": [text]}))
        assert json.loads(embedded) == {"bot": text, "list": [text]}
        assert not re.search(r"</|<!", embedded)

    def test_other_text_is_kept_as_it_is(self) -> None:
        """The logs' bot names stay readable in the page source (tests grep it for them)."""
        assert str(script_json({"bot": "<beta>", "kind": "late"})) == '{"bot":"<beta>","kind":"late"}'


INLINED = ["standings.css", "sessions.css", "sessions.js", "replay.css", "replay.js"]


class TestEnvironment:
    def test_escapes_every_value(self) -> None:
        page = ENVIRONMENT.from_string("<p title='{{ name }}'>{{ name }}</p>").render(name="<b>'&\"")
        assert page == "<p title='&lt;b&gt;&#39;&amp;&#34;'>&lt;b&gt;&#39;&amp;&#34;</p>"

    def test_a_missing_value_is_an_error(self) -> None:
        with pytest.raises(UndefinedError, match="'title' is undefined"):
            render("sessions.html", rows=[], total=None, sessions_href="sessions.html")

    def test_inline_refuses_what_would_end_its_element(self, monkeypatch: pytest.MonkeyPatch) -> None:
        loader = ENVIRONMENT.loader
        assert loader is not None
        source = loader.get_source
        monkeypatch.setattr(
            loader, "get_source", lambda env, name: ("x = '</script>';", *source(env, name)[1:])
        )
        with pytest.raises(ValueError, match=r"replay\.js would close the element"):
            ENVIRONMENT.from_string('{{ inline("replay.js") }}').render()

    @pytest.mark.parametrize("name", INLINED)
    def test_inlines_the_files_beside_the_templates_as_they_are(self, name: str) -> None:
        """Not as templates: a script's braces are its own."""
        loader = ENVIRONMENT.loader
        assert loader is not None
        text, _, _ = loader.get_source(ENVIRONMENT, name)
        assert ENVIRONMENT.from_string(f'{{{{ inline("{name}") }}}}').render() == text
