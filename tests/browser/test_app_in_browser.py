"""An MCP App in a real JupyterLab: the notebook is the host, the proxy is on another origin, the View inside.

The hypnogram View renders, one click is one tools/call to the lab whose result reaches the View, teardown (asked by
the kernel, or sent by the page when the kernel stops) is answered and removes the frame; a View
that calls a tool before ui/initialize is refused, and its fetch to an origin its CSP does not list is
blocked by Chromium itself (a securitypolicyviolation, not a network error).
"""

import pytest
from test_composer_in_browser import KERNEL_READY, KERNEL_TIMEOUT_MS, RUN_ALL, TIMEOUT_MS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "app_demo.ipynb"


@pytest.fixture(scope="module")
def app_page(jupyter_lab, browser_page):
    url, token = jupyter_lab
    page = browser_page
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{url}/lab/tree/{NOTEBOOK}?token={token}")
    page.wait_for_function(KERNEL_READY, timeout=KERNEL_TIMEOUT_MS, polling=100)
    counts = page.evaluate(RUN_ALL)
    assert all(counts), f"not every cell ran: execution counts {counts}"
    return page


def test_the_proxy_is_on_another_origin_with_the_spec_sandbox(app_page):
    proxy = app_page.locator(".mcpwire-app iframe.mw-app-proxy").first
    proxy.wait_for()
    assert proxy.get_attribute("sandbox") == "allow-scripts allow-same-origin"
    lab_origin = app_page.evaluate("location.origin")
    assert proxy.get_attribute("src").startswith("http://127.0.0.1:") and not proxy.get_attribute("src").startswith(lab_origin)


def test_the_view_renders_and_a_click_is_one_tools_call_whose_result_reaches_it(app_page, artifacts):
    app = app_page.locator(".mcpwire-app").first
    view = app.frame_locator("iframe.mw-app-proxy").frame_locator("iframe")
    assert view.locator("iframe").count() == 0
    view.locator("button.epoch").nth(19).wait_for()
    assert view.locator("button.epoch").count() == 20
    assert view.locator("#title").inner_text() == "Night P07: 20 epochs of 30 s"
    status = app.locator(".mw-app-status")
    status.filter(has_text="host→lab resources/read, tools/call").wait_for()
    assert status.inner_text().endswith("host→lab resources/read, tools/call")

    view.locator("button.epoch").nth(5).click()
    view.locator("#detail", has_text="Epoch 6").wait_for()
    assert view.locator("#detail").inner_text() == "Epoch 6 of night P07 (2 min 30 s to 3 min 00 s): N3."
    status.filter(has_text="tools/call, tools/call").wait_for()
    assert status.inner_text().endswith("host→lab resources/read, tools/call, tools/call")  # one call per click
    app.screenshot(path=str(artifacts / "app-after-click.png"))


def test_the_view_is_sized_by_its_size_changed(app_page):
    proxy = app_page.locator(".mcpwire-app iframe.mw-app-proxy").first
    app_page.wait_for_function("(el) => el.style.height !== '160px'", arg=proxy.element_handle())


def test_a_call_before_initialize_is_refused_and_the_csp_blocks_an_undeclared_fetch(app_page):
    breaker = app_page.locator(".mcpwire-app").nth(1)
    log = breaker.frame_locator("iframe.mw-app-proxy").frame_locator("iframe").locator("#log")
    log.filter(has_text="early call").wait_for()
    log.filter(has_text="csp blocked connect-src").wait_for()
    text = log.inner_text()
    assert 'early call: {"code":-32000,"message":"tools/call before ui/notifications/initialized' in text
    assert "fetch failed" in text and "fetch went through" not in text


def test_teardown_is_answered_by_the_view_and_the_frame_goes(app_page):
    app = app_page.locator(".mcpwire-app").first
    app_page.evaluate("""() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel
                           .requestExecute({code: 'view.teardown()'}).done""")
    app.locator("iframe.mw-app-proxy").wait_for(state="detached")
    assert app.locator(".mw-app-status").inner_text().startswith("closed ·")


def test_when_the_kernel_stops_the_view_is_torn_down_and_answers(app_page):
    second = app_page.locator(".mcpwire-app").nth(2)
    second.frame_locator("iframe.mw-app-proxy").frame_locator("iframe").locator("button.epoch").nth(19).wait_for()
    app_page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.shutdown()")
    second.locator("iframe.mw-app-proxy").wait_for(state="detached")
    assert second.locator(".mw-app-status").inner_text() == "the kernel stopped: the View answered ui/resource-teardown"
