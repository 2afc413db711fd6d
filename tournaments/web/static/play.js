// nap play: the person's table. Everything shown comes from the seat's snapshots
// ({"type": "table", ...}), built by the server from what the referee told this seat.
// Clicks go back as {"type": "act", "request": id, "action": text}.
"use strict";

const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
const $ = (id) => document.getElementById(id);
const PROMPTS = {
  bidding: "Your bid", play: "Your card", exchange: "Exchange cards, or keep your hand",
  widow: "Take the widow for a card of yours, or leave it",
};
let socket = null;
let hello = null;
let table = null;
let deadline = null; // performance.now() at which the pending decision's clock runs out
let sent = false; // an answer is on its way: nothing more is clickable until the next snapshot
let selected = new Set(); // cards picked for an exchange
let ended = false;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("data-") || key.startsWith("aria-") || key === "title" || key === "type") node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) node.append(child);
  return node;
}

function cardFace(text, tag, attrs) {
  const suit = text.slice(-1);
  const rank = text.slice(0, -1);
  const red = suit === "H" || suit === "D";
  return el(tag || "div", { class: "card" + (red ? " red" : ""), "data-card": text, title: text, ...(attrs || {}) },
    el("span", { class: "rank" }, rank), el("span", { class: "suit" }, SUITS[suit] || suit));
}

function nameOf(seat) {
  return seat === table.seat ? "You" : table.names[seat] || "seat " + seat;
}

function notice(text, bad) {
  const box = $("notice");
  box.textContent = text;
  box.className = bad ? "bad" : "";
  box.hidden = !text;
}

function send(request, action) {
  if (sent || !socket || socket.readyState !== WebSocket.OPEN) return;
  sent = true;
  socket.send(JSON.stringify({ type: "act", request: request, action: action }));
  render();
}

function auction() {
  return table.phase === "bidding" || table.phase === "exchange";
}

function lastBid(seat) {
  let found = null;
  for (const [who, label] of table.bids) if (who === seat) found = label;
  return found;
}

function seatPanel(seat, mine) {
  const inPlay = table.in_play.includes(seat);
  const badges = [];
  if (seat === table.dealer) badges.push(el("span", { class: "badge" }, "dealer"));
  if (seat === table.declarer) badges.push(el("span", { class: "badge declarer" }, auction() ? "high bid" : "declarer"));
  if (table.peeked.includes(seat)) badges.push(el("span", { class: "badge" }, "peeped"));
  if (table.exchanged[seat]) badges.push(el("span", { class: "badge" }, "exchanged " + table.exchanged[seat]));
  const bid = lastBid(seat);
  const facts = [
    "chips " + (table.balances[seat] > 0 ? "+" : "") + table.balances[seat],
    "tricks " + table.tricks_won[seat],
  ];
  if (bid) facts.push("bid " + bid);
  if (!inPlay) facts.push("sits out");
  const acting = mine && table.decision;
  return el("div", { class: "panel" + (acting ? " acting" : ""), "data-seat": seat },
    el("div", { class: "name" }, (mine ? hello.name + " (you)" : table.names[seat]) + " \u00b7 seat " + seat, ...badges),
    el("div", { class: "facts" }, facts.join(" \u00b7 ")));
}

function renderOpponents() {
  const box = $("opponents");
  box.replaceChildren();
  const size = table.names.length;
  for (let step = 1; step < size; step++) box.append(seatPanel((table.seat + step) % size, false));
  $("mine").replaceWith(Object.assign(seatPanel(table.seat, true), { id: "mine" }));
}

