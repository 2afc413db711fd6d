"""A Play stream's messages: what a bot sends is read into values; the referee's replies are bytes."""

from __future__ import annotations

import pytest

from referee.match import TimeLimits
from referee.rules import PROFILES
from referee.wire import nap_pb2
from referee.wire.codec import profile_to_proto
from referee.wire.stream import (
    DECISION_KINDS,
    EMPTY_MESSAGE,
    NOT_A_BOT_MESSAGE,
    PROTOCOL_VERSION,
    Goodbye,
    Hello,
    Malformed,
    RefusalReason,
    decisions_needed,
    missing_decisions,
    read_bot_message,
    refusal_message,
    too_many_answers,
    welcome_message,
)

TOKEN = "s3cret"  # noqa: S105 - a test bot's token


def _bytes(**kind: object) -> bytes:
    return nap_pb2.BotMessage(**kind).SerializeToString()  # type: ignore[arg-type]


def _answers(count: int, *, first_id: int = 1, action: str = "pass") -> bytes:
    message = nap_pb2.BotMessage()
    for request_id in range(first_id, first_id + count):
        message.answers.answers.add(request_id=request_id, action=action)
    return message.SerializeToString()


class TestTooManyAnswers:
    """A message of more answers than the bot may hold is refused from its first bytes, unread."""

    @pytest.mark.parametrize("action", ["pass", "\n" * 5])
    def test_up_to_the_most_it_may_hold_is_read_one_more_is_refused(self, action: str) -> None:
        """Whatever bytes the actions hold (a newline is the byte that opens each answer)."""
        assert too_many_answers(_answers(4, action=action), 4) is None
        read = read_bot_message(_answers(4, action=action))
        assert isinstance(read, tuple)
        assert len(read) == 4
        refused = too_many_answers(_answers(5, action=action), 4)
        assert refused == "more than 4 answers in one message, more than it may hold"

    def test_the_answers_are_counted_over_every_field_that_holds_some(self) -> None:
        """Protobuf merges a message field written twice: three fields of two answers are six."""
        split = _answers(2) + _answers(2, first_id=3) + _answers(2, first_id=5)
        read = read_bot_message(split)
        assert isinstance(read, tuple)
        assert len(read) == 6
        assert too_many_answers(split, 6) is None
        assert too_many_answers(split, 5) is not None

    def test_what_follows_the_answer_past_the_most_is_never_read(self) -> None:
        """200,000 answers, the bytes after the fifth garbage: refused all the same, without reading them."""
        whole = _answers(200_000)
        head = nap_pb2.BotMessage()
        for request_id in range(1, 6):
            head.answers.answers.add(request_id=request_id, action="pass")
        cut = len(head.SerializeToString()) + 8  # the tag and length of the field grow with its size
        broken = whole[:cut] + b"\xff" * (len(whole) - cut)
        assert read_bot_message(broken) == Malformed(NOT_A_BOT_MESSAGE, fatal=True)
        assert too_many_answers(broken, 4) == "more than 4 answers in one message, more than it may hold"

    def test_answers_behind_more_fields_than_any_message_has_are_refused(self) -> None:
        """Fields a newer protocol might add are skipped, but no more than any message could hold."""
        unknown = bytes([5 << 3 | 0, 1])  # field 5, a varint: none of this protocol's
        assert too_many_answers(unknown * 3 + _answers(300), 256) is not None
        assert too_many_answers(unknown * 65 + _answers(300), 256) == "a message of more than 64 fields"

    def test_bytes_that_are_no_message_are_left_to_the_reader(self) -> None:
        assert too_many_answers(b"\xff" * 100_000, 4) is None
        assert too_many_answers(bytes([2 << 3 | 2, 100]), 4) is None  # a length past the end
        assert too_many_answers(b"", 4) is None


class TestDecisionKinds:
    """Which decisions beyond bids and cards a profile asks, and why a Hello's are not enough."""

    def test_what_each_profile_asks(self) -> None:
        assert decisions_needed(PROFILES["purchase"]) == ("exchange",)
        assert decisions_needed(PROFILES["ecarte"]) == ("exchange",)
        assert decisions_needed(PROFILES["peep"]) == ("peep", "widow")
        for profile in PROFILES.values():
            if not profile.has_pool:
                assert decisions_needed(profile) == ()
                assert missing_decisions(profile, ()) is None
        assert set(DECISION_KINDS) == {"exchange", "peep", "widow"}

    def test_the_detail_names_the_missing_kinds_and_the_profile(self) -> None:
        assert missing_decisions(PROFILES["peep"], ("exchange", "peep", "widow")) is None
        assert missing_decisions(PROFILES["peep"], ("exchange",)) == (
            "profile 'peep' asks peep and widow decisions, which this bot's Hello does not list "
            "(Hello.decisions: exchange)"
        )
        assert missing_decisions(PROFILES["ecarte"], ()) == (
            "profile 'ecarte' asks exchange decisions, which this bot's Hello does not list "
            "(Hello.decisions: none)"
        )


