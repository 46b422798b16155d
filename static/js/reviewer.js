// Keyboard operation of the review queue. Every key only finds a form or control that the
// page already shows and submits/opens it, so the same actions work by mouse and without
// JavaScript. Nothing here builds markup: htmx swaps server-rendered (escaped) partials, and
// the one message with no server answer to show (a decision that never arrived) is a copy of
// the page's <template data-decision-failed>. A decision does not wait for its answer: the
// item says "sending" and the focus moves on at once (see htmx:beforeRequest below).
// No inline scripts or handlers anywhere: this file is the page's only script besides htmx.
(function () {
  "use strict";

  var current = null;
  var toastTimer = null;
  // The id of the item decided last on the loaded pages while "More" fetches the next one:
  // when it arrives, the focus goes on to its first open item, as after any other decision.
  var continueAfter = null;
  // Decisions are sent in the background: the focus moves on at once and the item shows
  // "sending" (data-pending) until the answer swaps in its decided line. Each request has a
  // number; only the newest decision's answer may put its Undo in the toast, so that `u`
  // undoes the last decision made, not the last one answered.
  var sent = 0;
  var sequence = new WeakMap(); // xhr → its decision's number
  var undoWanted = 0; // `u` pressed while this decision was still on its way
  // The id of the item whose decision is the newest and was applied: `u` takes its line's own
  // Undo when the toast no longer offers it. A line in "Sent before the queue changed" outlives
  // the swaps of the queue region, and a claim's toast (or another notice) replaces the Undo
  // its answer put in the toast, while the decision is still the one to take back.
  var newestApplied = null;

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
    prefetchBodies(item);
  }

  // The bodies of the focused item and of the next open ones are fetched ahead, as the next
  // page is, so that `r` and `e` find the reason field and the editor there instead of
  // fetching it then. Only while no decision is on its way (and again when the last one is
  // answered): on two workers a body asked for meanwhile queues with the decisions, makes
  // their answers later and still comes too late for a reviewer deciding every 50 ms (the
  // keyboard bench: with bodies fetched regardless, its rejections and edits got slower).
  // Not further ahead: most items are approved from their line, and every body fetched is a
  // request the server answers.
  var BODIES_AHEAD = 2;
  var prefetching = null;
  function decisionsOnTheirWay() {
    return !!document.querySelector("[data-item][data-pending]");
  }

  function prefetchBodies(item) {
    if (prefetching) clearTimeout(prefetching);
    // After the decision that moved the focus has been sent (it counts as on its way).
    prefetching = setTimeout(function () {
      prefetching = null;
      if (!document.body.contains(item) || decisionsOnTheirWay()) return;
      var list = items();
      var wanted = 0;
      for (var i = list.indexOf(item); i >= 0 && i < list.length && wanted <= BODIES_AHEAD; i++) {
        if (!isOpen(list[i])) continue; // a decided line, or one on its way, has no use for its body
        wanted += 1;
        fetchBody(list[i]);
      }
    }, 0);
  }

  // An item's body is fetched once: when the item is first opened or ahead (above). The
  // script asks for it (the body's hx-trigger is the event "fetch-body"), not htmx's "toggle
  // once": htmx forgets "once" whenever it binds an element anew, and it does so when a
  // request in flight has changed the element's class; the body was then fetched twice, the
  // second swap wiping a reason being typed.
  var bodyAsked = new WeakSet(); // the items' <details>
  function fetchBody(item) {
    var details = item && item.querySelector("details[data-expand][hx-get]");
    if (!details || bodyAsked.has(details) || bodyLoaded(item) || !window.htmx) return;
    bodyAsked.add(details);
    window.htmx.trigger(bound(details), "fetch-body");
  }

  // toggle does not bubble: listened to on its way down.
  document.addEventListener("toggle", function (event) {
    var details = event.target;
    if (details.open && details.matches && details.matches("details[data-expand]")) fetchBody(details.closest("[data-item]"));
    // Reject or edit opened by the mouse: its field takes the focus, as the keys r and e give it.
    if (details.open && details.matches && details.matches("details[data-action]")) {
      var field = details.querySelector("input:not([type=hidden]), textarea");
      if (field && document.activeElement !== field) focusField(field);
    }
  }, true);

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

  function isOpen(item) {
    return item.dataset.open === "1" && !item.hasAttribute("data-pending");
  }

  // How many open items follow this one on screen (up to AHEAD).
  var AHEAD = 5;
  function openAfter(item) {
    var list = items();
    var count = 0;
    for (var i = list.indexOf(item) + 1; i < list.length && count < AHEAD; i++) {
      if (isOpen(list[i])) count += 1;
    }
    return count;
  }

  function nextOpenAfter(item) {
    var list = items();
    for (var i = list.indexOf(item) + 1; i < list.length; i++) {
      if (isOpen(list[i])) return list[i];
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
    bound(form); // not its item: a body on its way would be bound anew (see fetchBody)
    if (form.requestSubmit) form.requestSubmit();
    else form.submit();
    return true;
  }

  function submit(selector) {
    var item = currentItem();
    if (item && item.hasAttribute("data-pending")) return true; // already on its way
    return send(item && item.querySelector(selector));
  }

  function approve() {
    // A conflict has no plain approve form: approving it is "take the proposed value".
    if (submit('form[data-action="approve"]')) return;
    var item = currentItem();
    if (item && item.hasAttribute("data-pending")) return;
    var takeNew = item && item.querySelector('[data-resolution="take_new"]');
    if (!takeNew) return;
    bound(takeNew.form);
    takeNew.click();
  }

  function focusField(field) {
    if (!field) return;
    field.focus();
    if (field.select) field.select();
  }

  function expand(item, open) {
    var details = item && item.querySelector("details[data-expand]"); // opened, it asks for its body (toggle)
    if (details) details.open = open === undefined ? !details.open : open;
    return details;
  }

  // An item's body (its context and the edit, reject and settle forms) is fetched by htmx
  // when the item is first opened ("toggle once" on its <details>). A key that needs the
  // body waits for it; what the reviewer types meanwhile is kept and given to the field.
  // A line that is out of date when opened (a colleague decided it) comes back whole instead.
  var awaiting = null; // { item, run(item), keys: [{ key, submit }], timer }

  function bodyLoaded(item) {
    return !item.querySelector("[data-body-pending]");
  }

  function withBody(item, run) {
    if (awaiting) clearTimeout(awaiting.timer);
    awaiting = null;
    expand(item, true);
    if (bodyLoaded(item)) {
      run(item);
      return;
    }
    awaiting = { item: item, run: run, keys: [] };
    awaiting.timer = setTimeout(function () { awaiting = null; }, 10000); // never a stuck keyboard
  }

  function bodyArrived() {
    if (!awaiting) return;
    var pending = awaiting;
    if (!document.body.contains(pending.item)) {
      clearTimeout(pending.timer);
      awaiting = null; // the item was swapped meanwhile (a decision): its keys go nowhere
      return;
    }
    if (!bodyLoaded(pending.item)) return;
    clearTimeout(pending.timer);
    awaiting = null;
    var field = pending.run(pending.item);
    if (field) replay(field, pending.keys);
  }

  function replay(field, keys) {
    // As typing would have: the first key replaces the selected value, Enter sends a reason
    // (in the editor it is a new line; Ctrl/Cmd+Enter saves).
    keys.forEach(function (typed) {
      var start = field.selectionStart, end = field.selectionEnd;
      if (typed.submit || (typed.key === "Enter" && field.tagName !== "TEXTAREA")) {
        send(field.form);
      } else if (typed.key === "Backspace") {
        if (start === end && start > 0) start -= 1;
        field.setRangeText("", start, end, "end");
      } else {
        field.setRangeText(typed.key === "Enter" ? "\n" : typed.key, start, end, "end");
      }
    });
  }

  // While a body is on its way: Esc gives up, a printable key, Enter or Backspace is kept.
  function holdKey(event) {
    if (event.key === "Escape") {
      clearTimeout(awaiting.timer);
      awaiting = null;
    } else if (event.key === "Enter" || event.key === "Backspace" || (event.key.length === 1 && !event.ctrlKey && !event.metaKey && !event.altKey)) {
      awaiting.keys.push({ key: event.key, submit: event.key === "Enter" && (event.ctrlKey || event.metaKey) });
    } else {
      return;
    }
    event.preventDefault();
  }

  function openAction(action, fieldSelector) {
    var item = currentItem();
    if (!item) return;
    withBody(item, function (item) {
      var details = item.querySelector('details[data-action="' + action + '"]');
      var field = null;
      if (details) {
        details.open = true;
        field = details.querySelector(fieldSelector);
      } else if (action === "edit") {
        field = item.querySelector("[data-merged-value]"); // a conflict: edit to a merged value
      }
      focusField(field);
      return field;
    });
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
    // The last decision is still on its way: undo it as soon as it is made.
    if (sent && document.querySelector('[data-item][data-pending="' + sent + '"]')) {
      undoWanted = sent;
      return;
    }
    var line = newestApplied && document.getElementById(newestApplied);
    send(
      document.querySelector("#toast form[data-undo]")
      || (line && line.querySelector("form[data-undo]"))
      || (currentItem() && currentItem().querySelector("form[data-undo]"))
    );
  }

  function claim() {
    var button = document.querySelector("[data-claim-form] [data-claim]");
    if (button) button.click();
  }

  function search() {
    var fold = document.querySelector("[data-filters-fold]");
    if (fold) fold.open = true;
    focusField(document.querySelector("[data-search]"));
  }

  // On a phone the filters stand above the queue and fill the first screen: folded there,
  // unless the page was opened with filters, which then show what is applied.
  function foldFilters() {
    var fold = document.querySelector("[data-filters-fold]");
    if (!fold || !window.matchMedia("(max-width: 900px)").matches) return;
    var params = new URLSearchParams(window.location.search);
    params.delete("cursor");
    if (!Array.from(params.keys()).length) fold.open = false;
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
    if (awaiting) {
      holdKey(event);
      return;
    }
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
    if (event.target.closest("[data-late-clear]")) {
      // The answered lines go; a line still on its way stays until its answer is seen.
      lateList().querySelectorAll("[data-item]:not([data-pending])").forEach(function (item) { item.remove(); });
      showLate();
    }
    if (event.target.closest("[data-bulk-cancel]")) {
      var status = document.querySelector("[data-bulk-status]");
      if (status) status.replaceChildren();
    }
  });

  document.addEventListener("change", function (event) {
    if (event.target.matches && event.target.matches("[data-select]")) selectionChanged(event.target);
  });

  // A decision (any form of an item but its Undo) as htmx sends it.
  function decisionOf(detail) {
    var target = detail && detail.target;
    var config = detail && detail.requestConfig;
    if (!target || !target.matches || !target.matches("[data-item]") || !config || config.verb !== "post") return null;
    if (detail.elt && detail.elt.closest && detail.elt.closest("form[data-undo]")) return null;
    return target;
  }

  function collapse(item) {
    item.querySelectorAll("details[open]").forEach(function (details) { details.open = false; });
  }

  // Sent: the item shows it, the focus moves on without waiting for the answer.
  document.body.addEventListener("htmx:beforeRequest", function (event) {
    var detail = event.detail || {};
    var item = decisionOf(detail);
    if (!item) return;
    if (item.hasAttribute("data-pending")) {
      event.preventDefault(); // a second key or click on a decision already sent
      return;
    }
    sent += 1;
    sequence.set(detail.xhr, sent);
    newestApplied = null; // this one is the newest now, once it is applied
    var old = item.querySelector("[data-failed]");
    if (old) old.remove();
    item.setAttribute("data-pending", String(sent));
    item.setAttribute("aria-busy", "true");
    dropBody(item);
    var wasCurrent = !current || current === item || !document.body.contains(current) || item.contains(document.activeElement);
    collapse(item);
    if (!wasCurrent) return; // decided by mouse elsewhere: the reviewer's place stays
    var next = nextOpenAfter(item);
    if (next) {
      focusItem(next);
      // Nearly the last open item on screen: fetch the next page while the reviewer works on
      // these, so that deciding the last one moves on at once too.
      var ahead = openAfter(next) < AHEAD && document.querySelector("[data-more]");
      if (ahead && !ahead.classList.contains("htmx-request")) ahead.click();
    } else {
      var more = document.querySelector("[data-more]");
      focusItem(item);
      if (more) {
        // The last open item on screen: fetch the next page rather than leave the reviewer
        // on a decided line (one key per approval, page after page).
        continueAfter = item.id;
        more.click();
      }
    }
  });

  // A refusal comes back as the item with its notice (409 decided by someone else, 400 bad
  // input): swap it in like an answer. Other failures have no item to show. A claim's or a
  // bulk decision's 400 carries its reason too (the toast; the notice under the bulk bar), and
  // so does the filter form's (the filters left out, above the results), and a comment's
  // (an empty or too long text, beside the field).
  // The form is the request's: htmx sets this event's detail.elt to the swap's target.
  document.body.addEventListener("htmx:beforeSwap", function (event) {
    var detail = event.detail || {};
    var sender = detail.requestConfig && detail.requestConfig.elt;
    var form = sender && sender.matches && sender.matches("[data-claim-form], [data-bulk-form], [data-filters], [data-counts], [data-comment-form]");
    if ((decisionOf(detail) || form) && detail.xhr && (detail.xhr.status === 409 || detail.xhr.status === 400)) {
      detail.shouldSwap = true;
      detail.isError = false;
    }
  });

  // The headline counts, asked for once the page is shown: when they cannot be had (a 500, no
  // network), the placeholder says so instead of "Counting…" for ever.
  function countsFailed(event) {
    var asker = event.detail && event.detail.elt;
    if (!asker || !asker.matches || !asker.matches("[data-counts-pending]")) return;
    asker.removeAttribute("aria-busy");
    var status = asker.querySelector("[data-counts-status]");
    if (status) status.textContent = asker.getAttribute("data-failed-text") || "";
  }
  document.body.addEventListener("htmx:responseError", countsFailed);
  document.body.addEventListener("htmx:sendError", countsFailed);

  // A claim or a filter change replaces the queue region while decisions may still be on their
  // way. Their lines must outlive the swap: the answer is swapped into the element it was sent
  // from, and on a line no longer in the page it would show nowhere (nor would a refusal).
  // So a line still "sending" takes the place of its copy in the new region (the same item,
  // shown before its decision was made: it must not be decided twice) or, when the new region
  // does not show the item, moves to the page's list of decisions sent before the queue
  // changed. Holding the swap until they are answered was the other way; it would keep `c`
  // and the filters waiting for the slowest decision, seconds when the server is slow.
  var carried = [];
  document.body.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail && event.detail.target;
    if (target && target.id === "results") {
      carried = Array.prototype.slice.call(target.querySelectorAll("[data-item][data-pending]"));
    }
  });

  function lateList() {
    return document.querySelector("[data-late-items]");
  }

  function showLate() {
    var late = lateList();
    if (late) late.closest("[data-late]").hidden = !late.querySelector("[data-item]");
  }

  function carryOver(results) {
    var late = lateList();
    carried.forEach(function (item) {
      var twin = results.querySelector("#" + item.id);
      if (twin) twin.replaceWith(item);
      else if (late) late.appendChild(item);
      if (item === current) current = null; // the reviewer's place is an open item of the new region
    });
    carried = [];
    // A line answered here earlier that the new region shows again: the region's is newer.
    if (late) {
      late.querySelectorAll("[data-item]:not([data-pending])").forEach(function (item) {
        if (results.querySelector("#" + item.id)) item.remove();
      });
    }
    showLate();
  }

  // A decision supersedes its item's body still on its way (fetched ahead, mostly): the
  // answer brings the item as it is now, and a body made after the decision (the whole item,
  // out of date) would replace the line the answer is meant for. So the body's request is
  // aborted, and one that comes anyway while the decision is on its way is not shown. If the
  // decision does not go through, opening the item asks again.
  function dropBody(item) {
    var asker = item.querySelector("details[data-expand][hx-get]");
    if (!asker || bodyLoaded(item)) return;
    if (window.htmx) window.htmx.trigger(asker, "htmx:abort");
    bodyAsked.delete(asker);
    if (awaiting && awaiting.item === item) {
      clearTimeout(awaiting.timer);
      awaiting = null;
    }
  }

  var bodyWasOpen = false; // the <details> of the last body to come: opened, or fetched ahead
  document.body.addEventListener("htmx:beforeSwap", function (event) {
    var detail = event.detail || {};
    var asker = detail.elt;
    if (!asker || !asker.matches || !asker.matches("details[data-expand]")) return;
    bodyWasOpen = asker.open;
    var item = asker.closest("[data-item]");
    if (item && item.hasAttribute("data-pending")) {
      detail.shouldSwap = false;
      bodyAsked.delete(asker);
    }
  });

  // Only the newest decision's answer replaces the toast (an older one answered late would put
  // its Undo where `u` finds it); refusals always show.
  var swapping = 0;
  document.body.addEventListener("htmx:beforeSwap", function (event) {
    var detail = event.detail || {};
    swapping = (detail.xhr && sequence.get(detail.xhr)) || 0;
  });
  document.body.addEventListener("htmx:oobBeforeSwap", function (event) {
    var detail = event.detail || {};
    if (detail.target && detail.target.id === "toast" && swapping && swapping < sent
        && detail.fragment && detail.fragment.querySelector && detail.fragment.querySelector("form[data-undo]")) {
      detail.shouldSwap = false;
    }
  });

  // No answer to swap in (a 403, a 500, no network): the item is open again and says that its
  // decision was not applied; the focus stays where the reviewer is now.
  function failed(event, kind) {
    var detail = event.detail || {};
    var item = decisionOf(detail);
    if (!item) return;
    if (kind === "refused" && detail.xhr && detail.xhr.status >= 500) kind = "server";
    var pending = item.getAttribute("data-pending");
    item.removeAttribute("data-pending");
    item.removeAttribute("aria-busy");
    if (undoWanted && String(undoWanted) === pending) undoWanted = 0;
    var template = document.querySelector("template[data-decision-failed]");
    var notice = template && template.content.querySelector('[data-failed="' + kind + '"]');
    if (!notice) return;
    var old = item.querySelector("[data-failed]");
    if (old) old.remove();
    item.insertBefore(notice.cloneNode(true), item.firstChild);
    if (current && document.body.contains(current)) prefetchBodies(current);
    var toast = document.getElementById("toast");
    if (toast) {
      var text = document.createElement("span");
      text.textContent = notice.textContent;
      toast.replaceChildren(text);
      toast.className = "toast error";
      toast.dataset.expires = "8";
      armToast();
    }
  }

  document.body.addEventListener("htmx:responseError", function (event) { failed(event, "refused"); });
  document.body.addEventListener("htmx:sendError", function (event) { failed(event, "network"); });
  document.body.addEventListener("htmx:timeout", function (event) { failed(event, "network"); });

  // Whatever htmx swaps in is bound at once, not when it settles (~20 ms later): a reason
  // field of a body that has just arrived has the focus, and an Enter typed in it in that
  // window submitted its bare form, a page load that lost the reviewer's place (the keys'
  // own send() binds too, but Enter in a field is the browser's). Registered first, so the
  // listeners below find the markup bound; htmx binds nothing twice.
  document.body.addEventListener("htmx:afterSwap", function (event) {
    if (event.target instanceof Element) bound(event.target);
  });

  // After a decision swaps an item, keep the reviewer's place: the swapped item stays (one
  // line, showing what happened) and the focus, moved on when it was sent, stays there.
  document.body.addEventListener("htmx:afterSwap", function (event) {
    var detail = event.detail || {};
    if (detail.target && detail.target.matches && detail.target.matches("[data-body]")) {
      bodyArrived(); // an item's body: nothing else on the page changed
      return;
    }
    var opened = event.target;
    if (detail.requestConfig && detail.requestConfig.verb === "get" && opened.matches && opened.matches("[data-item]")) {
      // The item was out of date when opened: it came back whole, as it is now.
      // It takes the focus only from itself or when a key waits for it: decisions are sent in
      // the background, and the reviewer may be several items further by now.
      var waitedFor = awaiting && awaiting.item.id === opened.id;
      if (waitedFor) awaiting.item = opened;
      // Fetched ahead, not opened: it stays a line (with its notice, outside the details).
      if (!waitedFor && !bodyWasOpen) collapse(opened);
      if (waitedFor || !document.body.contains(current) || current.id === opened.id) focusItem(opened);
      bodyArrived();
      return;
    }
    var targetId = detail.target && detail.target.id;
    if (targetId === "results") {
      clearSelectAll(); // new filters: the old filter's selection ends
      carryOver(detail.target);
    }
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
      var number = (detail.xhr && sequence.get(detail.xhr)) || 0;
      if (done && !undone && number && number === sent) newestApplied = swapped.id;
      else if (undone && swapped.id === newestApplied) newestApplied = null;
      if (undone || !document.body.contains(current) || current.id === swapped.id) {
        // The focus was still on this item (undo; or nothing was left to move on to).
        var next = done && !undone ? nextOpenAfter(swapped) : null;
        focusItem(next || swapped);
      }
      if (current && document.body.contains(current) && !decisionsOnTheirWay()) prefetchBodies(current);
      if (number && number === undoWanted) {
        undoWanted = 0;
        var undoForm = done && document.querySelector("#toast form[data-undo]");
        if (undoForm && undoForm.getAttribute("action").indexOf("/" + swapped.id.replace("item-", "") + "/") !== -1) send(undoForm);
      }
    } else if (continueAfter && detail.target && detail.target.matches && detail.target.matches(".more")) {
      // Unless the reviewer has moved elsewhere meanwhile.
      var decidedLast = document.getElementById(continueAfter);
      var following = decidedLast && current && current.id === continueAfter ? nextOpenAfter(decidedLast) : null;
      continueAfter = null;
      if (following) focusItem(following);
    } else if (!document.body.contains(current)) {
      // New results (a filter, a claim): the same item if it is still there and open, else
      // the first open one.
      var again = current && current.id ? document.getElementById(current.id) : null;
      current = null;
      if (again && isOpen(again)) focusItem(again);
      else focusItem(items().filter(isOpen)[0] || items()[0]);
    }
    updateCount();
  });

  // A body that could not be fetched: the keys held for it are dropped, the keyboard is free
  // again (the body still offers the link to the item's own page).
  ["htmx:responseError", "htmx:sendError"].forEach(function (name) {
    document.body.addEventListener(name, function (event) {
      var target = event.detail && event.detail.target;
      if (target && target.matches && target.matches("[data-body]")) {
        bodyAsked.delete(event.detail.elt); // opening it again asks again
        if (awaiting) {
          clearTimeout(awaiting.timer);
          awaiting = null;
        }
      }
    });
  });

  document.body.addEventListener("htmx:oobAfterSwap", function (event) {
    if (event.detail && event.detail.target && event.detail.target.id === "toast") armToast();
  });

  document.addEventListener("DOMContentLoaded", function () {
    foldFilters();
    updateCount();
    currentItem();
  });
})();