function renderCentre() {
  const parts = [];
  if (auction()) parts.push(table.contract === null ? "Bidding: no bid yet" : "Bidding: " + nameOf(table.declarer) + " holds " + table.contract);
  else if (table.contract !== null) parts.push(nameOf(table.declarer) + " declared " + table.contract);
  if (table.trump) parts.push("trump " + SUITS[table.trump]);
  if (table.has_pool) parts.push("pool " + table.pool);
  $("contract").textContent = parts.join(" \u00b7 ") || "\u00a0";
  const trick = $("trick");
  trick.replaceChildren();
  for (const [seat, card] of table.trick) trick.append(el("div", { class: "played" }, cardFace(card), nameOf(seat)));
  const last = $("lasttrick");
  last.replaceChildren();
  if (table.last_trick) {
    last.append(el("div", {}, "Trick " + (table.last_trick.number + 1) + " to " + nameOf(table.last_trick.winner)));
    const row = el("div", {});
    for (const [, card] of table.last_trick.plays) row.append(cardFace(card));
    last.append(row);
  }
  const widow = $("widow");
  widow.replaceChildren();
  if (table.widow) widow.append("Widow: ", cardFace(table.widow));
}

function renderActions() {
  const decision = table.decision;
  const actions = $("actions");
  actions.replaceChildren();
  const legalCards = new Map();
  if (decision) {
    const exchanges = decision.actions.filter((a) => a.kind === "exchange");
    for (const action of decision.actions) {
      if (action.kind === "card") { legalCards.set(action.cards[0], action); continue; }
      if (action.kind === "exchange" && action.cards.length) continue; // made by picking cards, below
      actions.append(el("button", { type: "button", "data-action": action.action, disabled: sent },
        action.label));
      actions.lastChild.addEventListener("click", () => send(decision.request, action.action));
    }
    if (exchanges.some((a) => a.cards.length)) {
      const key = [...selected].sort().join(",");
      const match = exchanges.find((a) => a.cards.length && [...a.cards].sort().join(",") === key);
      const button = el("button", { type: "button", "data-action": match ? match.action : null, disabled: sent || !match },
        selected.size ? "Exchange the " + selected.size + " picked" : "Pick cards to exchange");
      if (match) button.addEventListener("click", () => send(decision.request, match.action));
      actions.append(button);
    }
  }
  const hand = $("hand");
  hand.replaceChildren();
  const exchanging = decision && decision.phase === "exchange";
  for (const card of table.hand) {
    const action = legalCards.get(card);
    const attrs = { type: "button", disabled: sent || !(action || exchanging) };
    if (action) attrs["data-action"] = action.action;
    if (exchanging) attrs["aria-pressed"] = selected.has(card) ? "true" : "false";
    const face = cardFace(card, "button", attrs);
    if (action) { face.classList.add("legal"); face.addEventListener("click", () => send(decision.request, action.action)); }
    if (exchanging) face.addEventListener("click", () => { selected.has(card) ? selected.delete(card) : selected.add(card); render(); });
    hand.append(face);
  }
}

function renderSettled() {
  const box = $("settled");
  const settled = table.settled;
  const over = table.over;
  if (!settled && !over) { box.hidden = true; return; }
  box.hidden = false;
  box.replaceChildren();
  if (settled) {
    const title = settled.declarer === null ? "Deal " + (settled.deal + 1) + ": no contract"
      : "Deal " + (settled.deal + 1) + ": " + nameOf(settled.declarer) + " " + (settled.made ? "made " : "failed ") +
        settled.contract + " with " + settled.tricks + " tricks";
    box.append(el("h2", {}, title));
    const rows = el("tbody", {});
    settled.payments.forEach((paid, seat) => rows.append(el("tr", { "data-seat": seat },
      el("td", {}, nameOf(seat)), el("td", {}, (paid > 0 ? "+" : "") + paid), el("td", {}, String(table.balances[seat])))));
    box.append(el("table", {}, el("thead", {}, el("tr", {}, el("th", {}, "seat"), el("th", {}, "that deal"),
      el("th", {}, "balance now"))), rows));
  }
  if (over) box.append(el("p", { id: "sessionover" }, "Session over: " + over.winners.map(nameOf).join(", ") +
    (over.winners.length === 1 ? " wins." : " win.")));
}

function renderLog() {
  const log = $("log");
  log.replaceChildren(...table.log.map((line) => el("li", {}, line)));
  const box = $("logbox");
  box.scrollTop = box.scrollHeight;
}

