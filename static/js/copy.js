// A "Copy" button beside a value shown once (a new API key): data-copy names the element
// whose text it copies. Without JavaScript (or a clipboard) the button stays hidden and the
// value stays selectable by hand (user-select: all).
(function () {
  "use strict";

  function arm(root) {
    if (!navigator.clipboard) return;
    root.querySelectorAll("[data-copy]").forEach(function (button) {
      button.hidden = false;
    });
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-copy]");
    if (!button) return;
    var source = document.querySelector(button.getAttribute("data-copy"));
    if (!source) return;
    navigator.clipboard.writeText(source.textContent.trim()).then(function () {
      button.textContent = button.getAttribute("data-copied-text");
    });
  });

  document.addEventListener("DOMContentLoaded", function () { arm(document); });
  document.addEventListener("htmx:afterSwap", function (event) { arm(event.target); });
})();
