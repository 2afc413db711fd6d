// The watch page: one WebSocket brings the run's status and the followed table's public events.
// Every text is set with textContent (bot names are the user's own words, never markup).
"use strict";

const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
// chosen: the person picked a table (else the first in play is followed, and the next once it ends)
const state = { followed: null, label: "", chosen: false, events: 0, deals: [], bots: [], over: null, overAt: 0, tables: new Map(), socket: null };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) node.append(child);
  return node;
}

function cardNode(card, deal, seat) {
  const suit = card.slice(-1);
  const red = suit === "H" || suit === "D";
  return el("span", { class: red ? "card red" : "card", "data-card": card, "data-deal": String(deal), "data-seat": String(seat), title: card },
    card.slice(0, -1) + SUITS[suit]);
}

function seatName(seat) {
  const bot = state.bots[seat];
  return bot === undefined ? `seat ${seat}` : `${seat}: ${bot}`;
}

function signed(value) {
  return value > 0 ? `+${value}` : String(value);
}

// -- the status: progress, standings, faults, tables --------------------------------------------

function showStatus(status) {
  const title = document.getElementById("title");
  title.textContent = status.name ? `Tournament ${status.tournament}: ${status.name}` : "Nap Arena";
  const stateNode = document.getElementById("state");
  stateNode.dataset.state = status.state;
  stateNode.textContent = {
    starting: "starting…",
    playing: "playing",
    finished: "finished: this page no longer changes",
    stopped: `stopped; to play the rest: ${status.resume || "nap tournament resume"}`,
  }[status.state] || status.state;
  const share = status.total ? (100 * status.done) / status.total : 0;
  document.getElementById("bar").style.width = `${share.toFixed(1)}%`;
  const rate = status.rate === null ? "" : `, ${status.rate.toFixed(1)} sessions/s`;
  const progress = document.getElementById("progress");
  progress.textContent = `${status.done} / ${status.total} sessions${rate}`;
  progress.dataset.done = String(status.done);
  progress.dataset.total = String(status.total);
  showStandings(status.standings);
  showFaults(status.faults);
  showTables(status.tables, status.tables_unavailable);
}

// Each cell carries its column's header (data-label): a narrow page shows a bot's figures
// one under the other, each named, instead of cutting the table's columns (watch.css).
function showStandings(standings) {
  if (!standings) return;
  const labels = [...document.querySelectorAll("#standings thead th")].map((th) => th.textContent);
  const cell = (index, text, num) => el("td", { class: num ? "num" : "", "data-label": labels[index] }, text);
  const body = document.querySelector("#standings tbody");
  body.replaceChildren(...standings.bots.map((line) => el("tr", { "data-bot": line.bot, "data-sessions": String(line.sessions), "data-chips": String(line.chips_mean) },
    cell(0, line.rank), cell(1, line.bot), cell(2, String(line.sessions), true),
    cell(3, line.chips, true), cell(4, line.win_share, true),
    cell(5, line.los_next, true), cell(6, String(line.faults), true),
    cell(7, line.rating, true))));
}

function showFaults(faults) {
  document.getElementById("fault-total").textContent = String(faults.total);
  const counts = document.getElementById("fault-counts");
  counts.replaceChildren(...faults.by_bot.map((item) => el("li", {}, `${item.bot}: ${item.count} ${item.kind}`)));
  if (!faults.by_bot.length) counts.replaceChildren(el("li", {}, "none so far"));
  const latest = document.getElementById("fault-latest");
  latest.replaceChildren(...faults.latest.slice().reverse().map((fault) =>
    el("li", {}, `${fault.bot} ${fault.kind}, block ${fault.block} r${fault.rotation}` + (fault.deal >= 0 ? ` deal ${fault.deal + 1}` : "") + (fault.detail ? `: ${fault.detail}` : ""))));
}

function tableLabel(table) {
  return `block ${table.block} r${table.rotation}: ${table.bots.join(", ")}`;
}

