"""An MCP App in a real JupyterLab: the notebook is the host, the proxy and the View inside it in opaque origins.

JupyterLab is served under /user/learner/, as a hub serves a learner's. The page reaches the kernel's server only
through JupyterLab's own server (jupyter-server-proxy): every request the page makes, from any frame, is recorded, and
any to another origin (the kernel's loopback port among them) is aborted, so the View could not load if it needed one.
The hypnogram View renders, one click is one tools/call to the lab whose result reaches the View, teardown (asked by
the kernel, asked by the host when the output is cleared, or sent by the page when the kernel stops) is answered and
removes the frame; the proxy and the View cannot read the page's DOM or cookies; a View that calls a tool before
ui/initialize is refused, and its fetch to JupyterLab's own API, which its CSP does not list, is blocked by Chromium
itself (a securitypolicyviolation, not a network error).
The frame lives beside the notebook's cells, over its output (`.mcpwire-app` names it in `data-frame`), so that a
cleared output does not take the View with it before the host could ask it to tear down.
"""

import http.client
import json
from urllib.parse import urlsplit

import pytest
from test_composer_in_browser import KERNEL_READY, KERNEL_TIMEOUT_MS, RUN_ALL, TIMEOUT_MS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "app_demo.ipynb"
IN_KERNEL = """async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const future = kernel.requestExecute({code});
  let printed = "";
  future.onIOPub = (message) => { if (message.header.msg_type === "stream") printed += message.content.text; };
  await future.done;
  return printed;
}"""


def frame_of(page, app):
    """The frame (sandbox proxy and View) that shows `app`'s View, beside the cells."""
    app.locator(".mw-app-slot").wait_for()
    page.wait_for_function("(el) => !!el.dataset.frame", arg=app.element_handle())
    return page.locator("#" + app.get_attribute("data-frame"))


# A hub serves each learner's JupyterLab under a prefix: the page must find the proxy under it.
BASE_URL = "/user/learner/"


@pytest.fixture(scope="module")
def lab_base_url():
    return BASE_URL


class Recorded:
    """Every request and WebSocket the page opened, from any of its frames, and those aborted for their origin."""

    def __init__(self, lab_url):
        self.lab = urlsplit(lab_url).netloc
        self.requests, self.sockets, self.aborted = [], [], []

    def at_the_lab(self, url):
        parts = urlsplit(url)
        return parts.scheme not in ("http", "https", "ws", "wss") or parts.netloc == self.lab

    def route(self, route):
        if self.at_the_lab(route.request.url):
            route.continue_()
        else:
            self.aborted.append(route.request.url)
            route.abort()


@pytest.fixture(scope="module")
def recorded(jupyter_lab, browser_page):
    recorded = Recorded(jupyter_lab[0])
    browser_page.on("request", lambda request: recorded.requests.append(request))
    browser_page.on("websocket", lambda socket: recorded.sockets.append(socket.url))
    browser_page.route("**/*", recorded.route)
    return recorded


@pytest.fixture(scope="module")
def app_page(jupyter_lab, browser_page, recorded):
    url, token = jupyter_lab
    page = browser_page
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{url}/lab/tree/{NOTEBOOK}?token={token}")
    page.wait_for_function(KERNEL_READY, timeout=KERNEL_TIMEOUT_MS, polling=100)
    counts = page.evaluate(RUN_ALL)
    assert all(counts), f"not every cell ran: execution counts {counts}"
    return page


def frames_of(page, app):
    """(proxy frame, View frame) of `app`, as playwright Frames to run code in."""
    proxy = frame_of(page, app).locator("iframe.mw-app-proxy")
    proxy.wait_for()
    proxy_frame = proxy.element_handle().content_frame()
    view = proxy_frame.locator("iframe")
    view.wait_for()
    return proxy_frame, view.element_handle().content_frame()


def test_the_proxy_comes_from_jupyterlabs_own_server_and_no_request_leaves_its_origin(app_page, recorded, jupyter_lab):
    app = app_page.locator(".mcpwire-app").first
    proxy = frame_of(app_page, app).locator("iframe.mw-app-proxy")
    frame_of(app_page, app).frame_locator("iframe.mw-app-proxy").frame_locator("iframe").locator("button.epoch").nth(19).wait_for()
    prefix = urlsplit(jupyter_lab[0]).path + "/proxy/127.0.0.1:"
    assert proxy.get_attribute("sandbox") == "allow-scripts"
    assert proxy.get_attribute("src").startswith(app_page.evaluate("location.origin") + prefix)
    assert recorded.aborted == [] and all(recorded.at_the_lab(url) for url in recorded.sockets)
    assert all(recorded.at_the_lab(request.url) for request in recorded.requests)
    through = {urlsplit(request.url).path[len(prefix):].split("/")[1] for request in recorded.requests
               if urlsplit(request.url).path.startswith(prefix)}
    assert {"sandbox.html", "context", "relay", "outbox"} <= through


