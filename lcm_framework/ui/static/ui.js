// lcm ui: theme, bar widths (no inline styles: the CSP forbids them), the budget slider, live transcript.
(function () {
  "use strict";
  var root = document.documentElement;
  var saved = localStorage.getItem("lcm-theme");
  if (saved) root.setAttribute("data-theme", saved);
  document.addEventListener("DOMContentLoaded", function () {
    var toggle = document.getElementById("theme");
    if (toggle) toggle.addEventListener("click", function () {
      var dark = root.getAttribute("data-theme") === "dark" ||
        (!root.getAttribute("data-theme") && matchMedia("(prefers-color-scheme: dark)").matches);
      var next = dark ? "light" : "dark";
      root.setAttribute("data-theme", next);
      localStorage.setItem("lcm-theme", next);
    });
    sizeBars(document);
    var slider = document.getElementById("budget");
    if (slider) {
      var out = document.getElementById("budget-value");
      slider.addEventListener("input", function () { out.textContent = Number(slider.value).toLocaleString("en"); });
      slider.addEventListener("change", function () { slider.form.submit(); });
    }
    document.addEventListener("keydown", function (e) {
      var q = document.getElementById("quick-q");
      if (e.key === "/" && q && document.activeElement.tagName !== "INPUT") { e.preventDefault(); q.focus(); }
    });
    var live = document.querySelector("[data-live]");
    if (live) poll(live);
  });
  function sizeBars(scope) {
    scope.querySelectorAll(".covered-range").forEach(function (el) {
      var start = parseFloat(el.dataset.start), end = parseFloat(el.dataset.end);
      el.style.left = (start * 100) + "%";
      el.style.width = Math.max(0, (end - start) * 100) + "%";
    });
    scope.querySelectorAll(".bar[data-width]").forEach(function (el) {
      el.style.width = Math.min(100, parseFloat(el.dataset.width) * 100) + "%";
    });
  }
  function poll(section) {
    var last = section.dataset.last;
    var url = section.dataset.live + (last !== "" ? "&after=" + encodeURIComponent(last) : "");
    fetch(url, { credentials: "same-origin" }).then(function (r) {
      if (!r.ok) throw new Error(String(r.status));
      var seq = r.headers.get("X-Last-Seq");
      return r.text().then(function (html) {
        if (html.trim()) section.insertAdjacentHTML("beforeend", html);  // rendered and escaped by the server
        if (seq !== null && seq !== "") section.dataset.last = seq;
      });
    }).catch(function () {}).then(function () { setTimeout(function () { poll(section); }, 1500); });
  }
})();
