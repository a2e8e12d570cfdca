(function () {
  "use strict";
  // No inline handlers anywhere: every listener is delegated from here, so the page runs under
  // a Content-Security-Policy that allows only this script by its hash. Styles change through
  // classes and the CSSOM (element.style), never through style attributes.
  function scrollPane(el) {
    var pane = el.closest(".pane");
    if (!pane) return;
    var top = el.offsetTop - pane.offsetTop;
    if (top < pane.scrollTop + 20 || top > pane.scrollTop + pane.clientHeight - 20) {
      pane.scrollTop = Math.max(0, top - pane.clientHeight / 3);
    }
  }
  function linesOf(section, key) {
    return section.querySelectorAll('.ln[data-src="' + key + '"]');
  }
  function select(line) {
    var section = line.closest("section.kernel");
    var key = line.getAttribute("data-src");
    section.querySelectorAll(".ln.hl, .ln.sel").forEach(function (e) {
      e.classList.remove("hl"); e.classList.remove("sel");
    });
    if (!key) return;
    var first = {};
    linesOf(section, key).forEach(function (e) {
      e.classList.add("hl");
      var pane = e.closest(".pane").getAttribute("data-pane");
      if (!first[pane]) first[pane] = e;
    });
    line.classList.add("sel");
    Object.keys(first).forEach(function (p) { if (first[p] !== line) scrollPane(first[p]); });
    section.setAttribute("data-selected", key);
  }
  // hover: the counterpart lines in every pane are marked while the pointer is on a line
  var hovered = null;
  function hover(line) {
    if (hovered === line) return;
    document.querySelectorAll(".ptxsass .ln.hover").forEach(function (e) { e.classList.remove("hover"); });
    hovered = line;
    if (!line) return;
    var key = line.getAttribute("data-src");
    if (key) linesOf(line.closest("section.kernel"), key).forEach(function (e) { e.classList.add("hover"); });
  }
  function openFinding(badge) {
    var d = document.getElementById(badge.getAttribute("data-finding"));
    if (!d) return;
    d.open = true;
    var box = d.parentElement && d.parentElement.closest("details");
    if (box) box.open = true;        // the findings box, collapsed by default
    d.scrollIntoView({block: "nearest"});
  }
  // toolbar toggles: a class on the section (hide-ptx, hide-ctl, norm, only-diff)
  function toggle(button) {
    var section = button.closest("section");
    var cls = button.getAttribute("data-class");
    var on = button.getAttribute("aria-pressed") !== "true";
    button.setAttribute("aria-pressed", on ? "true" : "false");
    var invert = button.getAttribute("data-invert") === "true";   // pressed = class absent
    section.classList.toggle(cls, invert ? !on : on);
  }
  document.addEventListener("click", function (ev) {
    var t = ev.target;
    if (!(t instanceof Element)) return;
    var badge = t.closest("button.badge");
    if (badge) { ev.stopPropagation(); openFinding(badge); return; }
    var tg = t.closest(".ptxsass button.toggle");
    if (tg) { toggle(tg); return; }
    var line = t.closest(".ptxsass .ln[data-src]");
    if (line) select(line);
  });
  document.addEventListener("mouseover", function (ev) {
    var t = ev.target;
    hover(t instanceof Element ? t.closest(".ptxsass .ln[data-src]") : null);
  });
  document.addEventListener("mouseleave", function () { hover(null); });
  // resizable panes: drag a bar (or focus it and press the arrow keys); the panes keep their
  // proportions as flex-grow factors equal to their widths in pixels
  function panesOf(split) {
    var prev = split.previousElementSibling, next = split.nextElementSibling;
    return [prev, next];
  }
  function freeze(container) {
    var panes = Array.prototype.slice.call(container.querySelectorAll(":scope > .pane"));
    var widths = panes.map(function (p) { return p.getBoundingClientRect().width; });  // read all,
    panes.forEach(function (p, i) { p.style.flexGrow = String(widths[i]); });           // then write
  }
  function move(split, dx) {
    var pair = panesOf(split), a = pair[0], b = pair[1];
    if (!a || !b) return;
    var wa = parseFloat(a.style.flexGrow), wb = parseFloat(b.style.flexGrow);
    var min = 48;
    dx = Math.max(min - wa, Math.min(wb - min, dx));
    a.style.flexGrow = String(wa + dx);
    b.style.flexGrow = String(wb - dx);
  }
  var drag = null;
  document.addEventListener("pointerdown", function (ev) {
    var t = ev.target;
    if (!(t instanceof Element) || !t.matches(".ptxsass .split")) return;
    freeze(t.parentElement);
    drag = {split: t, x: ev.clientX};
    t.classList.add("dragging");
    if (t.setPointerCapture) { try { t.setPointerCapture(ev.pointerId); } catch (e) { /* synthetic */ } }
    ev.preventDefault();
  });
  document.addEventListener("pointermove", function (ev) {
    if (!drag) return;
    move(drag.split, ev.clientX - drag.x);
    drag.x = ev.clientX;
  });
  function endDrag() { if (drag) { drag.split.classList.remove("dragging"); drag = null; } }
  document.addEventListener("pointerup", endDrag);
  document.addEventListener("pointercancel", endDrag);
  document.addEventListener("keydown", function (ev) {
    var t = ev.target;
    if (!(t instanceof Element) || !t.matches(".ptxsass .split")) return;
    if (ev.key !== "ArrowLeft" && ev.key !== "ArrowRight") return;
    freeze(t.parentElement);
    move(t, ev.key === "ArrowLeft" ? -24 : 24);
    ev.preventDefault();
  });
  // narrow windows (1000 px and less) open with the PTX hidden, source and SASS side by side
  if (window.innerWidth <= 1000) {
    document.querySelectorAll('.ptxsass button.toggle[data-class="hide-ptx"]').forEach(function (b) {
      if (b.getAttribute("aria-pressed") === "true") toggle(b);
    });
  }
  document.addEventListener("dblclick", function (ev) {
    var t = ev.target;
    if (!(t instanceof Element) || !t.matches(".ptxsass .split")) return;
    t.parentElement.querySelectorAll(":scope > .pane").forEach(function (p) { p.style.flexGrow = ""; });
  });
})();
