def test_home_page_renders(page, screenshot):
    page.goto("/")
    assert page.locator("h1").inner_text() == "Memory Portal"
    assert screenshot(page, "home").exists()
