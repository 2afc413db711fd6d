"""The replay page's HTML, CSS and script, with ``@@TITLE@@``, ``@@DATA_ID@@`` and ``@@DATA@@`` holes.

The script only draws the steps that :mod:`tournaments.report.replay_page` embeds; it never works
out a rule. It loads nothing from the network. Every card it draws carries
``data-card="QH"``, every hand ``class="hand" data-seat="N"``, and a hidden card is a back
(``class="card back"``) with no ``data-card``, so tests can read what a view shows.

The seat panels (``data-panel="N"``) are placed around the table by grid area, clockwise
from the bottom, where the seat viewed from sits; below 640 px the table has two columns.
The step bar's buttons are ``.tick`` (``.here``: the step shown, ``.fault``: a fault was
marked there); ``#play`` (``aria-pressed``) and ``#speed`` run the autoplay; ``#fault``
says what went wrong at the step shown.
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
  main { display: grid; grid-template-columns: minmax(0, 2fr) minmax(0, 1fr); gap: 1em; padding: 1em; }
  nav#links a { color: #cfe8d4; margin-right: 1em; }
  .who { display: flex; flex-wrap: wrap; gap: .3em .9em; margin: 0 0 .4em 0; font-size: .9em; }
  .who .won { font-weight: 700; color: #ffe082; }
  .felt { display: grid; gap: .6em; align-items: start; background: #2e6b3f; border-radius: 14px;
          padding: .7em;
          grid-template-columns: repeat(3, minmax(0, 1fr));
          grid-template-areas: "tl t tr" "l c r" "bl b br"; }
  #seats { display: contents; }
  .centre { grid-area: c; align-self: center; background: #3f8251; color: #fff; border-radius: 10px;
            padding: .5em; min-height: 5em; text-align: center; }
  .centre .cards { justify-content: center; }
  .centre .play span:last-child { color: #e6f2e8; }
  #timeline { display: flex; flex-wrap: wrap; gap: 2px; padding: .3em 1em; background: #fff; }
  .tick { width: 12px; height: 14px; padding: 0; border: 1px solid #bbb; background: #eee; cursor: pointer; }
  .tick.here { background: #1f4d2c; border-color: #1f4d2c; }
  .tick.fault { background: #e53950; border-color: #b00020; }
  .tick.fault.here { outline: 2px solid #1f4d2c; }
  #fault { display: none; padding: .4em 1em; background: #fde0e4; color: #8a0018;
           border-bottom: 1px solid #e9a3ad; }
  #fault.shown { display: block; }
  .faults-list { font-size: .85em; margin: .3em 0 0 0; }
  .faults-list button { font-size: 1em; margin: 0 .3em .2em 0; background: #fde0e4; border: 1px solid #b00020;
                        border-radius: 3px; }
  .badge.fault { background: #e53950; color: #fff; }
  .controls .playing { background: #ffe082; }
  @media (max-width: 640px) {
    main { grid-template-columns: minmax(0, 1fr); padding: .5em; }
    .felt { grid-template-columns: repeat(2, minmax(0, 1fr)); padding: .4em; gap: .4em;
            grid-template-areas: "tl tr" "t t" "l r" "c c" "bl br" "b b"; }
    .panel { padding: .3em .4em; }
    .card { min-width: 1.5em; padding: .2em .1em; font-size: .85em; }
    .hand, .cards { gap: .15em; min-height: 2em; }
    header { padding: .5em; }
    #caption, #fault { padding: .4em .5em; }
  }
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
  <nav id="links"></nav>
  <h1>@@TITLE@@</h1>
  <div class="who" id="who"></div>
  <div class="controls">
    <label>Deal <select id="deal"></select></label>
    <label>View <select id="view"></select></label>
    <button id="first" title="start of the deal">&laquo; start</button>
    <button id="back" title="back (left arrow)">&#x25C0;</button>
    <span id="position"></span>
    <button id="forward" title="forward (right arrow)">&#x25B6;</button>
    <button id="last" title="end of the deal">end &raquo;</button>
    <button id="play" title="autoplay (space)">&#x25B6;&#x25B6; play</button>
    <label>Speed <select id="speed">
      <option value="2000">slow</option>
      <option value="1000" selected>normal</option>
      <option value="400">fast</option>
      <option value="120">fastest</option>
    </select></label>
  </div>
  <details class="faults-list" id="faults-box" hidden><summary id="faults-summary"></summary>
    <div id="faults"></div></details>
</header>
<div id="caption"></div>
<div id="fault" role="alert"></div>
<div id="timeline" aria-label="steps of this deal"></div>
<main>
  <section class="felt" id="felt">
    <div class="centre">
      <div id="contract"></div>
      <div id="pool"></div>
      <div class="cards" id="trick"></div>
    </div>
    <div id="seats"></div>
  </section>
  <section class="side panel">
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
  const state = { deal: 0, step: 0, view: "table", timer: null };
  const FAULTS = data.faults || [];
  // Grid areas around the table, clockwise from the bottom, by table size (see the CSS).
  const AREAS = { 2: ["b", "t"], 3: ["b", "l", "r"], 4: ["b", "l", "t", "r"], 5: ["b", "l", "tl", "tr", "r"],
                  6: ["b", "l", "tl", "t", "tr", "r"], 7: ["b", "bl", "l", "tl", "tr", "r", "br"],
                  8: ["b", "bl", "l", "tl", "t", "tr", "r", "br"] };
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
      const faulty = FAULTS.some((f) => f.deal === i);
      const label = "Deal " + deal.number + (deal.tie_break ? " (tie-break)" : "")
        + (faulty ? " \u26a0" : "");
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
    $("play").addEventListener("click", () => autoplay(state.timer === null));
    $("speed").addEventListener("change", () => { if (state.timer !== null) autoplay(true); });
    header();
    document.addEventListener("keydown", (e) => {
      if (e.target && e.target.tagName === "SELECT") return;
      if (e.key === " " && e.target.tagName !== "BUTTON") {
        autoplay(state.timer === null);
        e.preventDefault();
      }
      if (e.key === "ArrowRight") { move(1); e.preventDefault(); }
      if (e.key === "ArrowLeft") { move(-1); e.preventDefault(); }
      if (e.key === "PageDown") go(Math.min(state.deal + 1, data.deals.length - 1), 0);
      if (e.key === "PageUp") go(Math.max(state.deal - 1, 0), 0);
    });
    window.addEventListener("hashchange", () => { readHash(); render(); });
  }
  function header() {
    for (const link of data.links || []) $("links").appendChild(el("a", { href: link.href }, link.text));
    data.bots.forEach((bot, seat) => {
      const won = data.winners.includes(seat);
      const text = "seat " + seat + ": " + bot + " " + signed(data.balances[seat]) + (won ? " (won)" : "");
      $("who").appendChild(el("span", { class: won ? "won" : "", "data-who": String(seat) }, text));
    });
    if (!FAULTS.length) return;
    $("faults-box").hidden = false;
    $("faults-summary").textContent = "\u26a0 " + FAULTS.length + " fault" + (FAULTS.length > 1 ? "s" : "")
      + ": go to one";
    for (const fault of FAULTS) {
      const where = "deal " + fault.deal + (fault.decision < 0 ? "" : ", decision " + fault.decision);
      const button = el("button", { class: "jump", title: fault.detail },
                        "\u26a0 " + where + ": seat " + fault.seat + " " + fault.kind);
      const last = data.deals[fault.deal].steps.length - 1;
      button.addEventListener("click", () => go(fault.deal, clamp(fault.step, 0, last)));
      $("faults").appendChild(button);
    }
  }
  function faultsHere() { return FAULTS.filter((f) => f.deal === state.deal && f.step === state.step); }
  function faultText(fault) {
    const took = fault.elapsed_ms === null ? "" : " after " + fault.elapsed_ms.toFixed(1) + " ms";
    const detail = fault.detail ? ": " + fault.detail : "";
    return "\u26a0 fault: " + who(fault.seat) + " " + fault.kind + took + detail;
  }
  function autoplay(on) {
    if (state.timer !== null) clearTimeout(state.timer);
    state.timer = null;
    if (on) {
      const tick = () => {
        const deal = data.deals[state.deal];
        const atEnd = state.deal === data.deals.length - 1 && state.step === deal.steps.length - 1;
        if (atEnd) { autoplay(false); return; }
        move(1);
        state.timer = setTimeout(tick, Number($("speed").value));
      };
      state.timer = setTimeout(tick, Number($("speed").value));
    }
    $("play").textContent = on ? "\u275a\u275a pause" : "\u25b6\u25b6 play";
    $("play").classList.toggle("playing", on);
    $("play").setAttribute("aria-pressed", on ? "true" : "false");
  }
  function timeline(deal) {
    const line = $("timeline");
    line.replaceChildren();
    deal.steps.forEach((step, i) => {
      const faulty = FAULTS.some((f) => f.deal === state.deal && f.step === i);
      const cls = "tick" + (faulty ? " fault" : "") + (i === state.step ? " here" : "");
      const title = "step " + i + (faulty ? ": fault" : "");
      const tick = el("button", { class: cls, "data-step": String(i), title: title });
      tick.addEventListener("click", () => go(state.deal, i));
      line.appendChild(tick);
    });
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
    if (faultsHere().some((f) => f.seat === seat)) {
      title.appendChild(el("span", { class: "badge fault" }, "fault"));
    }
    panel.appendChild(title);
    let stats = "tricks " + pub.tricks_won[seat] + " \\u00b7 balance " + signed(pub.balances[seat]);
    if (pub.exchanged[seat]) stats += " \\u00b7 exchanged " + pub.exchanged[seat];
    if (pub.peeked.includes(seat)) stats += " \\u00b7 peeped";
    panel.appendChild(el("div", { class: "stats" }, stats));
    const hand = el("div", { class: "hand", "data-seat": String(seat) });
    if (mine === null || mine === seat) {
      const cards = mine === null ? step.table.hands[seat] : step.views[seat].hand;
      const legal = new Set(step.views[seat].legal);
      for (const code of cards) hand.appendChild(card(code, legal.has(code) ? "legal" : ""));
    } else {
      for (let i = 0; i < pub.held[seat]; i++) hand.appendChild(back());
    }
    panel.appendChild(hand);
    if (mine === null || mine === seat) {
      const own = step.views[seat];
      const seen = [["drew", own.drawn], ["gave up", own.discarded],
                    ["widow seen", own.widow === null ? [] : [own.widow]]];
      for (const [label, cards] of seen) {
        if (!cards.length) continue;
        const row = el("div", { class: "stats", "data-private": label }, label + " ");
        for (const code of cards) row.appendChild(card(code));
        panel.appendChild(row);
      }
    }
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
    $("caption").textContent = viewSeat() === null ? step.table.caption : step.caption;
    const seats = $("seats");
    seats.replaceChildren();
    for (let seat = 0; seat < data.table_size; seat++) seats.appendChild(seatPanel(seat, deal, step));
    const bottom = viewSeat() === null ? 0 : viewSeat();
    const areas = AREAS[data.table_size] || [];
    for (const panel of seats.children) {
      const seat = Number(panel.dataset.panel);
      panel.style.gridArea = areas[(seat - bottom + data.table_size) % data.table_size] || "auto";
    }
    const here = faultsHere();
    $("fault").textContent = here.map(faultText).join("; ");
    $("fault").classList.toggle("shown", here.length > 0);
    timeline(deal);
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
    const pool = $("pool");
    pool.replaceChildren();
    if (pub.pool !== null) pool.appendChild(el("div", {}, "Pool: " + pub.pool + " chips"));
    if (viewSeat() === null && step.table.widow !== null) {
      const row = el("div", { class: "cards" }, "Widow ");
      row.appendChild(card(step.table.widow));
      pool.appendChild(row);
    }
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
