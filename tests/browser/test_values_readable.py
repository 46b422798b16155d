"""Every value is readable where it is decided (issue 38.1): on the queue's lines and in an
opened conflict, long values wrap (or show their first lines and a "more") and are never
clipped, at a laptop's and a phone's width, in English and in Chinese."""
import pytest
from playwright.sync_api import expect

from tests.browser.axe import assert_no_axe_violations
from tests.browser.test_reviewer import signed_in_context
from tests.conftest import candidate
from tests.review.conftest import approve_as, propose

pytestmark = pytest.mark.django_db(transaction=True)

ENGLISH_80 = "Prefers short answers with code first, then a one-line explanation of trade-offs"
CHINESE_40 = "希望回答先给出代码示例然后用一句话说明取舍并且尽量避免使用过长的段落和重复的解释"
URL_LIKE = "https://docs.example.org/handbook/onboarding/engineering-environment-setup-guide-for-new-hires?section=databases&lang=en"
CURRENT_LONG = "Works remotely from the Lisbon office on Tuesdays and from home for the rest of the week"
PROPOSED_LONG = "Works remotely from the Porto office on Tuesdays and from home for the rest of the working week"
assert len(ENGLISH_80) == 80 and len(CHINESE_40) == 40 and " " not in URL_LIKE
VERY_LONG = " ".join(["A very long preference that keeps going so that the line shows only its first lines."] * 6)

# What a value is printed in: the queue line's value, the line's reference and field, and
# both sides of an opened conflict.
VALUE_ELEMENTS = "[data-value], .line .ref, .line .field, .side .value, .side .value .text, .side .meta"

CLIPPED = """(selector) => Array.from(document.querySelectorAll(selector))
  .filter((element) => element.getClientRects().length)
  .map((element) => {
    const style = getComputedStyle(element);
    return {
      text: element.textContent.trim().slice(0, 50),
      scroll: element.scrollWidth,
      client: element.clientWidth,
      ellipsis: style.textOverflow === "ellipsis",
      offRight: element.getBoundingClientRect().right > document.documentElement.clientWidth + 1,
    };
  })
  .filter((box) => box.scroll > box.client + 1 || box.ellipsis || box.offRight)"""


def assert_nothing_clipped(page, where: str):
    clipped = page.evaluate(CLIPPED, VALUE_ELEMENTS)
    assert not clipped, f"{where}: values clipped: {clipped}"


@pytest.fixture
def long_values(tenant, reviewer):
    [published] = propose(tenant, "lena", candidate(field="location", value=CURRENT_LONG, confidence=0.9))
    approve_as(reviewer, published)
    proposed = propose(
        tenant,
        "lena",
        candidate(field="preference", value=ENGLISH_80, confidence=0.9),
        candidate(field="preference", value=CHINESE_40, confidence=0.9),
        candidate(field="preference", value=URL_LIKE, confidence=0.9),
        candidate(field="preference", value=VERY_LONG, confidence=0.9),
        candidate(field="location", value=PROPOSED_LONG, confidence=0.9),
    )
    assert [item.status for item in proposed] == ["pending_review"] * 5, [(i.field, i.status, i.reason) for i in proposed]


@pytest.mark.parametrize("width, height", [(1366, 900), (390, 844)])
@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_no_value_is_clipped_on_the_queue_or_in_an_opened_conflict(
    browser, live_server, long_values, screenshot, width, height, locale
):
    context, page = signed_in_context(
        browser, live_server, "rita", locale=locale, viewport={"width": width, "height": height}
    )
    try:
        page.goto("/review/")
        for value in (ENGLISH_80, CHINESE_40, URL_LIKE):
            expect(page.locator("[data-value]", has_text=value)).to_be_visible()
        # The very long value shows its first lines and a "more"; the line opens in place.
        long_line = page.locator("[data-item]", has=page.locator("[data-value].long"))
        expect(long_line.locator(".more-value")).to_be_visible()
        assert_nothing_clipped(page, f"queue {width} {locale}")
        assert_no_axe_violations(page)
        language = "zh" if locale.startswith("zh") else "en"
        screenshot(page, f"values-queue-{language}-{width}")

        conflict = page.locator("[data-item]", has=page.locator("[data-value]", has_text=PROPOSED_LONG))
        conflict.locator("summary.line").click()
        expect(conflict.locator("[data-conflict]")).to_be_visible()
        grid = conflict.locator("[data-conflict]").bounding_box()
        line = conflict.locator("summary.line").bounding_box()
        assert grid["width"] >= line["width"] - 2, "the comparison uses the item's full width"
        old, new = conflict.locator(".side.old").bounding_box(), conflict.locator(".side.new").bounding_box()
        if width >= 1000:
            assert abs(old["y"] - new["y"]) < 2 and new["x"] > old["x"], "side by side on a laptop"
        else:
            assert new["y"] > old["y"], "stacked on a phone"
        # What the current value loses is marked (Lisbon), not the words both share. (The
        # proposed side shows its hidden characters and look-alikes revealed instead.)
        expect(conflict.locator(".side.old del")).to_contain_text(["Lisbon"])
        assert "office" not in " ".join(conflict.locator(".side.old del").all_text_contents())
        long_line.locator("summary.line").click()
        assert_nothing_clipped(page, f"opened items {width} {locale}")
        assert_no_axe_violations(page)
        screenshot(page, f"values-conflict-{language}-{width}")
    finally:
        context.close()


# A placeholder is drawn inside the input's content box and cut at its edge without an
# ellipsis: measure the text in the input's own font against the room it has.
PLACEHOLDER_FITS = """(input) => {
  const style = getComputedStyle(input);
  const context = document.createElement("canvas").getContext("2d");
  context.font = style.font;
  const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return {text: input.placeholder, needs: Math.ceil(context.measureText(input.placeholder).width), room: Math.floor(room),
          scroll: input.scrollWidth, client: input.clientWidth,
          offRight: input.getBoundingClientRect().right > document.documentElement.clientWidth + 1};
}"""


@pytest.mark.parametrize("width, height", [(1366, 900), (390, 844)])
@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_the_bulk_bars_reason_shows_its_whole_hint(browser, live_server, long_values, screenshot, width, height, locale):
    context, page = signed_in_context(
        browser, live_server, "rita", locale=locale, viewport={"width": width, "height": height}
    )
    try:
        page.goto("/review/")
        reason = page.locator("#bulk-note")
        expect(reason).to_be_visible()
        box = reason.evaluate(PLACEHOLDER_FITS)
        expected = "理由（拒绝时必填）" if locale.startswith("zh") else "Reason (required to reject)"
        assert box["text"] == expected, box
        assert box["needs"] <= box["room"], f"the hint is cut at {width} {locale}: {box}"
        assert box["scroll"] <= box["client"] and not box["offRight"], box
        # The whole bar, not only its input, stays inside the window.
        assert page.locator("[data-bulk-form]").evaluate(
            "(bar) => bar.getBoundingClientRect().right <= document.documentElement.clientWidth + 1"
        )
        assert_no_axe_violations(page)
        language = "zh" if locale.startswith("zh") else "en"
        page.locator("[data-bulk-form]").screenshot(path=str(screenshot(page, f"bulk-bar-{language}-{width}").with_name(
            f"bulk-bar-only-{language}-{width}.png")))
    finally:
        context.close()
