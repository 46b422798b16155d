// Keyboard operation of the review queue. Every key only finds a form or control that the
// page already shows and submits/opens it, so the same actions work by mouse and without
// JavaScript. Nothing here builds markup: htmx swaps server-rendered (escaped) partials.
(function () {
  "use strict";

  var current = null;

  function items() {
    return Array.prototype.slice.call(document.querySelectorAll("[data-item]"));
  }

  // The current item is marked with aria-current, not a class: htmx's settle step restores
  // the class of a swapped element with the same id ~20 ms later and would wipe it.
  function mark(item) {
    if (current && current !== item) current.removeAttribute("aria-current");
    current = item;
    item.setAttribute("aria-current", "true");
  }

  function focusItem(item) {
    if (!item) return;
    mark(item);
    item.focus({ preventScroll: true });
    item.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }

  function currentItem() {
    if (current && document.body.contains(current)) return current;
    var first = items()[0] || null;
    if (first) focusItem(first);
    return first;
  }

  function move(step) {
    var list = items();
    if (!list.length) return;
    var index = list.indexOf(currentItem());
    var next = list[Math.min(list.length - 1, Math.max(0, index + step))];
    if (next === list[list.length - 1] && step > 0) {
      var more = document.querySelector("[data-more]");
      if (more && index === list.length - 1) more.click();
    }
    focusItem(next);
  }

  function nextOpenAfter(item) {
    var list = items();
    for (var i = list.indexOf(item) + 1; i < list.length; i++) {
      if (list[i].dataset.open === "1") return list[i];
    }
    return null;
  }

  // htmx binds the forms of swapped-in markup only when it settles (~20 ms after the swap). A
  // key pressed in between would submit the bare form and reload the page, so bind them now;
  // htmx.process is a no-op on markup it has already bound.
  function bound(item) {
    if (item && window.htmx) window.htmx.process(item);
    return item;
  }

  function submit(selector) {
    var item = bound(currentItem());
    var form = item && item.querySelector(selector);
    if (!form) return false;
    if (form.requestSubmit) form.requestSubmit();
    else form.submit();
    return true;
  }

  function approve() {
    // A conflict has no plain approve form: approving it is "take new".
    if (submit('form[data-action="approve"]')) return;
    var item = bound(currentItem());
    var takeNew = item && item.querySelector('[data-resolution="take_new"]');
    if (takeNew) takeNew.click();
  }

  function focusField(field) {
    if (!field) return;
    field.focus();
    if (field.select) field.select();
  }

  function open(action, fieldSelector) {
    var item = currentItem();
    var details = item && item.querySelector('details[data-action="' + action + '"]');
    if (details) {
      details.open = true;
      focusField(details.querySelector(fieldSelector));
    } else if (action === "edit" && item) {
      focusField(item.querySelector("[data-merged-value]"));  // a conflict: edit to a merged value
    }
  }

  function toggleSelect() {
    var item = currentItem();
    var box = item && item.querySelector("[data-select]");
    if (!box) return;
    box.checked = !box.checked;
    updateCount();
  }

  function updateCount() {
    var counter = document.querySelector("[data-selected-count]");
    if (counter) counter.textContent = String(document.querySelectorAll("[data-select]:checked").length);
  }

  function toggleHelp() {
    var help = document.querySelector("[data-keys]");
    if (help) help.open = !help.open;
  }

  function typing(target) {
    return target && target.closest && target.closest("input, textarea, select, [contenteditable]");
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target)) {
      if (event.key === "Escape") {
        event.target.blur();
        var details = event.target.closest("details");
        if (details) details.open = false;
        if (current) current.focus({ preventScroll: true });
      }
      return;
    }
    var handled = true;
    switch (event.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "a": approve(); break;
      case "e": open("edit", "textarea"); break;
      case "r": open("reject", 'input[name="note"]'); break;
      case "d": submit('form[data-action="defer"]'); break;
      case "x": toggleSelect(); break;
      case "?": toggleHelp(); break;
      default: handled = false;
    }
    if (handled) event.preventDefault();
  });

  document.addEventListener("click", function (event) {
    var item = event.target.closest && event.target.closest("[data-item]");
    if (item) mark(item);
  });

  document.addEventListener("change", function (event) {
    if (event.target.matches && event.target.matches("[data-select]")) updateCount();
  });

  // After a decision swaps an item, keep the reviewer's place: the swapped item stays
  // (showing what happened) and the focus moves on to the next open one.
  document.body.addEventListener("htmx:afterSwap", function (event) {
    var detail = event.detail || {};
    var decided = detail.requestConfig && detail.requestConfig.verb === "post";
    var swapped = decided && detail.elt && detail.elt.matches ? detail.elt : null;
    if (swapped && swapped.matches("[data-item]")) {
      // Done: on to the next open item. A refusal or a colleague's earlier decision: stay and read it.
      var done = swapped.querySelector('[data-notice="success"]');
      focusItem(done ? nextOpenAfter(swapped) || swapped : swapped);
    } else if (!document.body.contains(current)) {
      current = null;
      currentItem();
    }
    updateCount();
  });

  document.addEventListener("DOMContentLoaded", function () {
    updateCount();
    currentItem();
  });
})();
