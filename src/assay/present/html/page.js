// The one script of an assay report: opens the drill-down a link or the URL's #fragment names, and sorts and
// filters the question table. Everything else reads without it.
(function () {
  "use strict";

  // A question's anchor sits inside its closed <details>: open the <details> before the browser scrolls to
  // it (Chromium opens it on its own; other browsers would scroll to a hidden element), and on arrival
  // with a #fragment scroll there once it is open.
  function target(hash) {
    if (!hash || hash.length < 2) return null;
    var id = hash.slice(1);
    var el = document.getElementById(id);
    if (!el) {
      try { el = document.getElementById(decodeURIComponent(id)); } catch (err) { el = null; }
    }
    return el;
  }

  function reveal(hash, scroll) {
    var el = target(hash);
    if (!el) return;
    var drill = el.closest("details");
    if (drill && !drill.open) drill.open = true;
    if (scroll) el.scrollIntoView();
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest('a[href^="#"]') : null;
    if (link) reveal(link.getAttribute("href"), false);  // the link's own navigation then scrolls to it
  });
  window.addEventListener("hashchange", function () { reveal(location.hash, true); });
  reveal(location.hash, true);

  var table = document.getElementById("questions");
  if (!table || !table.tBodies.length) return;
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var filter = document.getElementById("q-filter");
  var count = document.getElementById("q-count");

  function applyFilter() {
    var needle = filter.value.trim().toLowerCase();
    var shown = 0;
    rows.forEach(function (row) {
      var keep = !needle || row.textContent.toLowerCase().indexOf(needle) !== -1;
      row.hidden = !keep;
      if (keep) shown += 1;
    });
    if (count) count.textContent = shown + " of " + rows.length + " questions";
  }

  if (filter) {
    filter.hidden = false;
    filter.addEventListener("input", applyFilter);
  }

  function key(row, column, numeric) {
    var cell = row.cells[column];
    var raw = cell.hasAttribute("data-v") ? cell.getAttribute("data-v") : cell.textContent;
    if (!numeric) return raw.toLowerCase();
    var v = parseFloat(raw);
    return isNaN(v) ? null : v;
  }

  Array.prototype.forEach.call(table.tHead.querySelectorAll("th[data-sort]"), function (th) {
    th.tabIndex = 0;
    function sort() {
      var column = th.cellIndex;
      var numeric = th.getAttribute("data-sort") === "num";
      var ascending = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(table.tHead.querySelectorAll("th[aria-sort]"), function (other) {
        other.removeAttribute("aria-sort");
      });
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      var keyed = rows.map(function (row, i) { return [key(row, column, numeric), i, row]; });
      keyed.sort(function (a, b) {
        if (a[0] === b[0]) return a[1] - b[1];
        if (a[0] === null) return 1;  // missing values last, whichever the direction
        if (b[0] === null) return -1;
        var order = a[0] < b[0] ? -1 : 1;
        return ascending ? order : -order;
      });
      rows = keyed.map(function (k) { return k[2]; });
      rows.forEach(function (row) { body.appendChild(row); });
    }
    th.addEventListener("click", sort);
    th.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sort(); }
    });
  });
})();
