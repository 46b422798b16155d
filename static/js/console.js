// The tenant console answers a change at the top of its section (what will change, why it
// was refused, what was saved), while the form that asked may be far below it: "Add a field"
// sits under the whole field table. Bring the answer into view and give it the focus, so
// the admin sees it where they are looking and a screen reader reads it out.
(function () {
  "use strict";

  document.addEventListener("htmx:afterSwap", function () {
    var section = document.getElementById("section");
    var step = section && section.querySelector("[data-step]");
    if (!step) return;
    step.scrollIntoView({ block: "start" });
    step.focus({ preventScroll: true });
  });
})();