def test_the_proxied_page_needs_the_jupyter_login_and_keeps_the_views_csp_header(app_page, jupyter_lab):
    url, token = jupyter_lab
    src = urlsplit(frame_of(app_page, app_page.locator(".mcpwire-app").first).locator("iframe.mw-app-proxy").get_attribute("src"))
    policy = app_page.evaluate(IN_KERNEL, "print(view.host.policy, end='')")

    def get(headers=None):
        connection = http.client.HTTPConnection(src.netloc, timeout=30)
        try:
            connection.request("GET", src.path, headers=headers or {})
            response = connection.getresponse()
            return response.status, response.getheader("Content-Security-Policy"), response.read()
        finally:
            connection.close()

    status, _, body = get()
    assert status in (302, 403) and b"sandbox-proxy-ready" not in body  # no login: Jupyter's answer, not the page
    status, header, body = get({"Authorization": f"token {token}"})
    assert (status, header) == (200, policy) and b"ui/notifications/sandbox-proxy-ready" in body


def test_neither_the_proxy_nor_the_view_can_read_the_page_or_its_cookies(app_page):
    assert "_xsrf=" in app_page.evaluate("document.cookie")  # what a frame of JupyterLab's origin could read
    probe = """() => {
      const attempt = (read) => { try { read(); return "read"; } catch (error) { return error.name; } };
      return [window.origin, attempt(() => document.cookie), attempt(() => parent.document.body),
              attempt(() => top.document.cookie), attempt(() => localStorage.length)];
    }"""
    for frame in frames_of(app_page, app_page.locator(".mcpwire-app").first):
        assert frame.evaluate(probe) == ["null", "SecurityError", "SecurityError", "SecurityError", "SecurityError"]


def test_the_view_renders_and_a_click_is_one_tools_call_whose_result_reaches_it(app_page, artifacts):
    app = app_page.locator(".mcpwire-app").first
    view = frame_of(app_page, app).frame_locator("iframe.mw-app-proxy").frame_locator("iframe")
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


def test_the_view_is_sized_by_its_size_changed_and_its_frame_covers_the_output(app_page):
    app = app_page.locator(".mcpwire-app").first
    slot, frame = app.locator(".mw-app-slot"), frame_of(app_page, app)
    app_page.wait_for_function("(el) => el.style.height !== '160px'", arg=slot.element_handle())
    app_page.wait_for_function("([slot, frame]) => JSON.stringify(slot.getBoundingClientRect()) === "
                               "JSON.stringify(frame.getBoundingClientRect())",
                               arg=[slot.element_handle(), frame.element_handle()])


def test_a_call_before_initialize_is_refused_and_the_csp_blocks_a_fetch_to_jupyterlabs_api(app_page):
    breaker = frame_of(app_page, app_page.locator(".mcpwire-app").nth(1))
    log = breaker.frame_locator("iframe.mw-app-proxy").frame_locator("iframe").locator("#log")
    log.filter(has_text="early call").wait_for()
    log.filter(has_text="csp blocked connect-src").wait_for()
    log.filter(has_text="fetch failed").wait_for()
    text = log.inner_text()
    assert 'early call: {"code":-32000,"message":"tools/call before ui/notifications/initialized' in text
    assert f"csp blocked connect-src {app_page.evaluate('location.origin')}/api/kernels" in text.splitlines()
    assert "fetch went through" not in text


def test_what_self_lets_a_view_load_from_jupyterlabs_origin_goes_without_its_cookies(app_page, recorded):
    """'self' in the View's policy now names JupyterLab's origin (the proxy page's URL): an image loads from it, a
    request whose answer the View cannot read as data, and Jupyter's login cookie (no SameSite, which Chromium reads as Lax)
    stays home."""
    log = frame_of(app_page, app_page.locator(".mcpwire-app").nth(1)).frame_locator(
        "iframe.mw-app-proxy").frame_locator("iframe").locator("#log")
    log.filter(has_text="self image").wait_for()
    assert "self image loaded" in log.inner_text()
    (probe,) = [request for request in recorded.requests if request.url.endswith("favicon.ico?from-view")]
    assert probe.frame.url == "about:srcdoc" and "cookie" not in probe.all_headers()
    cookies = app_page.context.cookies()
    assert {cookie["path"] for cookie in cookies} == {BASE_URL}  # the probe's path is one they would go to
    assert {cookie["sameSite"] for cookie in cookies} == {"Lax"}  # Jupyter sets none: Chromium reads Lax


