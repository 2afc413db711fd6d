// The sessions list's filter (sessions.html): shows the rows the URL fragment asks for
// (#bot=peel&opponent=random&faults=1) and says how many on #filter.
"use strict";
(function () {
  function filter() {
    const params = {};
    for (const part of location.hash.replace(/^#/, "").split("&")) {
      const [key, value] = part.split("=");
      if (key) params[decodeURIComponent(key)] = decodeURIComponent(value || "");
    }
    let shown = 0;
    const rows = document.querySelectorAll("tr[data-bots]");
    for (const row of rows) {
      const bots = JSON.parse(row.dataset.bots);
      const faulty = JSON.parse(row.dataset.faultBots);
      let keep = true;
      if (params.bot && !bots.includes(params.bot)) keep = false;
      if (params.opponent && !bots.includes(params.opponent)) keep = false;
      if (params.faults === "1") {
        keep = keep && (params.bot ? faulty.includes(params.bot) : faulty.length > 0);
      }
      row.hidden = !keep;
      if (keep) shown++;
    }
    let what = "All sessions";
    if (params.bot) what = "Sessions of " + params.bot;
    if (params.bot && params.opponent) what += " with " + params.opponent;
    if (params.faults === "1") what += params.bot ? " in which it made a fault" : " with a fault";
    document.getElementById("filter").textContent = what + ": " + shown + " of " + rows.length;
    document.getElementById("all").hidden = !location.hash;
  }
  window.addEventListener("hashchange", filter);
  filter();
})();
