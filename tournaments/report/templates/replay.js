// The replay page's script (replay.html): draws the steps embedded as JSON in the element
// "nap-replay-data" (tournaments.replay_page.DATA_ID); it never works out a rule.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("nap-replay-data").textContent);
  const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
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
    const seat = /^seat(\d+)$/.exec(params.view || "");
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
      const label = "Deal " + (deal.number + 1) + (deal.tie_break ? " (tie-break)" : "")
        + (faulty ? " ⚠" : "");
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
    $("faults-summary").textContent = "⚠ " + FAULTS.length + " fault" + (FAULTS.length > 1 ? "s" : "")
      + ": go to one";
    for (const fault of FAULTS) {
      // counted from 1, as people count (the log's fields count from 0)
      const where = "deal " + (fault.deal + 1) + (fault.decision === null ? "" : ", decision " + (fault.decision + 1));
      const button = el("button", { class: "jump", title: fault.detail },
                        "⚠ " + where + ": seat " + fault.seat + " " + fault.kind);
      const last = data.deals[fault.deal].steps.length - 1;
      button.addEventListener("click", () => go(fault.deal, clamp(fault.step, 0, last)));
      $("faults").appendChild(button);
    }
  }
  function faultsHere() { return FAULTS.filter((f) => f.deal === state.deal && f.step === state.step); }
  function faultText(fault) {
    const took = fault.elapsed_ms === null ? "" : " after " + fault.elapsed_ms.toFixed(1) + " ms";
    const detail = fault.detail ? ": " + fault.detail : "";
    return "⚠ fault: " + who(fault.seat) + " " + fault.kind + took + detail;
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
    $("play").textContent = on ? "❚❚ pause" : "▶▶ play";
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
    let stats = "tricks " + pub.tricks_won[seat] + " \u00b7 balance " + signed(pub.balances[seat]);
    if (pub.exchanged[seat]) stats += " \u00b7 exchanged " + pub.exchanged[seat];
    if (pub.peeked.includes(seat)) stats += " \u00b7 peeped";
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
