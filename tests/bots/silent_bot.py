"""A bot that says hello and then never answers anything."""

from __future__ import annotations

import _raw


async def main() -> None:
    async def ignore(_stream: _raw.Stream, _request: object) -> bool:
        return True

    await _raw.serve(_raw.arguments(), ignore)


if __name__ == "__main__":
    _raw.run(main)
