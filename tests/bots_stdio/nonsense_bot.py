"""A stdio bot that answers every third request with a line that is no action at all."""

from __future__ import annotations

from _lines import answer, lowest, serve

serve(lambda n, request: "I think, therefore I bid" if n % 3 == 0 else answer(lowest(request)))