class TestReadBotMessage:
    """read_bot_message gives a Hello, the answers, a Goodbye or Malformed, and never raises."""

    @pytest.mark.parametrize(("events", "notices_in_batch"), [(True, False), (False, True), (True, True)])
    def test_a_hello_with_every_field(self, events, notices_in_batch) -> None:
        hello = nap_pb2.Hello(
            token=TOKEN,
            bot_name="greedy",
            bot_version="1.4.0",
            protocol_version=2,
            max_batch=64,
            events=events,
            notices_in_batch=notices_in_batch,
        )
        assert read_bot_message(_bytes(hello=hello)) == Hello(
            token=TOKEN,
            bot_name="greedy",
            bot_version="1.4.0",
            protocol_version=2,
            max_batch=64,
            events=events,
            notices_in_batch=notices_in_batch,
        )

    def test_a_hello_lists_the_decision_kinds_it_knows(self) -> None:
        """In the protocol's order, once each; kinds this referee does not know are dropped."""
        hello = nap_pb2.Hello(token=TOKEN, max_batch=1, decisions=["widow", "teleport", "exchange", "widow"])
        read = read_bot_message(_bytes(hello=hello))
        assert isinstance(read, Hello)
        assert read.decisions == ("exchange", "widow")

    def test_a_hello_left_at_its_defaults(self) -> None:
        """An empty Hello is still a Hello: judging its fields is the caller's business."""
        assert read_bot_message(_bytes(hello=nap_pb2.Hello())) == Hello(
            "", "", "", 0, 0, events=False, notices_in_batch=False
        )

    def test_answers_in_the_order_sent(self) -> None:
        answers = nap_pb2.Answers(
            answers=[
                nap_pb2.Answer(request_id=2**63 + 5, action="10S", think_ms=3),
                nap_pb2.Answer(request_id=1, action="pass"),
                nap_pb2.Answer(request_id=0, action=""),
                nap_pb2.Answer(request_id=7, action=" not an action "),
            ]
        )
        assert read_bot_message(_bytes(answers=answers)) == (
            (2**63 + 5, "10S"),
            (1, "pass"),
            (0, ""),
            (7, " not an action "),
        )

    def test_no_answers_at_all(self) -> None:
        assert read_bot_message(_bytes(answers=nap_pb2.Answers())) == ()

    def test_a_goodbye(self) -> None:
        assert read_bot_message(_bytes(goodbye=nap_pb2.Goodbye(reason="shutting down"))) == Goodbye(
            "shutting down"
        )
        assert read_bot_message(_bytes(goodbye=nap_pb2.Goodbye())) == Goodbye("")

    def test_an_empty_bot_message(self) -> None:
        """No kind this version knows (none at all, or a newer one's): parsed, but nothing to act on."""
        assert read_bot_message(b"") == Malformed(EMPTY_MESSAGE, fatal=False)
        from_the_future = b"\x22\x02\x08\x01"  # BotMessage field 4, which nap.v1 does not have
        assert read_bot_message(from_the_future) == Malformed("an empty BotMessage", fatal=False)

    @pytest.mark.parametrize(
        "data",
        [
            b"\xff\xff\xff",
            b"\x0a\x05\x0a\x03ab",  # a Hello cut short
            b"\x12\x06\x0a\x04\x12\x02\xff\xfe",  # an answer whose action is not UTF-8
            b"\x08",  # a tag and no value
        ],
    )
    def test_bytes_that_are_no_bot_message(self, data: bytes) -> None:
        assert read_bot_message(data) == Malformed("a message that is not a BotMessage", fatal=True)
        assert NOT_A_BOT_MESSAGE == "a message that is not a BotMessage"


class TestReplies:
    """welcome_message and refusal_message write the RefereeMessage the bot reads."""

    def test_welcome(self) -> None:
        profile = PROFILES["full-ladder"]
        data = welcome_message(
            bot_id="peel",
            profile=profile,
            time_limits=TimeLimits(decision_ms=250, session_bank_ms=4000),
            max_outstanding=32,
            server_version="nap-arena 0.1.0",
        )
        message = nap_pb2.RefereeMessage.FromString(data)
        assert message.WhichOneof("kind") == "welcome"
        assert message.welcome == nap_pb2.Welcome(
            protocol_version=PROTOCOL_VERSION,
            server_version="nap-arena 0.1.0",
            bot_id="peel",
            profile=profile_to_proto(profile),
            time_limits=nap_pb2.TimeLimits(decision_ms=250, session_bank_ms=4000),
            max_outstanding=32,
        )
        assert PROTOCOL_VERSION == 1

    def test_welcome_with_another_protocol_version(self) -> None:
        data = welcome_message(
            bot_id="b",
            profile=PROFILES["heather"],
            time_limits=TimeLimits(),
            max_outstanding=1,
            server_version="v",
            protocol_version=7,
        )
        assert nap_pb2.RefereeMessage.FromString(data).welcome.protocol_version == 7

    @pytest.mark.parametrize("reason", list(RefusalReason))
    def test_refusal(self, reason: RefusalReason) -> None:
        message = nap_pb2.RefereeMessage.FromString(refusal_message(reason, f"because {reason}"))
        assert message.WhichOneof("kind") == "refusal"
        assert nap_pb2.RefusalReason.Name(message.refusal.reason) == f"REFUSAL_REASON_{reason.name}"
        assert message.refusal.message == f"because {reason}"

    def test_every_refusal_reason_of_the_protocol_has_a_member(self) -> None:
        names = {value.name for value in nap_pb2.RefusalReason.DESCRIPTOR.values} - {
            "REFUSAL_REASON_UNSPECIFIED"
        }
        assert names == {f"REFUSAL_REASON_{reason.name}" for reason in RefusalReason}
