"""The bot SDK's CPU per decision, without the network: recorded batches through a Dispatcher.

    .venv/bin/python bench/sdk.py [--tables 128] [--batch 45] [--sessions 400] [--repeat 5]
    .venv/bin/python bench/sdk.py --profile

Records what one bot process holding one seat at each of ``--tables`` concurrent 4-seat
heather tables receives from the referee: RefereeMessage bytes, each a Batch of
``--batch`` DecisionRequests (encoded with the referee's own encoder) plus the
TableClosed notices of finished sessions, as with Hello.notices_in_batch. Forced moves
are not asked (the tournament's default). Then it times what the SDK does with them in
the bot process, minus gRPC's own transport: read each message
(``referee.wire.botstream.read_referee_message``), ``handle_batch`` it with
a :class:`~clients.bots.random_bot.RandomBot` per seat (a batch that runs past the flush
delay is finished in parts, as the connection does), close finished tables, write
the Answers (``answers_message``). Prints the CPU time (``time.process_time``) per decision of each repetition
and the best; ``--profile`` prints cProfile's top functions instead.
Not a test: figures depend on the machine (and on what else runs on it).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import time
from functools import partial

from clients.bots.random_bot import RandomBot
from clients.sdk import Dispatcher
from clients.sdk.dispatch import Answering
from referee.rules import DEFAULT_PROFILE, Session
from referee.wire import nap_pb2
from referee.wire.botstream import Batch, answers_message, read_referee_message
from referee.wire.fastcodec import RequestEncoder, batch_message, encode_request

TABLE_SIZE = 4


def record(*, tables: int, batch: int, sessions: int, seed: int) -> tuple[list[bytes], int]:
    """The RefereeMessage bytes the bot would get, and the number of requests in them."""
    rng = random.Random(seed)
    profile = DEFAULT_PROFILE
    started = 0
    live: dict[str, tuple[Session, int, RequestEncoder]] = {}
    messages: list[bytes] = []
    pending: list[bytes] = []
    closed: list[str] = []
    request_id = 0
    total = 0

    def flush() -> None:
        nonlocal total
        notices = b"".join(
            b"\x1a" + bytes([len(body)]) + body
            for body in (
                nap_pb2.TableClosed(
                    table=table, reason=nap_pb2.TABLE_CLOSED_REASON_SESSION_OVER
                ).SerializeToString()
                for table in closed
            )
        )
        messages.append(batch_message(pending, [], notices))
        total += len(pending)
        pending.clear()
        closed.clear()

    while live or started < sessions:
        while len(live) < tables and started < sessions:
            table = f"bench-{started}"
            live[table] = (
                Session(profile, table_size=TABLE_SIZE, seed=seed + started),
                started % TABLE_SIZE,
                RequestEncoder(table),
            )
            started += 1
        for table, (session, mine, encoder) in list(live.items()):
            # play the other seats and forced moves until this bot is asked, or the end
            while not session.over:
                seat = session.to_act
                legal = session.legal_actions()
                if seat == mine and len(legal) > 1:
                    break
                session.apply(rng.choice(legal))
            if session.over:
                del live[table]
                closed.append(table)
                continue
            request_id += 1
            pending.append(
                encode_request(
                    session.view(mine),
                    table=table,
                    request_id=request_id,
                    deadline_ms=5000,
                    time_bank_ms=0,
                    encoder=encoder,
                )
            )
            session.apply(rng.choice(session.legal_actions()))
            if len(pending) >= batch:
                flush()
    if pending or closed:
        flush()
    return messages, total


def play(messages: list[bytes]) -> int:
    """Feed every message to a fresh Dispatcher as the SDK's connection does; bytes answered."""
    dispatcher = Dispatcher(partial(RandomBot, seed=0))
    handle = dispatcher.handle_batch
    close = dispatcher.close_table
    read = read_referee_message
    sent = 0
    for data in messages:
        batch = read(data)
        if not isinstance(batch, Batch):
            continue  # every recorded message is a Batch
        reply = handle(batch)
        if isinstance(reply, tuple):
            sent += len(answers_message(reply))
        elif isinstance(reply, Answering):  # the batch ran past the flush delay: sent in parts
            while True:
                answers = reply.take()
                if answers is not None:
                    sent += len(answers_message(answers))
                if reply.decided:
                    break
                reply.resume()
        for table in batch.closed:
            close(table)
    return sent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=128, help="tables in play at once")
    parser.add_argument("--batch", type=int, default=45, help="requests per message")
    parser.add_argument("--sessions", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="cProfile one repetition")
    args = parser.parse_args()
    messages, decisions = record(tables=args.tables, batch=args.batch, sessions=args.sessions, seed=args.seed)
    size = sum(map(len, messages))
    print(
        f"{len(messages)} messages, {decisions} decisions ({decisions / len(messages):.1f} "
        f"per message, {size / decisions:.0f} bytes per request)"
    )
    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(play, messages)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
        return
    play(messages)  # warm up: interned tables, first bots
    figures = []
    for _ in range(args.repeat):
        cpu = time.process_time()
        play(messages)
        figures.append((time.process_time() - cpu) / decisions * 1e6)
    print("CPU per decision (us): " + ", ".join(f"{us:.2f}" for us in figures) + f"; best {min(figures):.2f}")


if __name__ == "__main__":
    main()
