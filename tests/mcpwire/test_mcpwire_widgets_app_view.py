"""mcpwire.widgets.app_view without a browser: the kernel-side sandbox server and its relay.

The browser half (the View rendering, a click, the CSP in Chromium) is tests/browser/test_app_in_browser.py.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from mcpwire import StdioWire
from mcpwire.widgets.app_view import AppView

PROXY_READY = {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-proxy-ready", "params": {}}


@pytest.fixture(scope="module")
def lab():
    with StdioWire.labserver("--apps") as wire:
        yield wire


@pytest.fixture
def view(lab):
    view = AppView.for_tool(lab, "show_hypnogram", {"night": "P07"})
    yield view
    view.close()


def get(url):
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.status, dict(response.headers), response.read()


def relay(view, body):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(f"{view.origin}/relay/{view.token}", data=data, method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status


def outbox(view):
    return json.loads(get(f"{view.origin}/outbox/{view.token}")[2])


def test_the_proxy_page_carries_the_views_csp_as_a_header(view):
    status, headers, body = get(f"{view.origin}/sandbox.html")
    assert status == 200 and headers["Content-Security-Policy"] == view.host.policy
    assert b"ui/notifications/sandbox-proxy-ready" in body


def test_the_relay_and_the_outbox_need_the_token(view):
    for url in (f"{view.origin}/outbox/guess", f"{view.origin}/relay/guess"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(urllib.request.Request(url, data=b"{}" if "relay" in url else None), timeout=30)
        assert refused.value.code == 404


def test_a_relayed_proxy_ready_brings_the_view_html(view):
    assert relay(view, PROXY_READY) == 204
    (posted, status) = outbox(view)
    assert posted["post"]["method"] == "ui/notifications/sandbox-resource-ready"
    assert posted["post"]["params"]["html"] == view.html
    assert status["status"].startswith("loading · View→host 1 frames, host→View 1")


def test_a_body_that_is_not_json_is_answered_as_malformed(view):
    relay(view, b"{not json")
    (posted, _) = outbox(view)
    assert posted["post"] == {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request: not a JSON object"}}


def test_the_output_reaches_the_kernels_server_through_jupyters_proxy_and_sandboxes_the_proxy_opaque(view):
    import html

    page = view._repr_html_()
    config = json.loads(html.unescape(page.split('data-config="', 1)[1].split('"', 1)[0]))
    assert config["proxyPath"] == f"proxy/127.0.0.1:{view.port}" and config["loopback"] == view.origin
    assert view.origin == f"http://127.0.0.1:{view.port}"
    assert config["sandbox"] == "allow-scripts"  # no allow-same-origin: through the proxy it is JupyterLab's origin
    assert 'proxy.src = server + "/sandbox.html#" + encodeURIComponent(location.origin)' in page


def post(view, path, body=b"{}"):
    request = urllib.request.Request(f"{view.origin}/{path}/{view.token}", data=body, method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status


def initialized(view):
    relay(view, {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {
        "appCapabilities": {}, "appInfo": {"name": "v", "version": "1"}, "protocolVersion": "2026-01-26"}})
    relay(view, {"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}})
    outbox(view)


def test_a_cleared_output_makes_the_host_ask_the_view_and_its_answer_closes_the_frame(view):
    initialized(view)
    assert post(view, "cleared") == 204
    items = outbox(view)
    (asked,) = [item["post"] for item in items if "post" in item]
    assert asked == {"jsonrpc": "2.0", "id": 1, "method": "ui/resource-teardown", "params": {}}
    assert not any("closed" in item for item in items)  # the frame stays until the View answers
    relay(view, {"jsonrpc": "2.0", "id": 1, "result": {}})
    assert {"closed": True} in outbox(view)
    assert view.host.state == "closed" and "teardown: the output was removed (cleared, or its cell deleted)" in view.host.log


def test_a_second_clear_asks_nothing_more(view):
    initialized(view)
    post(view, "cleared")
    posted = len(view.host.sent)
    post(view, "cleared")
    assert len(view.host.sent) == posted and view.host.state == "closing"


def test_a_view_cleared_before_initialized_is_closed_without_a_frame(view):
    post(view, "cleared")
    items = outbox(view)
    assert [item for item in items if "post" in item] == [] and {"closed": True} in items
    assert view.host.log[-1] == "closed before ui/notifications/initialized: no ui/resource-teardown sent"


def test_its_text_form_names_nothing_volatile(view):
    from IPython.lib.pretty import pretty
    assert pretty(view) == "AppView(show_hypnogram, ui://notes-lab/hypnogram.html)"


def test_jupyterlabs_theme_and_width_reach_the_host_context(view):
    request = urllib.request.Request(f"{view.origin}/context/{view.token}", method="POST",
                                     data=json.dumps({"theme": "dark", "width": 812}).encode())
    urllib.request.urlopen(request, timeout=30)
    assert view.host.host_context["theme"] == "dark"
    assert view.host.host_context["containerDimensions"] == {"width": 812, "maxHeight": 600}


@pytest.mark.parametrize("context", [{"theme": "neon"}, {"width": True}, {"width": 10**9}, ["dark"]])
def test_a_context_out_of_range_changes_nothing(view, context):
    before = dict(view.host.host_context)
    view.take_context(context)
    assert view.host.host_context == before


def test_the_transcript_view_shows_a_click_through_both_wires(lab):
    import re

    from mcpwire.apps.host import AppHost, host_tools
    from mcpwire.widgets import TranscriptView

    host = AppHost(lab, "show_hypnogram", {"night": "P07"}, tools=host_tools(lab))
    host.load()
    host.receive({"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {
        "appCapabilities": {}, "appInfo": {"name": "v", "version": "1"}, "protocolVersion": "2026-01-26"}})
    host.receive({"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}})
    host.receive({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                  "params": {"name": "epoch_detail", "arguments": {"night": "P07", "epoch": 6}}})
    table = TranscriptView(host, title="View and lab").table.value
    assert "(nothing)" not in table
    arrows = re.findall(r"<td>(→|←)</td><td class='mw-left'>([^<]*)</td>", table)
    assert arrows[-4:] == [("→", "tools/call"), ("→", "tools/call"), ("←", ""), ("←", "tools/call")]


def test_what_the_view_asks_for_reaches_the_output_as_notes(view):
    initialized(view)
    relay(view, {"jsonrpc": "2.0", "id": 2, "method": "ui/open-link", "params": {"url": "https://aasm.org/"}})
    relay(view, {"jsonrpc": "2.0", "id": 3, "method": "ui/open-link", "params": {"url": "javascript:alert(1)"}})
    relay(view, {"jsonrpc": "2.0", "id": 4, "method": "ui/message",
                 "params": {"role": "user", "content": [{"type": "text", "text": "Why N3?"}]}})
    relay(view, {"jsonrpc": "2.0", "id": 5, "method": "ui/update-model-context",
                 "params": {"content": [{"type": "text", "text": "Epoch 6."}], "structuredContent": {"epoch": 6}}})
    notes = [item for item in outbox(view) if "note" in item]
    assert notes == [{"note": "link", "url": "https://aasm.org/"}, {"note": "message", "text": "Why N3?"},
                     {"note": "context", "text": 'Epoch 6. {"epoch": 6}'}]


def test_an_output_drawn_again_after_its_view_closed_gets_no_view(view):
    initialized(view)
    view.teardown()
    outbox(view)
    relay(view, {"jsonrpc": "2.0", "id": 1, "result": {}})
    outbox(view)
    relay(view, PROXY_READY)  # a fresh drawing of the output (the notebook opened again) asks for the HTML
    items = outbox(view)
    assert {"closed": True} in items and not [item for item in items if "post" in item]


def test_refresh_outputs_stores_only_the_text_form_of_the_real_output(view):
    """The output's HTML names the kernel's port (through the Jupyter server's proxy, and at the loopback for other
    front ends), which changes every run: scripts/refresh_outputs.py must recognise this very HTML and keep its text."""
    import importlib.util
    from pathlib import Path

    import nbformat

    spec = importlib.util.spec_from_file_location(
        "refresh_outputs", Path(__file__).resolve().parents[2] / "scripts" / "refresh_outputs.py")
    refresh_outputs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(refresh_outputs)
    output = nbformat.v4.new_output("execute_result", execution_count=1, data={
        "text/html": view._repr_html_(), "text/plain": "AppView(show_hypnogram, ui://notes-lab/hypnogram.html)"})
    refresh_outputs.keep_text_of_live_html(output)
    assert output.data == {"text/plain": "AppView(show_hypnogram, ui://notes-lab/hypnogram.html)"}
