"""axe-core in the browser tests: ``assert_no_axe_violations(page)``.

The engine is the vendored ``vendor/axe.min.js`` (axe-core, MPL-2.0, licence beside it),
so the check runs offline and gives the same answer on every machine. It is evaluated
through Playwright's protocol channel rather than a ``<script>`` tag, so a strict
Content-Security-Policy on the page does not stop it.

A failure lists every violation readably: rule, impact, what it means, and the first
few offending elements with axe's own advice, e.g.::

    2 axe-core violations on http://…/review/
    - label (critical): Form elements must have labels  [https://dequeuniversity…]
        input: <input type="search" name="q">
          Fix any of the following: Element does not have an implicit (wrapped) <label> …
"""
from __future__ import annotations

from functools import cache
from pathlib import Path

AXE_SOURCE = Path(__file__).resolve().parent / "vendor" / "axe.min.js"
# WCAG 2.x A and AA plus axe's best practices (headings in order, landmarks, one h1...).
DEFAULT_TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice")
NODES_SHOWN = 5
HTML_SHOWN = 160


@cache
def _axe_source() -> str:
    return AXE_SOURCE.read_text(encoding="utf-8")


def run_axe(page, *, include: str | None = None, tags=DEFAULT_TAGS, disable=()) -> list[dict]:
    """Run axe on the page as it is now and return its violations (axe's own dicts)."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        # A function body keeps axe's UMD wrapper from seeing an AMD/CommonJS loader;
        # it then sets window.axe.
        page.evaluate("() => {" + _axe_source() + "\n}")
    options = {"runOnly": {"type": "tag", "values": list(tags)}, "resultTypes": ["violations"]}
    if disable:
        options["rules"] = {rule: {"enabled": False} for rule in disable}
    return page.evaluate(
        "([context, options]) => window.axe.run(context || document, options).then(r => r.violations)",
        [include, options],
    )


def format_violations(violations: list[dict], url: str = "") -> str:
    lines = [f"{len(violations)} axe-core violation(s) on {url}"]
    for violation in violations:
        lines.append(
            f"- {violation['id']} ({violation.get('impact') or 'n/a'}): {violation['help']}  [{violation['helpUrl']}]"
        )
        for node in violation["nodes"][:NODES_SHOWN]:
            target = " ".join(str(part) for part in node.get("target", []))
            html = " ".join((node.get("html") or "").split())[:HTML_SHOWN]
            summary = " ".join((node.get("failureSummary") or "").split())
            lines.append(f"    {target}: {html}\n      {summary}")
        hidden = len(violation["nodes"]) - NODES_SHOWN
        if hidden > 0:
            lines.append(f"    … and {hidden} more element(s)")
    return "\n".join(lines)


def assert_no_axe_violations(page, *, include: str | None = None, tags=DEFAULT_TAGS, disable=()) -> None:
    """Fail with a readable list when axe finds any violation on the page.

    ``include`` limits the check to a CSS selector; ``disable`` names rules to skip, and
    each use of it should say why next to the call.
    """
    violations = run_axe(page, include=include, tags=tags, disable=disable)
    assert not violations, format_violations(violations, page.url)
