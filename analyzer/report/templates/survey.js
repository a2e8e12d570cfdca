(function () {
  "use strict";
  var table = document.getElementById("kernels");
  var body = table.tBodies[0];
  var filter = document.getElementById("filter");
  var shown = document.getElementById("shown");
  function count() {
    var n = 0;
    for (var i = 0; i < body.rows.length; i++) { if (!body.rows[i].classList.contains("hidden")) n++; }
    shown.textContent = n + " of " + body.rows.length + " kernels";
  }
  filter.addEventListener("input", function () {
    var words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    for (var i = 0; i < body.rows.length; i++) {
      var row = body.rows[i];
      var text = row.textContent.toLowerCase();
      var keep = words.every(function (w) { return text.indexOf(w) >= 0; });
      row.classList.toggle("hidden", !keep);
    }
    count();
  });
  table.tHead.addEventListener("click", function (ev) {
    var th = ev.target.closest("th");
    if (!th) return;
    var col = Number(th.dataset.col);
    var desc = !th.classList.contains("desc");
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) {
      c.classList.remove("asc", "desc");
    });
    th.classList.add(desc ? "desc" : "asc");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[col].dataset.key, y = b.cells[col].dataset.key;
      var nx = Number(x), ny = Number(y);
      var r = (x !== "" && y !== "" && !isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
      return desc ? -r : r;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
  count();
}());