function render() {
  if (!table || !hello) return;
  $("where").textContent = "Session " + table.session + " of " + table.sessions + " \u00b7 deal " +
    (table.deal + 1) + " of " + table.deals + " \u00b7 " + hello.profile + " \u00b7 " + table.phase;
  document.body.dataset.session = String(table.session);
  document.body.dataset.deal = String(table.deal);
  document.body.dataset.played = String(table.played);
  document.body.dataset.phase = table.phase;
  document.body.dataset.deciding = table.decision && !sent ? "yes" : "no";
  document.body.dataset.request = table.decision ? String(table.decision.request) : "";
  renderOpponents();
  renderCentre();
  renderActions();
  renderSettled();
  renderLog();
  $("clock").hidden = !table.decision;
}

function tick() {
  if (ended || !table || !table.decision || deadline === null) return;
  const left = Math.max(0, deadline - performance.now());
  const total = table.decision.deadline_ms;
  $("clockfill").style.width = (100 * left / total).toFixed(1) + "%";
  $("clock").classList.toggle("urgent", left < Math.min(10000, total / 4));
  const prompt = PROMPTS[table.decision.phase] || "Your turn";
  $("clocktext").textContent = left > 0 ? prompt + ": " + (left / 1000).toFixed(1) + " s left." : "Time is up: the referee decides for you.";
}

// Nothing more comes to this tab: no decision is pending, so no clock runs and nothing is clickable.
function end() {
  ended = true;
  deadline = null;
  if (table) table.decision = null;
  render();
}

function onMessage(message) {
  if (message.type === "hello") {
    hello = message;
    $("who").textContent = "\u00b7 " + message.name + " at seat " + message.seat;
    $("policy").textContent = message.policy;
    if (!table) $("where").textContent = "Waiting for the first deal\u2026";
  } else if (message.type === "table") {
    const request = table && table.decision ? table.decision.request : null;
    table = message;
    sent = false;
    if (!message.decision || message.decision.request !== request) selected = new Set();
    deadline = message.decision ? performance.now() + message.decision.remaining_ms : null;
    render();
    tick();
  } else if (message.type === "refused") {
    sent = false;
    notice(message.message, true);
    render();
  } else if (message.type === "replaced") {
    end();
    notice(message.message, true);
    document.body.dataset.ended = "replaced";
  } else if (message.type === "stored") {
    notice("Session " + message.played + " of " + message.sessions + " stored (session " + message.session_id + ").", false);
  } else if (message.type === "done") {
    end();
    document.body.dataset.ended = "done";
    notice(message.left ? "You left the table: the rest of that session was played by the fault policy and stored. You can close this tab."
      : "All sessions played and stored (" + message.sessions.join(", ") + "). You can close this tab.", false);
  }
}

function connect() {
  const address = new URL("ws", window.location.href);
  address.protocol = address.protocol === "https:" ? "wss:" : "ws:";
  socket = new WebSocket(address.href);
  socket.addEventListener("message", (event) => onMessage(JSON.parse(event.data)));
  socket.addEventListener("close", () => {
    if (!ended) notice("The connection to nap is closed (the command ended or was stopped).", true);
    document.body.dataset.closed = "yes";
  });
}

document.addEventListener("keydown", (event) => {
  if (!table || !table.decision || sent || event.altKey || event.ctrlKey || event.metaKey) return;
  const cards = [...document.querySelectorAll("#hand .card.legal:not(:disabled)")];
  const digit = Number.parseInt(event.key, 10);
  if (digit >= 1 && digit <= 9) {
    const choices = cards.length ? cards : [...document.querySelectorAll("#actions button:not(:disabled)")];
    if (choices[digit - 1]) { choices[digit - 1].click(); event.preventDefault(); }
  } else if ((event.key === "ArrowLeft" || event.key === "ArrowRight") && cards.length) {
    const at = cards.indexOf(document.activeElement);
    const next = at < 0 ? 0 : (at + (event.key === "ArrowRight" ? 1 : cards.length - 1)) % cards.length;
    cards[next].focus();
    event.preventDefault();
  }
});

setInterval(tick, 100);
connect();
