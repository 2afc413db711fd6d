"""A bot that answers its first request with bytes that are not a BotMessage at all."""

from __future__ import annotations

import asyncio

import _raw

GARBAGE = b"\x0a\x7fnot a protobuf"  # field 1, length 127, but only 14 bytes follow


async def main() -> None:
    async def spoil(stream: _raw.Stream, _request: object) -> bool:
        await stream.send_raw(GARBAGE)
        await asyncio.sleep(5)  # the referee ends the stream
        return False

    await _raw.serve(_raw.arguments(), spoil)


if __name__ == "__main__":
    _raw.run(main)