function showTables(tables, unavailable) {
  const note = document.getElementById("tables-note");
  note.hidden = !unavailable;
  note.textContent = unavailable || "";
  document.getElementById("table-count").textContent = String(tables.length);
  state.tables = new Map(tables.map((table) => [table.table, table]));
  const select = document.getElementById("tables");
  const options = tables.map((table) => el("option", { value: table.table }, tableLabel(table)));
  if (state.followed !== null && !state.tables.has(state.followed)) {
    options.unshift(el("option", { value: state.followed }, `${state.label} (ended)`));
  }
  if (!options.length) options.push(el("option", { value: "" }, "no table in play"));
  select.replaceChildren(...options);
  select.value = state.followed || "";
  const idle = state.followed === null || (state.over !== null && Date.now() - state.overAt > 4000);
  if (!state.chosen && idle && tables.length && tables[0].table !== state.followed) follow(tables[0]);
}

// -- the followed table --------------------------------------------------------------------------

function follow(table) {
  state.followed = table.table;
  state.events = 0;
  state.deals = [];
  state.over = null;
  state.bots = table.bots;
  state.label = tableLabel(table);
  document.getElementById("table-title").textContent = `Block ${table.block}, rotation ${table.rotation} (table ${table.table})`;
  document.getElementById("tables").value = table.table;
  const table_ = document.getElementById("table");
  table_.dataset.table = table.table;
  table_.dataset.block = String(table.block);
  table_.dataset.rotation = String(table.rotation);
  table_.dataset.over = "false";
  if (state.socket && state.socket.readyState === WebSocket.OPEN) state.socket.send(JSON.stringify({ follow: table.table }));
  renderTable();
}

function apply(event) {
  const deal = state.deals[state.deals.length - 1];
  switch (event.kind) {
    case "DealStarted":
      state.deals.push({ number: event.deal, dealer: event.dealer, seats: event.seats, bids: [], notes: [], tricks: [], current: [], trump: null, declarer: null, contract: null, allPassed: false, settled: null });
      break;
    case "BidMade": deal.bids.push(event); break;
    case "AuctionWon": deal.declarer = event.declarer; deal.contract = event.contract; break;
    case "AllPassed": deal.allPassed = true; break;
    case "CardPlayed": deal.current.push([event.seat, event.card]); break;
    case "TrumpChosen": deal.trump = event.suit; break;
    case "TrickWon": deal.tricks.push(event); deal.current = []; break;
    case "DealSettled": deal.settled = event; break;
    case "Penalized": deal.notes.push(`${seatName(event.seat)} faulted: the deal stops, settled as a revoke`); break;
    case "CardsExchanged": deal.notes.push(`${seatName(event.seat)} exchanged ${event.count} card(s)`); break;
    case "WidowPeeked": deal.notes.push(`${seatName(event.seat)} peeked at the widow`); break;
    case "WidowTaken": deal.notes.push(`${seatName(event.seat)} ${event.taken ? "took" : "declined"} the widow`); break;
    case "ChipsPaid": deal.notes.push(`${seatName(event.seat)} paid ${event.amount} into the pool`); break;
    case "PoolClaimed": deal.notes.push(`${seatName(event.seat)} took the pool: ${event.amount}`); break;
    case "PoolReturned": if (deal) deal.notes.push(`pool returned: ${event.refunds.join(", ")}`); break;
    case "SeatEliminated": deal.notes.push(`${seatName(event.seat)} is out of chips`); break;
    case "SeatRebought": deal.notes.push(`${seatName(event.seat)} staked ${event.chips} again`); break;
    case "SessionOver": state.over = event; state.overAt = Date.now(); break;
    default: break;
  }
}

function trickRow(label, plays, deal, winner) {
  return el("div", { class: "trick" }, el("span", { class: "label" }, label),
    ...plays.map(([seat, card]) => el("span", { class: seat === winner ? "play won" : "play" }, cardNode(card, deal, seat), el("small", {}, String(seat)))));
}