def test_teardown_is_answered_by_the_view_and_the_frame_goes(app_page):
    app = app_page.locator(".mcpwire-app").first
    frame = frame_of(app_page, app)
    app_page.evaluate(IN_KERNEL, "view.teardown()")
    frame.wait_for(state="detached")
    assert app.locator(".mw-app-status").inner_text().startswith("closed ·")


def test_what_the_view_asks_for_is_shown_and_a_link_waits_for_a_click(app_page):
    asker = app_page.locator(".jp-Notebook .jp-Cell").nth(4).locator(".mcpwire-app")
    log = frame_of(app_page, asker).frame_locator("iframe.mw-app-proxy").frame_locator("iframe").locator("#log")
    log.filter(has_text="ui/update-model-context").wait_for()
    answers = dict(line.split(" ", 1) for line in log.inner_text().splitlines()[1:])
    assert log.inner_text().splitlines()[0] == 'ui/open-link {"jsonrpc":"2.0","id":2,"result":{}}'
    assert '"code":-32000' in answers["ui/open-link"]  # the javascript: URL
    assert answers["ui/message"] == '{"jsonrpc":"2.0","id":4,"result":{}}'
    link = asker.locator(".mw-app-note-link a")
    assert link.count() == 1
    assert (link.get_attribute("href"), link.get_attribute("target"), link.get_attribute("rel")) == (
        "https://aasm.org/", "_blank", "noopener noreferrer")
    assert asker.locator(".mw-app-note-message").inner_text() == "For the conversation (ui/message): Why is epoch 6 N3?"
    asker.locator(".mw-app-note-context").wait_for()
    assert asker.locator(".mw-app-note-context").inner_text() == (
        "Model context now (ui/update-model-context): The user is looking at epoch 6.")
    assert "/lab/tree/" in app_page.url and len(app_page.context.pages) == 1  # nothing was opened or followed


FRAME_OVER_SLOT = """([slot, frame]) => {
  const a = slot.getBoundingClientRect(), b = frame.getBoundingClientRect();
  return a.width > 0 && [a.top, a.left, a.width, a.height].join() === [b.top, b.left, b.width, b.height].join();
}"""


def test_the_frame_follows_its_output_when_the_notebook_scrolls_and_the_cell_moves(app_page):
    asker = app_page.locator(".jp-Notebook .jp-Cell").nth(4).locator(".mcpwire-app")
    frame = frame_of(app_page, asker)
    frame_id = asker.get_attribute("data-frame")
    drawing = app_page.locator(f'.mcpwire-app[data-frame="{frame_id}"]')  # JupyterLab draws a moved cell again

    def covered():
        slot = drawing.locator(".mw-app-slot")
        slot.wait_for()
        app_page.wait_for_function(FRAME_OVER_SLOT, arg=[slot.element_handle(), frame.element_handle()])

    frames_before = app_page.locator(".mw-app-frame").count()
    app_page.evaluate("() => { document.querySelector('.jp-WindowedPanel-outer').scrollTop += 240; }")
    covered()
    for command in ("notebook:move-cell-up", "notebook:move-cell-down"):
        app_page.evaluate("""async ([command, frameId]) => {
          const notebook = window.jupyterapp.shell.currentWidget.content;
          notebook.activeCellIndex = notebook.widgets.findIndex(
            (cell) => cell.node.querySelector('.mcpwire-app[data-frame="' + frameId + '"]'));
          await window.jupyterapp.commands.execute(command);
        }""", [command, frame_id])
        covered()
    assert drawing.count() == 1 and app_page.locator(".mw-app-frame").count() == frames_before  # no second frame
    log = frame.frame_locator("iframe.mw-app-proxy").frame_locator("iframe").locator("#log")
    assert log.inner_text().startswith('ui/open-link {"jsonrpc":"2.0","id":2,"result":{}}')  # not loaded again
    assert drawing.locator(".mw-app-note-link a").get_attribute("href") == "https://aasm.org/"
    assert app_page.evaluate(IN_KERNEL, "print(asker.host.state, sum(line.startswith('teardown') for line in asker.host.log))") == "ready 0\n"


