"use strict";
// The live parts of the arena's pages: each is fetched again and swapped in whole, so the
// server renders everything and this script works out nothing.
// - The leaderboard (#board): on each "leaderboard" event of the arena's stream (a block
//   completed). document.body.dataset.live says whether the stream is open ("open") or
//   reconnecting ("closed").
// - The tables in play (#tables): every two seconds.
(() => {
  const TABLES_EVERY_MS = 2000;

  // Fetch this page again and put its element `id` in place of the one shown.
  async function swap(id) {
    const response = await fetch(location.pathname, { credentials: "same-origin", cache: "no-store" });
    if (!response.ok) return;
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    const fresh = page.getElementById(id);
    const shown = document.getElementById(id);
    if (fresh && shown) shown.replaceWith(document.importNode(fresh, true));
  }

  function followBoard() {
    let busy = false;
    let again = false;
    async function refresh() {
      if (busy) {
        again = true;
        return;
      }
      busy = true;
      try {
        await swap("board");
      } catch (error) {
        // the next event tries again
      } finally {
        busy = false;
        if (again) {
          again = false;
          refresh();
        }
      }
    }
    const events = new EventSource("/api/v1/events");
    events.addEventListener("leaderboard", refresh);
    events.addEventListener("open", () => { document.body.dataset.live = "open"; });
    events.addEventListener("error", () => { document.body.dataset.live = "closed"; });
  }

  function followTables() {
    async function tick() {
      try {
        await swap("tables");
      } catch (error) {
        // tried again at the next tick
      }
      setTimeout(tick, TABLES_EVERY_MS);
    }
    setTimeout(tick, TABLES_EVERY_MS);
  }

  if (document.getElementById("board")) followBoard();
  if (document.getElementById("tables")) followTables();
})();