function dealNode(deal) {
  const node = el("div", { class: deal.settled ? "deal over" : "deal", "data-deal": String(deal.number) });
  node.append(el("h3", {}, `Deal ${deal.number + 1}, dealer ${seatName(deal.dealer)}` + (deal.trump ? `, trumps ${SUITS[deal.trump]}` : "")));
  if (deal.notes.length) node.append(el("p", { class: "notes" }, deal.notes.join("; ")));
  node.append(el("p", { class: "bids" }, "Bids: " + (deal.bids.map((bid) => `${seatName(bid.seat)} ${bid.bid}`).join(", ") || "none yet")));
  if (deal.contract) node.append(el("p", { class: "bids" }, `Declarer ${seatName(deal.declarer)}: ${deal.contract}`));
  if (deal.allPassed) node.append(el("p", { class: "bids" }, "All passed: the deal scores zero"));
  deal.tricks.forEach((trick) => node.append(trickRow(`trick ${trick.number + 1}`, trick.plays, deal.number, trick.winner)));
  if (deal.current.length) node.append(trickRow("playing", deal.current, deal.number, null));
  const settled = deal.settled;
  if (settled) {
    const what = settled.contract === null ? "no contract" : `${settled.contract} ${settled.made ? "made" : "failed"} with ${settled.tricks} trick(s)`;
    node.append(el("p", { class: "settled" }, `Settled: ${what}; chips ${settled.payments.map(signed).join(" / ")}`));
  }
  return node;
}

function renderTable() {
  const seats = document.getElementById("seats");
  const totals = state.bots.map(() => 0);
  for (const deal of state.deals) if (deal.settled) deal.settled.payments.forEach((chips, seat) => { totals[seat] += chips; });
  const balances = state.over ? state.over.balances : totals;
  seats.replaceChildren(...state.bots.map((bot, seat) => el("span", { class: "seat" }, `${seat}: ${bot} `, el("b", {}, signed(balances[seat])))));
  const table = document.getElementById("table");
  const nodes = state.deals.slice().reverse().map(dealNode);
  if (state.over) {
    const winners = state.over.winners.map(seatName).join(", ");
    nodes.unshift(el("p", { class: "session-over" }, `Session over: won by ${winners}`));
  }
  table.replaceChildren(...nodes);
  table.dataset.over = String(state.over !== null);
  table.dataset.events = String(state.events);
}

function showTable(message) {
  if (message.table !== state.followed) return;
  if (message.gone) {
    document.getElementById("table-title").textContent += " (no longer in play)";
    if (!state.chosen) state.followed = null; // the next status follows another
    return;
  }
  if (message.since !== state.events) return; // a stale answer: the next one starts where this page is
  for (const event of message.events) apply(event);
  state.events += message.events.length;
  if (message.over && state.over === null) state.over = { balances: [], winners: [] };
  if (message.over) state.overAt = Date.now();
  renderTable();
}

// -- the connection ------------------------------------------------------------------------------

function connect() {
  const url = new URL("ws", window.location.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  const socket = new WebSocket(url);
  state.socket = socket;
  socket.addEventListener("open", () => {
    if (state.followed !== null) socket.send(JSON.stringify({ follow: state.followed }));
  });
  socket.addEventListener("message", (message) => {
    const data = JSON.parse(message.data);
    if (data.type === "status") showStatus(data);
    else if (data.type === "table") showTable(data);
  });
  socket.addEventListener("close", () => {
    const node = document.getElementById("state");
    if (node.dataset.state === "playing" || node.dataset.state === "starting") {
      node.dataset.state = "disconnected";
      node.textContent = "disconnected: the run has ended or its page was stopped";
    }
  });
}

document.getElementById("tables").addEventListener("change", (change) => {
  const table = state.tables.get(change.target.value);
  if (table === undefined) return;
  state.chosen = true;
  follow(table);
});

connect();
