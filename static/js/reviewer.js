// Keyboard operation of the review queue. Every key only finds a form or control that the
// page already shows and submits/opens it, so the same actions work by mouse and without
// JavaScript. Nothing here builds markup: htmx swaps server-rendered (escaped) partials.
// No inline scripts or handlers anywhere: this file is the page's only script besides htmx.
(function () {
  "use strict";

  var current = null;
  var toastTimer = null;
  // The item decided last on the loaded pages while "More" fetches the next one: when it
  // arrives, the focus goes on to its first open item, as after any other decision.
  var continueAfter = null;

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
    item.scrollIntoView({ block: "nearest" });
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
  function bound(element) {
    if (element && window.htmx) window.htmx.process(element);
    return element;
  }

  function send(form) {
    if (!form) return false;
    bound(form.closest("[data-item]") || form);
    if (form.requestSubmit) form.requestSubmit();
    else form.submit();
    return true;
  }

  function submit(selector) {
    var item = currentItem();
    return send(item && item.querySelector(selector));
  }

  function approve() {
    // A conflict has no plain approve form: approving it is "take the proposed value".
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

  function expand(item, open) {
    var details = item && item.querySelector("details[data-expand]");
    if (details) details.open = open === undefined ? !details.open : open;
    return details;
  }

  function openAction(action, fieldSelector) {
    var item = currentItem();
    if (!item) return;
    expand(item, true);
    var details = item.querySelector('details[data-action="' + action + '"]');
    if (details) {
      details.open = true;
      focusField(details.querySelector(fieldSelector));
    } else if (action === "edit") {
      focusField(item.querySelector("[data-merged-value]")); // a conflict: edit to a merged value
    }
  }

  function toggleSelect() {
    var item = currentItem();
    var box = item && item.querySelector("[data-select]");
    if (!box) return;
    box.checked = !box.checked;
    selectionChanged(box);
  }

  // "Select all in this filter" puts the whole filter's items (as hidden inputs) in the bulk
  // bar and ticks what is on screen; unticking one item, or changing the filters, ends it.
  function selectAll() {
    return document.querySelector("[data-bulk-all] [data-selection-count]");
  }

  function clearSelectAll() {
    var all = document.querySelector("[data-bulk-all]");
    if (all) all.replaceChildren();
  }

  function tickVisible(checked) {
    document.querySelectorAll("[data-select]").forEach(function (box) { box.checked = checked; });
  }

  function selectionChanged(box) {
    if (box && !box.checked && selectAll()) clearSelectAll();
    updateCount();
  }

  function updateCount() {
    var counter = document.querySelector("[data-selected-count]");
    if (!counter) return;
    var ticked = document.querySelectorAll("[data-select]:checked").length;
    var all = selectAll();
    counter.textContent = String(all ? Math.max(ticked, parseInt(all.dataset.selectionCount, 10)) : ticked);
  }

  function help() {
    var dialog = document.querySelector("[data-keys]");
    if (!dialog || !dialog.showModal) return;
    if (dialog.open) dialog.close();
    else dialog.showModal();
  }

  function undo() {
    send(document.querySelector("#toast form[data-undo]") || (currentItem() && currentItem().querySelector("form[data-undo]")));
  }

  function claim() {
    var button = document.querySelector("[data-claim-form] [data-claim]");
    if (button) button.click();
  }

  function search() {
    focusField(document.querySelector("[data-search]"));
  }

  // The toast offers Undo for as long as the server allows it, then goes away.
  function armToast() {
    var toast = document.getElementById("toast");
    if (!toast) return;
    if (toastTimer) clearTimeout(toastTimer);
    var seconds = parseFloat(toast.dataset.expires || "8");
    toastTimer = setTimeout(function () {
      toast.replaceChildren();
      toast.className = "toast";
      delete toast.dataset.expires;
    }, seconds * 1000);
  }

  function typing(target) {
    return target && target.closest && target.closest("input, textarea, select, [contenteditable]");
  }

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (typing(target)) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && target.form) {
        // Ctrl/Cmd+Enter saves an edit (a textarea's Enter is a new line).
        event.preventDefault();
        send(target.form);
      } else if (event.key === "Escape") {
        target.blur();
        var details = target.closest("details[data-action]");
        if (details) details.open = false;
        if (current) current.focus({ preventScroll: true });
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var handled = true;
    switch (event.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "o": expand(currentItem()); break;
      case "a": approve(); break;
      case "e": openAction("edit", "textarea"); break;
      case "r": openAction("reject", 'input[name="note"]'); break;
      case "d": submit('form[data-action="defer"]'); break;
      case "u": undo(); break;
      case "c": claim(); break;
      case "x": toggleSelect(); break;
      case "/": search(); break;
      case "?": help(); break;
      default: handled = false;
    }
    if (handled) event.preventDefault();
  });

  document.addEventListener("click", function (event) {
    var item = event.target.closest && event.target.closest("[data-item]");
    if (item) mark(item);
    if (!event.target.closest) return;
    if (event.target.closest("[data-help-open]")) help();
    if (event.target.closest("[data-bulk-clear]")) {
      clearSelectAll();
      tickVisible(false);
      updateCount();
    }
    if (event.target.closest("[data-bulk-cancel]")) {
      var status = document.querySelector("[data-bulk-status]");
      if (status) status.replaceChildren();
    }
  });

  document.addEventListener("change", function (event) {
    if (event.target.matches && event.target.matches("[data-select]")) selectionChanged(event.target);
  });

  // After a decision swaps an item, keep the reviewer's place: the swapped item stays (one
  // line, showing what happened) and the focus moves on to the next open one.
  document.body.addEventListener("htmx:afterSwap", function (event) {
    var detail = event.detail || {};
    var targetId = detail.target && detail.target.id;
    if (targetId === "results") clearSelectAll(); // new filters: the old filter's selection ends
    if (selectAll() && (targetId === "bulk-all" || (detail.target && detail.target.matches && detail.target.matches(".more")))) {
      tickVisible(true); // what is on screen (and what "More" brings) is part of it
    }
    var decided = detail.requestConfig && detail.requestConfig.verb === "post";
    var swapped = null;
    if (decided) {
      var id = detail.target && detail.target.id;
      swapped = id ? document.getElementById(id) : null;
    }
    if (swapped && swapped.matches("[data-item]")) {
      var done = swapped.dataset.outcome === "success";
      var undone = detail.requestConfig.path && /\/undo$/.test(detail.requestConfig.path);
      var next = done && !undone ? nextOpenAfter(swapped) : null;
      var more = done && !undone && !next ? document.querySelector("[data-more]") : null;
      focusItem(next || swapped);
      if (more) {
        // The last open item on screen was decided: fetch the next page rather than leave the
        // reviewer on a decided line (one key per approval, page after page).
        continueAfter = swapped;
        more.click();
      }
    } else if (continueAfter && detail.target && detail.target.matches && detail.target.matches(".more")) {
      // Unless the reviewer has moved elsewhere meanwhile.
      var following = current === continueAfter ? nextOpenAfter(continueAfter) : null;
      continueAfter = null;
      if (following) focusItem(following);
    } else if (!document.body.contains(current)) {
      current = null;
      currentItem();
    }
    updateCount();
  });

  document.body.addEventListener("htmx:oobAfterSwap", function (event) {
    if (event.detail && event.detail.target && event.detail.target.id === "toast") armToast();
  });

  document.addEventListener("DOMContentLoaded", function () {
    updateCount();
    currentItem();
  });
})();
