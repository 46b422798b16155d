"""Benchmark: deciding the review queue by keyboard alone, in Chromium, against gunicorn.

Makes its own database (``memory_portal_bench_keys``, dropped and made anew), seeds
``--items`` candidates waiting for review (field ``preference``, seven subjects), starts gunicorn on a free port, signs a reviewer in through the login
form and decides ``--decisions`` items with nothing but key presses:

* most are plain approvals: ``a``;
* some rejections: ``r``, the reason typed, ``Enter``;
* some edits: ``e``, the corrected value typed, ``Ctrl+Enter``;
* once ``c`` (claim the next items: the page reloads) before a decision, and once ``u``
  (undo the approval just made; the item is open again and is then approved once more).

For every decision it counts the key presses and measures, inside the page with
``performance.now()`` (listeners injected before the page's own script), from the decisive
key (``a``, ``Enter``, ``Ctrl+Enter``, ``u``, ``c``):

* browser: until the next item is focused (``focusin`` on another ``[data-item]``,
  ``document.activeElement`` checked) *and* the decided item shows its decision, pending
  (``data-pending``: sent, no answer yet) or done (``data-open="0"``, the server's line),
  whichever comes later; this is the figure the target is about;
* server: the decision request from sent to answered (Resource Timing of the XHR);
* done: from the key until that answer arrived (the decision is then made).

If the focus does not move by itself, the bench presses ``j`` and counts the extra key.

At the end the database must hold exactly what was decided: every approval approved with
its value, every edit approved with the typed value, every rejection rejected with its
reason, the undone item approved once more, the rest still waiting.

    python bench/reviewer_keys.py [--decisions 100] [--items 130] [--workers 2] [--think-ms 0] [--headed]

``--think-ms`` pauses before each decision, as a reviewer reading the item would (the bench
otherwise decides as fast as the keys go, faster than two workers answer).

Exit status 1 if a plain approval took other than one key press, if a decision is lost
or wrong in the database, or if the focus never reached the next item.
Target (issue 13): a plain approval is one key press and the next item is focused in
under 100 ms.
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

from bench.common import ensure_database, free_port, server_env, start, stop, wait_until  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_portal.settings")
DATABASE_URL = "postgres://postgres@127.0.0.1:5432/memory_portal_bench_keys"
ENV = server_env("keys", DJANGO_SECURE_COOKIES="0")  # plain HTTP to our own loopback server
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
USERNAME, PASSWORD = "bench-keys-reviewer", "bench-keys-password-1"
TARGET_MS = 100

# Runs in every document before the page's own script (the strict CSP allows no inline
# script; an init script is the browser's, not the page's). Times are absolute
# (timeOrigin + now) so that a key pressed before a reload compares with a focus after it;
# the last key is kept in sessionStorage for the same reason.
PROBE = """
(() => {
  const now = () => performance.timeOrigin + performance.now();
  window.__focus = [];
  window.__marks = [];
  // Every decision request of the session, however many (the default buffer holds 250).
  performance.setResourceTimingBufferSize(100000);
  document.addEventListener("keydown", (event) => {
    sessionStorage.setItem("benchKey", JSON.stringify({ key: event.key, t: now() }));
  }, true);
  document.addEventListener("focusin", (event) => {
    const item = event.target.closest && event.target.closest("[data-item]");
    if (item && event.target === item) {
      window.__focus.push({ id: item.id, open: item.dataset.open === "1" && !item.hasAttribute("data-pending"), t: now() });
    }
  }, true);
  // When an item first shows a decision, pending (sent, no answer yet) or done (the server's
  // decided line swapped in): the reviewer sees that the key did something.
  const shown = (node) => {
    if (node.nodeType !== 1) return;
    const items = node.matches("[data-item]") ? [node] : [...node.querySelectorAll("[data-item]")];
    for (const item of items) {
      const state = item.hasAttribute("data-pending") ? "pending" : item.dataset.open === "0" ? "done" : "";
      if (state) window.__marks.push({ id: item.id, state, t: now() });
    }
  };
  new MutationObserver((records) => {
    for (const record of records) {
      if (record.type === "attributes") shown(record.target);
      else record.addedNodes.forEach(shown);
    }
  }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-pending", "data-open"] });
})();
"""


@dataclass
class Decision:
    kind: str  # approve, approve at a page's end, reject, edit, undo, claim
    candidate_id: int
    keys: int  # every key pressed for it, typed characters included
    command_keys: int  # the keys that are not typed text
    ms: float | None  # decisive key → next item focused and this one shown pending or done (the later)
    extra_keys: list[str] = field(default_factory=list)
    key_at: float | None = None  # the decisive key, ms since the epoch (the browser's clock)
    focus_ms: float | None = None  # decisive key → next item focused
    shown_ms: float | None = None  # decisive key → this item shown pending or done
    server_ms: float | None = None  # the decision request: sent → answer received (the server's time)
    done_ms: float | None = None  # decisive key → the server's answer received (the decision is made)


def seed(count: int):
    from django.core.management import call_command

    from reviews.actors import Actor
    from reviews.models import Candidate, CandidateStatus, Role
    from reviews.domain import CandidateInput
    from reviews.services.candidates import candidates_submit
    from reviews.services.tenants import staff_create, tenant_create

    call_command("migrate", verbosity=0)
    tenant = tenant_create(slug="bench-keys", name="Keyboard benchmark")
    staff_create(tenant=tenant, username=USERNAME, role=Role.REVIEWER, password=PASSWORD)
    ids = []
    for n in range(count):
        user_id = f"user-{n % 7}"
        results = candidates_submit(
            tenant=tenant,
            user_id=user_id,
            candidates=[CandidateInput(entity_type="user", entity_id="me", field="preference", value=f"topic {n}",
                                       confidence=0.85, evidence=f"topic {n}")],
            source="chat",
            actor=Actor("api_key", "bench"),
            extractor="rules",
            prompt_version="v1",
        )
        ids.append(results[0].candidate_id)
    waiting = Candidate.objects.filter(pk__in=ids, status=CandidateStatus.PENDING_REVIEW).count()
    if waiting != count:
        raise SystemExit(f"seeded {count} candidates but {waiting} wait for review (the policy's thresholds?)")
    return tenant, ids


def plan(decisions: int) -> list[str]:
    """What to do for each decision: mostly plain approvals, a few of everything else."""
    kinds = ["approve"] * decisions
    for index in (decisions * 10 // 100, decisions * 45 // 100, decisions * 80 // 100):
        kinds[index] = "reject"
    for index in (decisions * 25 // 100, decisions * 65 // 100):
        kinds[index] = "edit"
    kinds[decisions * 35 // 100] = "approve+undo"
    kinds[decisions * 5 // 100] = "claim+approve"
    return kinds


@dataclass
class Timing:
    ms: float | None
    key_at: float | None
    focus_ms: float | None
    shown_ms: float | None


class Driver:
    def __init__(self, page):
        self.page = page

    def focused_item(self) -> str:
        return self.page.evaluate("() => { const a = document.activeElement; return a && a.matches('[data-item]') ? a.id : ''; }")

    def focus_log_length(self) -> int:
        return self.page.evaluate("() => window.__focus.length")

    def wait_for_focus(self, since: int, *, away_from: str | None = None, on: str | None = None,
                       decided: str | None = None, timeout: float = 5_000) -> Timing:
        """From the last key to the first open item focused after ``since`` (another item than
        ``away_from``, or ``on``) and, with ``decided``, to that item showing its decision
        (pending or done); ms None if either did not happen in time."""
        condition = """([since, away, on, decided]) => {
            const key = JSON.parse(sessionStorage.getItem("benchKey"));
            const focus = window.__focus.slice(since).find(
                (f) => f.open && (on ? f.id === on : f.id !== away));
            const mark = decided ? window.__marks.find((m) => m.id === decided && m.t >= key.t) : null;
            if (!focus || !document.activeElement || document.activeElement.id !== focus.id) return null;
            if (decided && !mark) return null;
            return { key: key.t, focus: focus.t - key.t, shown: mark ? mark.t - key.t : null };
        }"""
        arg = [since, away_from, on, decided]
        try:
            self.page.wait_for_function(condition, arg=arg, timeout=timeout)
        except Exception:  # noqa: BLE001 - Playwright's TimeoutError: the focus did not move
            key = self.page.evaluate("() => JSON.parse(sessionStorage.getItem('benchKey')).t")
            return Timing(None, key, None, None)
        found = self.page.evaluate(condition, arg)
        ms = max(found["focus"], found["shown"] if found["shown"] is not None else found["focus"])
        return Timing(ms, found["key"], found["focus"], found["shown"])

    def requests(self) -> list[dict]:
        """Every XHR the page made and completed: its path, sent and answered (epoch ms)."""
        return self.page.evaluate(
            """() => performance.getEntriesByType("resource")
                 .filter((e) => e.initiatorType === "xmlhttprequest")
                 .map((e) => ({ path: new URL(e.name).pathname, sent: performance.timeOrigin + e.startTime,
                                answered: performance.timeOrigin + e.responseEnd }))"""
        )


def candidate_of(item_id: str) -> int:
    return int(item_id.removeprefix("item-"))


def run(args) -> int:
    os.environ.update(ENV, DATABASE_URL=args.database_url)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ensure_database(args.database_url, reset=True)

    import django

    django.setup()
    from playwright.sync_api import sync_playwright

    tenant, ids = seed(args.items)
    logs = ROOT / "artifacts" / "reviewer_keys"
    logs.mkdir(parents=True, exist_ok=True)
    port = free_port()
    server = start([sys.executable, "-m", "gunicorn", "memory_portal.wsgi:application", "--workers", str(args.workers),
                    "--bind", f"127.0.0.1:{port}", "--log-level", "warning"], env, logs / "gunicorn.log", ROOT)
    base = f"http://127.0.0.1:{port}"
    decided: list[Decision] = []
    expected: dict[int, tuple[str, str]] = {}  # candidate → (status, value or reason)
    problems: list[str] = []
    try:
        import httpx

        def answers():
            try:
                return httpx.get(f"{base}/readyz", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(answers, 60, "gunicorn")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=not args.headed)
            context = browser.new_context(base_url=base, locale="en-US", viewport={"width": 1280, "height": 900})
            context.add_init_script(PROBE)
            page = context.new_page()
            page.set_default_timeout(15_000)
            page.goto("/login/")
            page.fill("input[name=username]", USERNAME)
            page.fill("input[name=password]", PASSWORD)
            page.click("form:has(input[name=password]) button[type=submit]")
            page.wait_for_url("**/review/")
            page.wait_for_load_state("networkidle")
            driver = Driver(page)
            if not driver.focused_item():
                problems.append("the queue opened without an item focused")
                page.keyboard.press("j")
            started = time.perf_counter()
            for index, kind in enumerate(plan(args.decisions)):
                if args.think_ms:
                    page.wait_for_timeout(args.think_ms)  # the reviewer reads the item first
                if kind == "claim+approve":
                    current = driver.focused_item()
                    since = driver.focus_log_length()
                    page.evaluate("() => { window.__beforeClaim = true; document.getElementById('page').__old = true; }")
                    page.keyboard.press("c")
                    # The queue region is swapped in with the claim made (a new #page; or, by a
                    # plain form, the page reloads: a new document has no __beforeClaim and a
                    # fresh focus log), and an item focused after it.
                    page.wait_for_function(
                        """(since) => (!window.__beforeClaim
                               || (!document.getElementById('page').__old && window.__focus.length > since))
                             && document.activeElement && document.activeElement.matches('[data-item]')""",
                        arg=since,
                    )
                    found = page.evaluate(
                        """(since) => { const key = JSON.parse(sessionStorage.getItem('benchKey'));
                             const f = window.__focus[window.__beforeClaim ? window.__focus.length - 1 : 0];
                             return f && key.key === 'c' ? { ms: f.t - key.t, key: key.t } : null; }""",
                        since,
                    )
                    claim = Decision("claim", candidate_of(current), 1, 1, found and found["ms"])
                    claim.key_at, claim.focus_ms = found and found["key"], found and found["ms"]
                    decided.append(claim)
                    if "claimed by you" not in (page.locator(f"#{driver.focused_item()}").text_content() or ""):
                        problems.append("after c the focused item does not say it is claimed by the reviewer")
                    kind = "approve"
                current = driver.focused_item()
                if not current:
                    problems.append(f"decision {index + 1}: no item has the focus")
                    break
                pk = candidate_of(current)
                at_page_end = page.evaluate(
                    """(id) => { const items = [...document.querySelectorAll('[data-item]')];
                                 const i = items.findIndex((x) => x.id === id);
                                 return !items.slice(i + 1).some((x) => x.dataset.open === '1'); }""",
                    current,
                )
                since = driver.focus_log_length()
                typed = ""
                if kind in ("approve", "approve+undo"):
                    page.keyboard.press("a")
                    keys, command = 1, 1
                    expected[pk] = ("approved", f"topic {ids.index(pk)}")
                elif kind == "reject":
                    typed = f"not a preference {index}"
                    page.keyboard.press("r")
                    page.keyboard.type(typed)
                    page.keyboard.press("Enter")
                    keys, command = 2 + len(typed), 2
                    expected[pk] = ("rejected", typed)
                else:  # edit
                    typed = f"topic {ids.index(pk)} (corrected)"
                    page.keyboard.press("e")
                    page.keyboard.type(typed)
                    page.keyboard.press("Control+Enter")
                    keys, command = 2 + len(typed), 2
                    expected[pk] = ("approved", typed)
                timing = driver.wait_for_focus(since, away_from=current, decided=current)
                key_at = timing.key_at
                extra = []
                while timing.ms is None and len(extra) < 3:  # the focus stayed: the reviewer moves on by hand
                    extra.append("j")
                    since = driver.focus_log_length()
                    page.keyboard.press("j")
                    timing = driver.wait_for_focus(since, away_from=current, decided=current, timeout=3_000)
                if timing.ms is None:
                    problems.append(f"decision {index + 1} ({kind}): the focus never reached another open item")
                label = {"approve": "approve", "approve+undo": "approve"}.get(kind, kind)
                if label == "approve" and at_page_end:
                    label = "approve, last on the page (loads More)"
                decided.append(Decision(label, pk, keys + len(extra), command + len(extra), timing.ms, extra,
                                        key_at, timing.focus_ms, timing.shown_ms))
                if kind == "approve+undo":
                    # Undo what was just approved: the toast's Undo (of this item), by key; the item
                    # is open again and keeps the focus, then it is approved once more.
                    page.wait_for_selector(f"#toast form[data-undo][action*='/candidates/{pk}/']")
                    since = driver.focus_log_length()
                    page.keyboard.press("u")
                    timing = driver.wait_for_focus(since, on=current)
                    decided.append(Decision("undo", pk, 1, 1, timing.ms, [], timing.key_at, timing.focus_ms))
                    if timing.ms is None:
                        problems.append("after u the undone item did not get the focus back")
                        break
                    since = driver.focus_log_length()
                    page.keyboard.press("a")
                    timing = driver.wait_for_focus(since, away_from=current, decided=current)
                    decided.append(Decision("approve", pk, 1, 1, timing.ms, [], timing.key_at, timing.focus_ms,
                                            timing.shown_ms))
            elapsed = time.perf_counter() - started
            # Decisions are sent in the background: the last ones may still be on their way.
            page.wait_for_function("() => !document.querySelector('[data-pending]')", timeout=60_000)
            answered = time.perf_counter() - started
            page.wait_for_load_state("networkidle")
            # Every answer is in: match each decision with its request (the first to its item's
            # address sent after its key).
            match_requests(decided, driver.requests())
            browser.close()
    finally:
        stop(server)
    return report(tenant, ids, decided, expected, problems, (elapsed, answered), args)


REQUEST_PATHS = {"undo": r"/undo$", "claim": r"/review/claim$"}


def match_requests(decided: list[Decision], requests: list[dict]) -> None:
    import re

    used = set()
    for decision in decided:
        if decision.key_at is None:
            continue
        pattern = REQUEST_PATHS.get(decision.kind, rf"/candidates/{decision.candidate_id}/(approve|reject|settle)$")
        for index, request in enumerate(requests):
            if index in used or request["sent"] < decision.key_at - 1 or not re.search(pattern, request["path"]):
                continue
            if decision.kind == "undo" and f"/candidates/{decision.candidate_id}/" not in request["path"]:
                continue
            used.add(index)
            decision.server_ms = request["answered"] - request["sent"]
            decision.done_ms = request["answered"] - decision.key_at
            break


def report(tenant, ids, decided, expected, problems, times, args) -> int:
    from reviews.models import AuditEvent, Candidate, CandidateStatus

    by_kind = defaultdict(list)
    for decision in decided:
        by_kind[decision.kind].append(decision)
    elapsed, answered = times
    print(f"\n{args.decisions} decisions by keyboard in {elapsed:.1f} s (the last answered at {answered:.1f} s)"
          f" on {os.cpu_count()} cores; gunicorn x{args.workers}, headless Chromium"
          + (f"; {args.think_ms} ms before each decision" if args.think_ms else ""))
    print("browser: the decisive key → the next item focused and the decided one shown pending or done (the later);"
          "\nserver: its request sent → answered; done: the key → the server's answer received (ms; median/p90/max)")
    print(f"{'action':<40} {'n':>4} {'keys each':>10} {'non-text':>9} {'browser':>14} {'server':>14} {'done':>14}")

    def spread(values) -> str:
        values = sorted(v for v in values if v is not None)
        if not values:
            return "-"
        p90 = values[min(len(values) - 1, int(len(values) * 0.9))]
        return f"{statistics.median(values):.0f}/{p90:.0f}/{values[-1]:.0f}"

    for kind, rows in by_kind.items():
        keys = sorted({d.keys for d in rows})
        command = sorted({d.command_keys for d in rows})
        cell = lambda values: "/".join(str(v) for v in values)  # noqa: E731
        print(f"{kind:<40} {len(rows):>4} {cell(keys):>10} {cell(command):>9} {spread(d.ms for d in rows):>14}"
              f" {spread(d.server_ms for d in rows):>14} {spread(d.done_ms for d in rows):>14}")
    plain = [d for d in decided if d.kind.startswith("approve")]
    if any(d.keys != 1 for d in plain):
        problems.append(
            "plain approvals that took more than one key: "
            + ", ".join(f"#{d.candidate_id} (+{' '.join(d.extra_keys)})" for d in plain if d.keys != 1)
        )
    total_keys = sum(d.keys for d in decided)
    print(f"key presses per decision, all kinds and typed text included: {total_keys / args.decisions:.2f}")
    plain_times = sorted(d.ms for d in plain if d.ms is not None)
    if plain_times:
        over = sum(1 for t in plain_times if t >= TARGET_MS)
        print(f"plain approvals: {len(plain)}, next item focused (and the decided one shown) in median "
              f"{statistics.median(plain_times):.0f} ms, {over} of them in {TARGET_MS} ms or more (target: under {TARGET_MS} ms)")
        server = sorted(d.server_ms for d in plain if d.server_ms is not None)
        done = sorted(d.done_ms for d in plain if d.done_ms is not None)
        if server:
            print(f"  their requests: server answered in median {statistics.median(server):.0f} ms "
                  f"(max {server[-1]:.0f}); decision made {statistics.median(done):.0f} ms after the key in median "
                  f"(max {done[-1]:.0f}); {len(server)} of {len(plain)} requests matched")

    # The database must say exactly what the keys decided.
    rows = {c.pk: c for c in Candidate.objects.filter(pk__in=ids)}
    if len(expected) != args.decisions:
        problems.append(f"{len(expected)} items decided, {args.decisions} planned")
    for pk, (status, text) in expected.items():
        row = rows[pk]
        if row.status != status:
            problems.append(f"candidate {pk}: {row.status}, expected {status}")
        elif status == "approved" and row.value != text:
            problems.append(f"candidate {pk}: value {row.value!r}, expected {text!r}")
        elif status == "rejected" and row.note != text:
            problems.append(f"candidate {pk}: reason {row.note!r}, expected {text!r}")
    untouched = [pk for pk in ids if pk not in expected and rows[pk].status != CandidateStatus.PENDING_REVIEW]
    if untouched:
        problems.append(f"decided without a key for it: {untouched}")
    undone = [d.candidate_id for d in decided if d.kind == "undo"]
    if undone and not AuditEvent.objects.filter(tenant_id=tenant.pk, action="candidate.decision_undone",
                                                object_id=str(undone[0])).exists():
        problems.append(f"no undo event for candidate {undone[0]}")
    decisions_logged = AuditEvent.objects.filter(
        tenant_id=tenant.pk, action__in=["candidate.approved", "candidate.edited_approved", "candidate.rejected"]
    ).count()
    if decisions_logged != args.decisions + len(undone):  # an undone approval was a decision too
        problems.append(f"{decisions_logged} decision events, expected {args.decisions + len(undone)}")
    print(f"database: {sum(1 for pk in expected if rows[pk].status == expected[pk][0])} of {len(expected)} "
          f"items in the decided state, {decisions_logged} decision events")
    for problem in problems:
        print(f"FAIL: {problem}")
    print("ok" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decisions", type=int, default=100)
    parser.add_argument("--items", type=int, default=130, help="candidates seeded (more than the decisions)")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--think-ms", type=int, default=0,
                        help="pause before each decision, as a reviewer reading the item (0: decide at once)")
    parser.add_argument("--headed", action="store_true", help="show the browser (needs a display)")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_KEYS_DATABASE_URL", DATABASE_URL))
    args = parser.parse_args()
    if args.items <= args.decisions:
        parser.error("--items must be more than --decisions")
    if args.decisions < 20:
        parser.error("--decisions must be at least 20 (the plan spreads every kind over them)")
    sys.exit(run(args))


if __name__ == "__main__":
    main()
