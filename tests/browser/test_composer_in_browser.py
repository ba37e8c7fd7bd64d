"""The composer and the consent prompt in a real JupyterLab: edit, click Send, read the page.

Kernel readiness is read through the app JupyterLab exposes (`window.jupyterapp`):
waiting on the DOM's execution indicator was flaky, the kernel's own status is not.
"""

import json

import pytest

from mcpwire import count_tokens, frames
from mcpwire.widgets.templates import template_frame

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # JupyterLab and Chromium: tens of seconds

NOTEBOOK = "composer_demo.ipynb"
TIMEOUT_MS = 30_000
KERNEL_TIMEOUT_MS = 120_000  # a first kernel start (and Run All starting lab servers) on a loaded machine is slow

KERNEL_READY = """() => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const kernel = panel && panel.sessionContext && panel.sessionContext.session
    && panel.sessionContext.session.kernel;
  return !!kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle';
}"""

RUN_ALL = """async () => {
  await window.jupyterapp.commands.execute('notebook:run-all-cells');
  const cells = window.jupyterapp.shell.currentWidget.content.widgets;
  return cells.filter(c => c.model.type === 'code').map(c => c.model.executionCount);
}"""


def open_and_run(page, url, token):
    page.goto(f"{url}/lab/tree/{NOTEBOOK}?token={token}")
    page.wait_for_function(KERNEL_READY, timeout=KERNEL_TIMEOUT_MS, polling=100)
    counts = page.evaluate(RUN_ALL)
    assert all(counts), f"not every cell ran: execution counts {counts}"
    page.wait_for_function(KERNEL_READY, timeout=KERNEL_TIMEOUT_MS, polling=100)


def test_composer_send_malformed_frame_and_consent_deny(jupyter_lab, browser_page, artifacts):
    url, token = jupyter_lab
    page = browser_page
    page.set_default_timeout(TIMEOUT_MS)
    open_and_run(page, url, token)

    composer = page.locator(".mcpwire-composer").first
    editor = composer.locator(".mcpwire-frame textarea")
    reply = composer.locator(".mcpwire-reply")
    send = composer.get_by_role("button", name="Send")
    assert "stdio · python -m labserver" in composer.locator(".mw-transport").inner_text()

    # Edit the frame, send it, read what came back and what it cost.
    frame = template_frame("tools/call", 5)
    frame["params"]["arguments"] = {"query": "memory", "limit": 2}
    editor.fill(json.dumps(frame, indent=2))
    composer.locator(".mw-check", has_text="valid 2026-07-28").wait_for()
    send.click()
    reply.locator(".mw-result-type").wait_for()

    payload = frames.dumps(frame)
    assert reply.locator(".mw-result-type").inner_text() == "complete"
    assert int(reply.locator(".mw-bytes-up").inner_text()) == len(payload.encode()) + 1  # + the newline
    assert int(reply.locator(".mw-tokens-up").inner_text()) == count_tokens(payload)
    assert int(reply.locator(".mw-bytes-down").inner_text()) > 0
    assert int(reply.locator(".mw-tokens-down").inner_text()) > 0
    assert payload in reply.locator(".mw-request").inner_text()
    assert '"structuredContent"' in reply.locator(".mw-reply").inner_text()
    composer.screenshot(path=str(artifacts / "composer-after-send.png"))

    # A frame that is not JSON: the problem shows before sending, the parse error after.
    editor.fill('{"jsonrpc": "2.0", "id": 6, "method": "tools/list"')
    composer.locator(".mw-problems", has_text="not JSON").wait_for()
    send.click()
    reply.locator(".mw-error-code").wait_for()
    assert reply.locator(".mw-error-code").inner_text() == "-32700"
    assert "Parse error" in reply.locator(".mw-explain").inner_text()
    assert "Sent anyway" in reply.inner_text()

    # The consent prompt: Deny, and the denial shows.
    consent = page.locator(".mcpwire-consent")
    assert "delete_note" in consent.inner_text() and "destructive" in consent.inner_text()
    consent.get_by_role("button", name="Deny").click()
    consent.locator(".mcpwire-verdict", has_text="Denied").wait_for()
    assert consent.get_by_role("button", name="Approve").is_disabled()


def test_after_run_all_a_try_it_composer_still_gets_replies(jupyter_lab, browser_page, artifacts):
    # The last cell closed the wire the Try-it composer was given, as every lesson's last cell does.
    url, token = jupyter_lab
    page = browser_page
    page.set_default_timeout(TIMEOUT_MS)
    open_and_run(page, url, token)

    try_it = page.locator(".mcpwire-composer").nth(1)
    assert '"id": 10' in try_it.locator(".mcpwire-frame textarea").input_value()
    try_it.get_by_role("button", name="Send").click()
    reply = try_it.locator(".mcpwire-reply")
    reply.locator(".mw-result-type").wait_for(timeout=90_000)  # it starts a server first, on a loaded machine too

    assert reply.locator(".mw-result-type").inner_text() == "complete"
    assert "started that server again over stdio" in reply.inner_text()
    assert '"id":10' in reply.locator(".mw-reply").inner_text() and '"tools"' in reply.locator(".mw-reply").inner_text()
    try_it.screenshot(path=str(artifacts / "try-it-after-run-all.png"))