def test_deleting_the_cell_asks_the_view_and_a_view_that_never_answers_loses_its_frame_all_the_same(app_page):
    asker = app_page.locator(".jp-Notebook .jp-Cell").nth(4).locator(".mcpwire-app")
    frame = frame_of(app_page, asker)
    frame_id = asker.get_attribute("data-frame")
    app_page.evaluate("""async (frameId) => {
      const notebook = window.jupyterapp.shell.currentWidget.content;
      notebook.activeCellIndex = notebook.widgets.findIndex(
        (cell) => cell.node.querySelector('.mcpwire-app[data-frame="' + frameId + '"]'));
      await window.jupyterapp.commands.execute('notebook:delete-cell');
    }""", frame_id)
    frame.wait_for(state="detached")  # the asking View answers no request of the host's: the page stops waiting
    printed = app_page.evaluate(IN_KERNEL, """frames = [e for e in asker.host.transcript if e.method == "ui/resource-teardown"]
print(asker.host.state, [bool(e.bytes_up) for e in frames], asker.host.log[-1])""")
    assert printed == "closing [False] teardown: the output was removed (cleared, or its cell deleted)\n"


def test_clearing_the_output_makes_the_host_ask_the_view_to_tear_down_and_the_view_answers(app_page):
    cleared = app_page.locator(".jp-Notebook .jp-Cell").last.locator(".mcpwire-app")
    frame = frame_of(app_page, cleared)
    frame.frame_locator("iframe.mw-app-proxy").frame_locator("iframe").locator("button.epoch").nth(19).wait_for()
    app_page.evaluate("""async () => {
      const notebook = window.jupyterapp.shell.currentWidget.content;
      notebook.activeCellIndex = notebook.widgets.length - 1;
      await window.jupyterapp.commands.execute('notebook:clear-cell-output');
    }""")
    frame.wait_for(state="detached")
    printed = app_page.evaluate(IN_KERNEL, """import json
frames = [e for e in cleared.host.transcript if e.transport == "postMessage" and e.method == "ui/resource-teardown"]
print(json.dumps([[bool(e.bytes_up), json.loads((e.up_payloads or e.down_payloads)[0])] for e in frames]))
print(cleared.host.state, "|", "; ".join(line for line in cleared.host.log if line.startswith("teardown")))""")
    (to_view, asked), (from_view, answered) = json.loads(printed.splitlines()[0])
    assert (to_view, from_view) == (False, True)
    assert asked == {"jsonrpc": "2.0", "id": asked["id"], "method": "ui/resource-teardown", "params": {}}
    assert answered == {"jsonrpc": "2.0", "id": asked["id"], "result": {}}
    assert printed.splitlines()[1] == "closed | teardown: the output was removed (cleared, or its cell deleted)"


def test_a_jupyter_server_without_the_proxy_gets_an_output_that_says_what_it_needs(app_page):
    # As a Jupyter server without jupyter-server-proxy answers: 404 (only a View's first request, so the others go on).
    app_page.route("**/proxy/*/context/*", lambda route: route.fulfill(status=404, body="Not Found"))
    try:
        app_page.evaluate("""async () => {
          const notebook = window.jupyterapp.shell.currentWidget.content;
          notebook.activeCellIndex = notebook.widgets.length - 1;
          await window.jupyterapp.commands.execute('notebook:insert-cell-below');
          notebook.activeCell.model.sharedModel.setSource('AppView.for_tool(lab, "show_hypnogram", {"night": "P07"})');
          await window.jupyterapp.commands.execute('notebook:run-cell');
        }""")
        unserved = app_page.locator(".jp-Notebook .jp-Cell").last.locator(".mcpwire-app")
        unserved.locator(".mw-app-status", has_text="cannot load").wait_for()
        status = unserved.locator(".mw-app-status").inner_text()
        assert status.startswith("the View cannot load: this page's Jupyter server did not pass it on (proxy/127.0.0.1:")
        assert status.endswith("/ needs jupyter-server-proxy in the server's environment)")
        assert frame_of(app_page, unserved).locator("iframe.mw-app-proxy").get_attribute("src") is None
    finally:
        app_page.unroute("**/proxy/*/context/*")


def test_when_the_kernel_stops_the_view_is_torn_down_and_answers(app_page):
    second = app_page.locator(".mcpwire-app").nth(2)
    frame = frame_of(app_page, second)
    frame.frame_locator("iframe.mw-app-proxy").frame_locator("iframe").locator("button.epoch").nth(19).wait_for()
    app_page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.shutdown()")
    frame.wait_for(state="detached")
    assert second.locator(".mw-app-status").inner_text() == "the kernel stopped: the View answered ui/resource-teardown"
