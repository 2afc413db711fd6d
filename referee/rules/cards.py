"""Cards of the 52-card pack and its short packs: suits, ranks and interned card values.

Every card exists once: ``Card("QH") is Card(Rank.QUEEN, Suit.HEARTS)``. Equality is
identity and hashing is by identity, which keeps hands, membership tests and sets cheap in
the inner loops of the engine and of bots' searches. Cards sort by suit (clubs, diamonds,
hearts, spades) then rank, which is the order of every legal-action tuple.

A short pack (seed 001's variation: 28 to 40 cards) is the 52-card pack with its lowest
ranks stripped: :func:`pack_of` gives it. A card keeps its ``index`` in the full pack.
"""

from __future__ import annotations

import random
from enum import IntEnum
from typing import Final, final

from referee.rules.errors import RulesError


class Suit(IntEnum):
    """A suit; ``str()`` is its letter, ``symbol`` its sign."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3

    def __str__(self) -> str:
        return "CDHS"[self]

    @property
    def letter(self) -> str:
        """One letter: C, D, H or S."""
        return "CDHS"[self]

    @property
    def symbol(self) -> str:
        """The suit's sign: ♣ ♦ ♥ ♠."""
        return "♣♦♥♠"[self]

    @property
    def noun(self) -> str:
        """Lower-case English name, as used in error messages ("must follow suit: hearts")."""
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Suit:
        """Read a suit from its letter (``"H"``) or name (``"hearts"``), any case."""
        key = text.strip().upper()
        if len(key) == 1 and key in "CDHS":
            return cls("CDHS".index(key))
        try:
            return cls[key]
        except KeyError:
            msg = f"not a suit: {text!r}"
            raise RulesError(msg) from None


class Rank(IntEnum):
    """A rank; the value is its strength in play (Ace high, 14)."""

    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14

    def __str__(self) -> str:
        return _RANK_TEXT[self]

    @property
    def draw_value(self) -> int:
        """Value when drawing for first dealer with Ace low (Ace 1, King 13)."""
        return 1 if self is Rank.ACE else int(self)


_RANK_TEXT: Final = {
    Rank(value): text
    for value, text in zip(
        range(2, 15),
        ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"],
        strict=True,
    )
}
_RANK_OF_TEXT: Final = {text: rank for rank, text in _RANK_TEXT.items()}


@final
class Card:
    """One card of the pack, interned: build it from text (``Card("10S")``) or parts.

    ``index`` is the card's position in the sorted pack (0 = 2 of clubs, 51 = Ace of
    spades); it orders cards and names them compactly.
    """

    __slots__ = ("index", "rank", "suit", "text")
    index: int
    rank: Rank
    suit: Suit
    text: str

    def __new__(cls, rank_or_text: Rank | str, suit: Suit | None = None) -> Card:
        """Return the interned card named by text, or by a rank and a suit."""
        if suit is None:
            if not isinstance(rank_or_text, str):
                msg = "Card() takes a text such as 'QH', or a rank and a suit"
                raise TypeError(msg)
            return parse_card(rank_or_text)
        return CARDS[suit * 13 + int(rank_or_text) - 2]

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Card({self.text!r})"

    def __reduce__(self) -> tuple[type[Card], tuple[str]]:
        return (Card, (self.text,))

    def __lt__(self, other: Card) -> bool:
        return self.index < other.index

    def __le__(self, other: Card) -> bool:
        return self.index <= other.index

    def __gt__(self, other: Card) -> bool:
        return self.index > other.index

    def __ge__(self, other: Card) -> bool:
        return self.index >= other.index

    def __setattr__(self, name: str, value: object) -> None:
        msg = "cards are immutable"
        raise AttributeError(msg)

    @property
    def pretty(self) -> str:
        """Rank and suit sign, for people: ``Q♥``."""
        return f"{self.rank}{self.suit.symbol}"


def _make_card(index: int) -> Card:
    card = object.__new__(Card)
    suit, rank = Suit(index // 13), Rank(index % 13 + 2)
    object.__setattr__(card, "index", index)
    object.__setattr__(card, "rank", rank)
    object.__setattr__(card, "suit", suit)
    object.__setattr__(card, "text", f"{rank}{suit}")
    return card


CARDS: Final[tuple[Card, ...]] = tuple(_make_card(index) for index in range(52))
"""The whole pack in sorted order (by suit, then rank)."""

_CARD_OF_TEXT: Final = {card.text: card for card in CARDS}

_PACKS: Final = {
    4 * ranks: tuple(card for card in CARDS if card.rank > Rank.ACE - ranks) for ranks in range(1, 13)
}
_PACKS[52] = CARDS


def pack_of(size: int) -> tuple[Card, ...]:
    """The pack of ``size`` cards in sorted order: the 52-card pack with its lowest ranks stripped.

    ``size`` is a multiple of 4 (whole ranks go): 32 is Ace down to 7, 28 Ace down to 8,
    52 the whole pack (``CARDS`` itself). ValueError for any other size.
    """
    found = _PACKS.get(size)
    if found is None:
        msg = f"no {size}-card pack: a pack strips whole ranks, so its size is a multiple of 4 up to 52"
        raise ValueError(msg)
    return found


def parse_card(text: str) -> Card:
    """Read a card from its text (``"QH"``, ``"10s"``, ``"q♥"``); RulesError if it is none."""
    key = text.strip().upper()
    card = _CARD_OF_TEXT.get(key)
    if card is not None:
        return card
    if key and key[-1] in "♣♦♥♠":
        key = key[:-1] + "CDHS"["♣♦♥♠".index(key[-1])]
        card = _CARD_OF_TEXT.get(key)
        if card is not None:
            return card
    msg = f"not a card: {text!r} (write rank then suit, e.g. QH, 10S, 2C)"
    raise RulesError(msg)


def shuffled_deck(seed: int | str, pack: tuple[Card, ...] = CARDS) -> tuple[Card, ...]:
    """``pack`` (the 52 cards by default) shuffled by a private generator seeded with ``seed``.

    Same seed and pack, same order: ``random.Random`` with an int or str seed is stable
    across Python versions and platforms, so a record holding only the seed would also
    replay; records keep the whole order anyway, so nothing depends on that.
    """
    deck = list(pack)
    random.Random(seed).shuffle(deck)
    return tuple(deck)


def cards_text(cards: tuple[Card, ...] | list[Card]) -> str:
    """Cards as space-separated text: ``"QH 10S 2C"``."""
    return " ".join(card.text for card in cards)


def parse_cards(text: str) -> tuple[Card, ...]:
    """Read space-separated cards."""
    return tuple(parse_card(part) for part in text.split())
