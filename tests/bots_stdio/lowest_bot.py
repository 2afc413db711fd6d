"""A well-behaved stdio bot: passes, then plays the first legal card; echoes the request id."""

from __future__ import annotations

import json

from _lines import lowest, serve

serve(lambda _n, request: json.dumps({"request_id": request["request_id"], "action": lowest(request)}))
