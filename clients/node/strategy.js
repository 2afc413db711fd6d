'use strict';
/**
 * The Node.js example bot's decisions: pure functions of one decision request.
 *
 * A request is the nap.v1 DecisionRequest as @grpc/proto-loader decodes it with
 * `keepCase: true`: snake_case fields, cards as strings ("QH", "10S"), the seat's `view`
 * and its `legal_actions`. Every function here answers one of the legal actions.
 *
 * The policy, a little better than random:
 *   - bidding: bid Three with three or more cards of one suit headed by its Ace, else pass;
 *   - leading: the highest card of the longest suit (the declarer prefers trumps, so its
 *     first lead names the longest suit as trump);
 *   - following: the lowest card that takes the trick, unless a fellow defender is
 *     already winning it; otherwise the lowest card, keeping trumps;
 *   - misère: the declarer plays the highest card that loses the trick, else its lowest;
 *   - the pool variants (profiles "purchase", "ecarte", "peep"): declines every decision
 *     they add: "exchange:none" in the exchange round, never "peep", "widow:none".
 */

const RANKS = { A: 14, K: 13, Q: 12, J: 11 };

/** The rank of a card string as a number, 2 .. 14 (Ace high). */
function rank(card) {
  const text = card.slice(0, -1);
  return RANKS[text] || Number(text);
}

/** The suit letter of a card string ("C", "D", "H" or "S"). */
function suit(card) {
  return card.slice(-1);
}

/** Cards from lowest to highest (rank, then suit letter), as a new array. */
function ascending(cards) {
  return [...cards].sort((a, b) => rank(a) - rank(b) || suit(a).localeCompare(suit(b)));
}

/** Whether `card` beats `best` in a trick whose led suit is `led`, with `trump` ("" for none). */
function beats(card, best, led, trump) {
  if (suit(card) === suit(best)) return rank(card) > rank(best);
  if (trump && suit(card) === trump) return true;
  return false;
}

/** The seat and card winning the trick so far, or null when no card has been played. */
function winning(trick, trump) {
  const cards = (trick && trick.cards) || [];
  if (cards.length === 0) return null;
  const led = suit(cards[0].card);
  let best = cards[0];
  for (const played of cards.slice(1)) {
    if (beats(played.card, best.card, led, trump)) best = played;
  }
  return best;
}

/** The suits of `hand` grouped: suit letter -> its cards. */
function bySuit(hand) {
  const groups = {};
  for (const card of hand) (groups[suit(card)] = groups[suit(card)] || []).push(card);
  return groups;
}

/** The bid: Three with a suit of three or more headed by the Ace, else pass (never a peep). */
function chooseBid(view, legal) {
  const strong = Object.values(bySuit(view.hand)).some(
    (cards) => cards.length >= 3 && cards.some((card) => rank(card) === 14),
  );
  if (strong && legal.includes('three')) return 'three';
  if (legal.includes('pass')) return 'pass';
  return legal.find((action) => action !== 'peep') || legal[0];
}

/** Declining, which is always legal where it is offered (the exchange round, the widow). */
function decline(legal, declining) {
  return legal.includes(declining) ? declining : legal[0];
}

/** The lead: the highest card of the longest suit among the legal cards (trumps first for the declarer). */
function chooseLead(view, legal) {
  const groups = bySuit(legal);
  const isDeclarer = view.declarer === view.seat;
  if (isDeclarer && view.contract === 'misere') return ascending(legal)[0];
  if (isDeclarer && view.trump && groups[view.trump]) return ascending(groups[view.trump]).pop();
  const longest = Object.values(groups).sort(
    (a, b) => b.length - a.length || Math.max(...b.map(rank)) - Math.max(...a.map(rank)),
  )[0];
  return ascending(longest).pop();
}

/** A card to follow with, given the trick so far. */
function chooseFollow(view, legal) {
  const trump = view.trump || '';
  const trick = view.current_trick;
  const led = suit(trick.cards[0].card);
  const best = winning(trick, trump);
  const low = ascending(legal);
  const winners = low.filter((card) => beats(card, best.card, led, trump));
  const isDeclarer = view.declarer === view.seat;
  if (view.contract === 'misere') {
    if (!isDeclarer) return low[0];
    const losers = low.filter((card) => !beats(card, best.card, led, trump));
    return losers.length ? losers[losers.length - 1] : low[0];
  }
  const partnerWinning = !isDeclarer && best.seat !== view.declarer;
  if (winners.length && !partnerWinning) return winners[0];
  const keep = low.filter((card) => suit(card) !== trump);
  return keep.length ? keep[0] : low[0];
}

/** The action for one decision request: always one of `request.legal_actions`. */
function decide(request) {
  const legal = request.legal_actions;
  const view = request.view;
  let action;
  try {
    if (view.phase === 'PHASE_BIDDING') {
      action = chooseBid(view, legal);
    } else if (view.phase === 'PHASE_EXCHANGE') {
      action = decline(legal, 'exchange:none');
    } else if (view.phase === 'PHASE_WIDOW') {
      action = decline(legal, 'widow:none');
    } else {
      const cards = legal.filter((text) => /^(10|[2-9AKQJ])[CDHS]$/.test(text));
      const trick = view.current_trick;
      if (!cards.length) action = legal[0];
      else if (!trick || !trick.cards || trick.cards.length === 0) action = chooseLead(view, cards);
      else action = chooseFollow(view, cards);
    }
  } catch (err) {
    process.stderr.write(`strategy failed (${err && err.message}); answering the first legal action\n`);
    action = legal[0];
  }
  return legal.includes(action) ? action : legal[0];
}

module.exports = { decide, chooseBid, chooseLead, chooseFollow, rank, suit, beats, winning };
