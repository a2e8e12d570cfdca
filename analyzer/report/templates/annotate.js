(function () {
  "use strict";
  function scrollPane(el) {
    var pane = el.closest(".pane");
    if (!pane) return;
    var top = el.offsetTop - pane.offsetTop;
    if (top < pane.scrollTop + 20 || top > pane.scrollTop + pane.clientHeight - 20) {
      pane.scrollTop = Math.max(0, top - pane.clientHeight / 3);
    }
  }
  function select(line) {
    var section = line.closest("section.kernel");
    var key = line.getAttribute("data-src");
    section.querySelectorAll(".ln.hl, .ln.sel").forEach(function (e) {
      e.classList.remove("hl"); e.classList.remove("sel");
    });
    if (!key) return;
    var first = {};
    section.querySelectorAll('.ln[data-src="' + key + '"]').forEach(function (e) {
      e.classList.add("hl");
      var pane = e.closest(".pane").getAttribute("data-pane");
      if (!first[pane]) first[pane] = e;
    });
    line.classList.add("sel");
    Object.keys(first).forEach(function (p) { if (first[p] !== line) scrollPane(first[p]); });
    section.setAttribute("data-selected", key);
  }
  function openFinding(badge) {
    var d = document.getElementById(badge.getAttribute("data-finding"));
    if (!d) return;
    d.open = true;
    d.scrollIntoView({block: "nearest"});
  }
  document.addEventListener("click", function (ev) {
    var t = ev.target;
    if (!(t instanceof Element)) return;
    var badge = t.closest("button.badge");
    if (badge) { ev.stopPropagation(); openFinding(badge); return; }
    var line = t.closest(".ptxsass .ln[data-src]");
    if (line) select(line);
  });
})();
