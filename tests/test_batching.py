"""When the referee writes to a bot: new requests wait for what the bot holds, in a window
that widens with how much it holds (:mod:`referee.server.connection`), in process."""

from __future__ import annotations

import asyncio

import pytest

from referee.match import Arbiter, BotState
from referee.server.connection import WIDEN_EVERY, WIDEST, BotLink, batch_window

NARROW = 0.005


class TestTheWindow:
    @pytest.mark.parametrize("held", [1, 2, WIDEN_EVERY])
    def test_a_bot_holding_a_few_requests_gets_the_narrow_window(self, held: int) -> None:
        assert batch_window(NARROW, held) == NARROW

    def test_it_widens_with_what_the_bot_holds_up_to_the_widest(self) -> None:
        windows = [batch_window(NARROW, held) for held in range(1, 20 * WIDEN_EVERY)]
        assert windows == sorted(windows)
        assert batch_window(NARROW, 2 * WIDEN_EVERY) == pytest.approx(2 * NARROW)
        assert batch_window(NARROW, WIDEST * WIDEN_EVERY) == pytest.approx(WIDEST * NARROW)
        assert max(windows) == pytest.approx(WIDEST * NARROW)

    def test_no_window_stays_no_window(self) -> None:
        assert batch_window(0.0, 100) == 0.0


def _timer_after_wake(held: int, *, window_s: float = NARROW) -> tuple[float, float, float] | None:
    """Wake the link of a bot holding ``held`` requests: (before, when its batch is due, after)
    on the loop's clock, or None if the batch was let go at once."""

    async def scenario() -> tuple[float, float, float] | None:
        loop = asyncio.get_running_loop()
        state = BotState("slow", max_outstanding=256)
        state.outstanding = dict.fromkeys(range(held))  # type: ignore[assignment]  # only counted
        link = BotLink(state, arbiter=Arbiter(), encoders={}, sent=lambda: None, batch_window_s=window_s)
        stream = link.attach(notices_in_batch=True)
        stream.wake.clear()
        before = loop.time()
        link.wake()
        after = loop.time()
        flush = link._flush  # noqa: SLF001 - the timer is what the window decides
        if stream.wake.is_set():
            assert flush is None
            return None
        assert flush is not None
        return before, flush.when(), after

    return asyncio.run(scenario())


class TestTheLink:
    @pytest.mark.parametrize("held", [1, WIDEN_EVERY, 2 * WIDEN_EVERY, 10 * WIDEN_EVERY])
    def test_new_requests_wait_the_window_for_what_the_bot_holds(self, held: int) -> None:
        timed = _timer_after_wake(held)
        assert timed is not None
        before, due, after = timed
        window = batch_window(NARROW, held)
        assert before + window <= due <= after + window

    def test_a_bot_that_holds_nothing_gets_its_batch_at_once(self) -> None:
        assert _timer_after_wake(0) is None

    def test_without_a_window_nothing_waits(self) -> None:
        assert _timer_after_wake(50, window_s=0.0) is None
