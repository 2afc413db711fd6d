"""The replay page's HTML, CSS and script, with ``@@TITLE@@``, ``@@DATA_ID@@`` and ``@@DATA@@`` holes.

The script only draws the steps that :mod:`tournaments.replay_page` embeds; it never works
out a rule. It loads nothing from the network. Every card it draws carries
``data-card="QH"``, every hand ``class="hand" data-seat="N"``, and a hidden card is a back
(``class="card back"``) with no ``data-card``, so tests can read what a view shows.
"""

from typing import Final

TEMPLATE: Final = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>@@TITLE@@</title>
<style>
  body { font-family: system-ui, sans-serif; margin: 0; background: #f3f1ea; color: #222; }
  header { background: #1f4d2c; color: #fff; padding: .6em 1em; }
  header h1 { font-size: 1.2em; margin: 0 0 .4em 0; }
  .controls { display: flex; flex-wrap: wrap; gap: .5em; align-items: center; }
  .controls button, .controls select { font-size: 1em; }
  #caption { padding: .5em 1em; background: #fff8d8; border-bottom: 1px solid #ddd; min-height: 1.3em; }
  main { display: grid; grid-template-columns: 2fr 1fr; gap: 1em; padding: 1em; }
  .seats { display: grid; grid-template-columns: repeat(auto-fill, minmax(15em, 1fr)); gap: .7em;
           align-content: start; align-items: start; }
  .panel { background: #fff; border: 1px solid #ccc; border-radius: 6px; padding: .5em .7em; }
  .panel.to-act { border: 2px solid #d08a00; }
  .panel.out { opacity: .5; }
  .panel h2 { font-size: 1em; margin: 0 0 .3em 0; }
  .badge { font-size: .75em; background: #e4e4e4; border-radius: 3px; padding: 0 .3em; margin-left: .3em; }
  .badge.declarer { background: #f7c948; }
  .stats { font-size: .85em; color: #555; margin-bottom: .3em; }
  .hand, .cards { display: flex; flex-wrap: wrap; gap: .25em; min-height: 2.4em; }
  .card { display: inline-block; min-width: 2.2em; padding: .35em .2em; text-align: center;
          border: 1px solid #999; border-radius: 4px; background: #fff; font-weight: 600; }
  .card.red { color: #c0142c; }
  .card.back { background: repeating-linear-gradient(45deg, #2d5fa3, #2d5fa3 4px, #4a7bc4 4px, #4a7bc4 8px);
               min-width: 1.6em; min-height: 1.3em; }
  .card.legal { outline: 2px solid #d08a00; }
  .play { display: inline-flex; flex-direction: column; align-items: center; font-size: .8em; }
  .side h3 { font-size: 1em; margin: .6em 0 .3em 0; }
  .side ol, .side ul { margin: 0; padding-left: 1.4em; }
  .side li { margin: .15em 0; }
  .winner { font-weight: 600; }
  table.balances td { padding: 0 .5em; text-align: right; }
</style>
</head>
<body>
<header>
  <h1>@@TITLE@@</h1>
  <div class="controls">
    <label>Deal <select id="deal"></select></label>
    <label>View <select id="view"></select></label>
    <button id="first" title="start of the deal">&laquo; start</button>
    <button id="back" title="back (left arrow)">&#x25C0;</button>
    <span id="position"></span>
    <button id="forward" title="forward (right arrow)">&#x25B6;</button>
    <button id="last" title="end of the deal">end &raquo;</button>
  </div>
</header>
<div id="caption"></div>
<main>
  <section class="seats" id="seats"></section>
  <section class="side panel">
    <div id="contract"></div>
    <h3>Current trick</h3><div class="cards" id="trick"></div>
    <h3>Bids</h3><ol id="bids"></ol>
    <h3>Tricks</h3><ol id="tricks"></ol>
    <div id="settled"></div>
    <h3>Balances</h3><table class="balances" id="balances"></table>
  </section>
</main>
<script type="application/json" id="@@DATA_ID@@">@@DATA@@</script>
<script>
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("@@DATA_ID@@").textContent);
  const SUITS = { C: "\\u2663", D: "\\u2666", H: "\\u2665", S: "\\u2660" };
  const state = { deal: 0, step: 0, view: "table" };
  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function card(code, extra) {
    const suit = code.slice(-1);
    const red = suit === "D" || suit === "H";
    const cls = "card" + (red ? " red" : "") + (extra ? " " + extra : "");
    return el("span", { class: cls, "data-card": code }, code.slice(0, -1) + SUITS[suit]);
  }
  function back() { return el("span", { class: "card back", title: "hidden card" }); }
  function who(seat) { return "seat " + seat + " (" + data.bots[seat] + ")"; }
  function signed(n) { return n > 0 ? "+" + n : String(n); }
  function clamp(n, lo, hi) { return Math.max(lo, Math.min(hi, n)); }
  function viewSeat() { return state.view === "table" ? null : Number(state.view.slice(4)); }

  function readHash() {
    const params = {};
    for (const part of location.hash.replace(/^#/, "").split("&")) {
      const [key, value] = part.split("=");
      if (key) params[decodeURIComponent(key)] = decodeURIComponent(value || "");
    }
    const seat = /^seat(\\d+)$/.exec(params.view || "");
    state.view = seat && Number(seat[1]) < data.table_size ? "seat" + Number(seat[1]) : "table";
    state.deal = clamp(parseInt(params.deal, 10) || 0, 0, data.deals.length - 1);
    state.step = clamp(parseInt(params.step, 10) || 0, 0, data.deals[state.deal].steps.length - 1);
  }
  function writeHash() {
    const hash = "#view=" + state.view + "&deal=" + state.deal + "&step=" + state.step;
    try { history.replaceState(null, "", hash); } catch (e) { /* some file: URLs refuse it */ }
  }

  function setup() {
    data.deals.forEach((deal, i) => {
      const label = "Deal " + deal.number + (deal.tie_break ? " (tie-break)" : "");
      $("deal").appendChild(el("option", { value: String(i) }, label));
    });
    $("view").appendChild(el("option", { value: "table" }, "the table (every hand)"));
    data.bots.forEach((bot, seat) => {
      $("view").appendChild(el("option", { value: "seat" + seat }, who(seat)));
    });
    $("deal").addEventListener("change", (e) => go(Number(e.target.value), 0));
    $("view").addEventListener("change", (e) => { state.view = e.target.value; render(); });
    $("first").addEventListener("click", () => go(state.deal, 0));
    $("last").addEventListener("click", () => go(state.deal, data.deals[state.deal].steps.length - 1));
    $("back").addEventListener("click", () => move(-1));
    $("forward").addEventListener("click", () => move(1));
    document.addEventListener("keydown", (e) => {
      if (e.target && e.target.tagName === "SELECT") return;
      if (e.key === "ArrowRight") { move(1); e.preventDefault(); }
      if (e.key === "ArrowLeft") { move(-1); e.preventDefault(); }
      if (e.key === "PageDown") go(Math.min(state.deal + 1, data.deals.length - 1), 0);
      if (e.key === "PageUp") go(Math.max(state.deal - 1, 0), 0);
    });
    window.addEventListener("hashchange", () => { readHash(); render(); });
  }
  function go(deal, step) { state.deal = deal; state.step = step; render(); }
  function move(delta) {
    const steps = data.deals[state.deal].steps.length;
    const step = state.step + delta;
    if (step >= steps && state.deal + 1 < data.deals.length) go(state.deal + 1, 0);
    else if (step < 0 && state.deal > 0) go(state.deal - 1, data.deals[state.deal - 1].steps.length - 1);
    else go(state.deal, clamp(step, 0, steps - 1));
  }

  function seatPanel(seat, deal, step) {
    const pub = step.public;
    const mine = viewSeat();
    const inPlay = deal.seats.includes(seat);
    const cls = "panel" + (pub.to_act === seat ? " to-act" : "") + (inPlay ? "" : " out");
    const panel = el("div", { class: cls, "data-panel": String(seat) });
    const title = el("h2", {}, who(seat));
    if (pub.dealer === seat) title.appendChild(el("span", { class: "badge" }, "dealer"));
    if (pub.declarer === seat) title.appendChild(el("span", { class: "badge declarer" }, "declarer"));
    if (pub.to_act === seat) title.appendChild(el("span", { class: "badge" }, "to act"));
    panel.appendChild(title);
    panel.appendChild(el("div", { class: "stats" },
      "tricks " + pub.tricks_won[seat] + " \\u00b7 balance " + signed(pub.balances[seat])));
    const hand = el("div", { class: "hand", "data-seat": String(seat) });
    if (mine === null || mine === seat) {
      const cards = mine === null ? step.table.hands[seat] : step.views[seat].hand;
      const legal = new Set(step.views[seat].legal);
      for (const code of cards) hand.appendChild(card(code, legal.has(code) ? "legal" : ""));
    } else {
      for (let i = 0; i < pub.held[seat]; i++) hand.appendChild(back());
    }
    panel.appendChild(hand);
    return panel;
  }
  function plays(list, winner) {
    const row = el("div", { class: "cards" });
    for (const [seat, code] of list) {
      const play = el("span", { class: "play" + (seat === winner ? " winner" : "") });
      play.appendChild(card(code));
      play.appendChild(el("span", {}, "seat " + seat));
      row.appendChild(play);
    }
    return row;
  }

  function render() {
    const deal = data.deals[state.deal];
    const step = deal.steps[state.step];
    const pub = step.public;
    $("deal").value = String(state.deal);
    $("view").value = state.view;
    $("position").textContent = "step " + state.step + " / " + (deal.steps.length - 1);
    $("caption").textContent = step.caption;
    const seats = $("seats");
    seats.replaceChildren();
    for (let seat = 0; seat < data.table_size; seat++) seats.appendChild(seatPanel(seat, deal, step));
    $("contract").textContent = pub.declarer === null
      ? (pub.phase === "bidding" ? "Bidding" : "No contract")
      : who(pub.declarer) + " declares " + pub.contract + ", trump " + pub.trump_text;
    $("trick").replaceChildren(plays(pub.trick, null));
    $("bids").replaceChildren(...pub.bids.map(([seat, bid]) => el("li", {}, who(seat) + ": " + bid)));
    $("tricks").replaceChildren(...pub.tricks.map((trick) => {
      const item = el("li", {}, "to seat " + trick.winner);
      item.appendChild(plays(trick.plays, trick.winner));
      return item;
    }));
    const paid = pub.settled ? pub.settled.payments.map((p, s) => "seat " + s + " " + signed(p)) : [];
    $("settled").textContent = pub.settled ? pub.settled.result + ": " + paid.join(", ") : "";
    $("balances").replaceChildren(...pub.balances.map((b, s) => {
      const row = el("tr", {});
      row.appendChild(el("td", {}, who(s)));
      row.appendChild(el("td", {}, signed(b)));
      return row;
    }));
    writeHash();
  }

  setup();
  readHash();
  render();
})();
</script>
</body>
</html>
"""
"""The page, with its holes."""
