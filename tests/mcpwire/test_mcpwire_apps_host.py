"""mcpwire.apps_host against the real lab (`python -m labserver --apps`): the View<->host rules, each refusal,
and every frame the host posts checked by the kit's own View<->host shape check (mcpwire.apps_frames).
"""

from __future__ import annotations

import pytest

from mcpwire import StdioWire
from mcpwire.apps_frames import check_host_frame
from mcpwire.apps_csp import allows, approved_domains, build_policy
from mcpwire.apps_host import HOST_REFUSED, INVALID_REQUEST, METHOD_NOT_FOUND, AppHost, model_tools

VIEW_URI = "ui://notes-lab/hypnogram.html"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize",
              "params": {"appCapabilities": {}, "appInfo": {"name": "test-view", "version": "1"},
                         "protocolVersion": "2026-01-26"}}
INITIALIZED = {"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}}
CLICK = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "epoch_detail", "arguments": {"night": "P07", "epoch": 6}}}


@pytest.fixture(scope="module")
def lab():
    with StdioWire.labserver("--apps") as wire:
        yield wire


@pytest.fixture(scope="module")
def tools(lab):
    return lab.request("tools/list").result["tools"]


@pytest.fixture
def host(lab, tools):
    host = AppHost(lab, "show_hypnogram", {"night": "P07"}, tools=tools)
    host.load()
    return host


def methods(frames):
    return [frame.get("method") or ("error" if "error" in frame else "result") for frame in frames]


def ready(host):
    host.receive(INITIALIZE)
    host.receive(INITIALIZED)
    return host


@pytest.fixture(autouse=True)
def every_frame_the_host_posts_has_the_schema_shape(request):
    yield
    host = request.node.funcargs.get("host")
    for frame in host.sent if host else []:
        assert check_host_frame(frame) == [], frame


def test_an_app_only_tool_never_reaches_the_model(tools):
    names = [tool["name"] for tool in model_tools(tools)]
    assert "show_hypnogram" in names and "search_notes" in names and "epoch_detail" not in names


def test_the_host_reads_the_view_with_its_own_envelope(host):
    assert host.html.startswith("<!DOCTYPE html>")
    (read,) = [e for e in host.transcript if e.transport == "stdio"]
    meta = __import__("json").loads(read.up_payloads[0])["params"]["_meta"]
    assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "mcpwire-notebook-host"
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {
        "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}


def test_the_proxy_gets_the_html_once_it_is_ready(host):
    host.receive({"jsonrpc": "2.0", "method": "ui/notifications/sandbox-proxy-ready", "params": {}})
    (ready_frame,) = host.sent
    assert ready_frame["method"] == "ui/notifications/sandbox-resource-ready"
    assert ready_frame["params"] == {"html": host.html, "sandbox": "allow-scripts allow-forms", "csp": {}}


def test_initialize_is_answered_with_host_info_capabilities_and_context(host):
    host.receive(INITIALIZE)
    (answer,) = host.sent
    assert answer["id"] == 1
    result = answer["result"]
    assert result["protocolVersion"] == "2026-01-26"
    assert result["hostInfo"] == {"name": "mcpwire-notebook-host", "version": "0.1.0"}
    assert set(result["hostCapabilities"]) == {"serverTools", "serverResources", "logging", "sandbox"}
    assert result["hostContext"]["theme"] == "light" and result["hostContext"]["toolInfo"]["tool"]["name"] == "show_hypnogram"


def test_an_unknown_protocol_version_is_answered_with_the_one_the_host_speaks(host):
    host.receive({**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": "2099-01-01"}})
    assert host.sent[0]["result"]["protocolVersion"] == "2026-01-26"


def test_nothing_goes_to_the_view_before_initialized(host):
    host.call_tool()
    host.receive(INITIALIZE)
    assert methods(host.sent) == ["result"]  # only the answer to ui/initialize
    host.receive(INITIALIZED)
    assert methods(host.sent) == ["result", "ui/notifications/tool-input", "ui/notifications/tool-result"]
    assert host.sent[1]["params"] == {"arguments": {"night": "P07"}}
    assert host.sent[2]["params"]["structuredContent"]["stages"][:3] == ["W", "W", "N1"]


def test_a_result_that_comes_after_initialized_goes_out_at_once(host):
    ready(host)
    assert methods(host.sent) == ["result", "ui/notifications/tool-input"]
    host.call_tool()
    assert methods(host.sent)[-1] == "ui/notifications/tool-result"


def test_a_call_before_initialized_is_refused_and_never_reaches_the_server(host):
    host.receive(INITIALIZE)
    before = len(host.transcript)
    host.receive(CLICK)
    error = host.sent[-1]["error"]
    assert error["code"] == HOST_REFUSED and "before ui/notifications/initialized" in error["message"]
    assert [e.transport for e in host.transcript][before:] == ["postMessage", "postMessage"]


def test_a_click_is_one_tools_call_to_the_lab_and_its_result_reaches_the_view(host):
    ready(host)
    host.receive(CLICK)
    answer = host.sent[-1]
    assert answer["id"] == 2
    assert answer["result"]["content"][0]["text"] == "Epoch 6 of night P07 (2 min 30 s to 3 min 00 s): N3."
    tail = [(e.transport, e.method) for e in host.transcript][-3:]
    assert tail == [("postMessage", "tools/call"), ("stdio", "tools/call"), ("postMessage", "tools/call")]


def test_the_views_own_meta_never_reaches_the_server(host):
    ready(host)
    smuggled = {**CLICK, "params": {**CLICK["params"], "_meta": {
        "io.modelcontextprotocol/clientInfo": {"name": "not-the-host", "version": "6.6.6"}}}}
    host.receive(smuggled)
    sent_to_lab = [e for e in host.transcript if e.transport == "stdio"][-1].up_payloads[0]
    assert "not-the-host" not in sent_to_lab and "mcpwire-notebook-host" in sent_to_lab


def test_a_model_only_tool_called_from_the_view_is_refused(lab, tools):
    model_only = [{**tool, "_meta": {"ui": {"resourceUri": VIEW_URI, "visibility": ["model"]}}}
                  if tool["name"] == "show_hypnogram" else tool for tool in tools]
    host = AppHost(lab, "show_hypnogram", tools=model_only)
    host.load()
    ready(host)
    before = len(lab.transcript)
    host.receive({**CLICK, "params": {"name": "show_hypnogram", "arguments": {}}})
    assert host.sent[-1]["error"]["code"] == HOST_REFUSED and "not callable from an app" in host.sent[-1]["error"]["message"]
    assert len(lab.transcript) == before
    assert all(check_host_frame(frame) == [] for frame in host.sent)


def test_an_empty_visibility_is_no_audience_not_the_default(lab, tools):
    nobody = [{**tool, "_meta": {"ui": {"resourceUri": VIEW_URI, "visibility": []}}}
              if tool["name"] == "show_hypnogram" else tool for tool in tools]
    assert "show_hypnogram" not in [tool["name"] for tool in model_tools(nobody)]
    host = AppHost(lab, "show_hypnogram", tools=nobody)
    host.load()
    ready(host)
    before = len(lab.transcript)
    host.receive({**CLICK, "params": {"name": "show_hypnogram", "arguments": {}}})
    assert host.sent[-1]["error"]["code"] == HOST_REFUSED and len(lab.transcript) == before


def test_a_tool_that_is_not_read_only_needs_consent(lab, tools):
    asked = []
    host = AppHost(lab, "show_hypnogram", tools=tools, consent=lambda tool, arguments: asked.append(tool["name"]))
    host.load()
    ready(host)
    host.receive({**CLICK, "params": {"name": "sync_notes", "arguments": {"remote": "x"}}})
    assert asked == ["sync_notes"]
    assert host.sent[-1]["error"] == {"code": HOST_REFUSED, "message": "the user did not allow sync_notes"}


def test_with_consent_the_call_goes_through(lab, tools):
    host = AppHost(lab, "show_hypnogram", tools=tools, consent=lambda tool, arguments: True)
    host.load()
    ready(host)
    host.receive({**CLICK, "params": {"name": "sync_notes", "arguments": {"remote": "x"}}})
    assert host.sent[-1]["result"]["isError"] is True  # the lab's own answer: it has no network
    assert "refused tools/call" not in "\n".join(host.log)


@pytest.mark.parametrize("message, problem", [
    ("not an object", "not a JSON object"),
    ({"id": 3, "method": "tools/call"}, 'jsonrpc must be "2.0"'),
    ({"jsonrpc": "2.0", "id": True, "method": "ping"}, "id must be a string or an integer"),
    ({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": [1]}, "params must be an object"),
    ({"jsonrpc": "2.0", "id": 3}, "neither a request, a notification nor a response"),
])
def test_a_malformed_message_gets_invalid_request(host, message, problem):
    host.receive(message)
    error = host.sent[-1]["error"]
    assert error == {"code": INVALID_REQUEST, "message": f"Invalid Request: {problem}"}
    readable = isinstance(message, dict) and not isinstance(message.get("id"), bool)
    if readable:
        assert host.sent[-1]["id"] == message["id"]
    else:  # MCP's error response leaves out an id it could not read; JSON-RPC's "id": null fails its schema
        assert "id" not in host.sent[-1]


@pytest.mark.parametrize("response", [
    {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}},
    {"jsonrpc": "2.0", "id": 41, "result": {}},
    {"jsonrpc": "2.0", "id": 42, "error": {"code": -32601, "message": "Method not found"}},
    {"id": 43, "result": {}},
])
def test_a_response_is_never_answered_even_malformed_or_unmatched(host, response):
    ready(host)
    before = len(host.sent)
    host.receive(response)
    assert host.sent[before:] == []


def test_an_unknown_method_is_method_not_found(host):
    ready(host)
    host.receive({"jsonrpc": "2.0", "id": 9, "method": "ui/open-link", "params": {"url": "https://example.com"}})
    assert host.sent[-1]["error"]["code"] == METHOD_NOT_FOUND


def test_size_changed_is_applied(host):
    ready(host)
    host.receive({"jsonrpc": "2.0", "method": "ui/notifications/size-changed", "params": {"width": 420, "height": 180}})
    assert host.size == {"width": 420, "height": 180}


def test_teardown_is_a_request_with_empty_params_and_its_answer_closes(host):
    ready(host)
    host.teardown()
    request = host.sent[-1]
    assert request["method"] == "ui/resource-teardown" and request["params"] == {} and host.state == "closing"
    host.receive({"jsonrpc": "2.0", "id": request["id"], "result": {}})
    assert host.state == "closed"


def test_a_cancelled_call_is_told_to_the_view(host):
    ready(host)
    host.cancel("the user closed the output")
    assert host.sent[-1] == {"jsonrpc": "2.0", "method": "ui/notifications/tool-cancelled",
                             "params": {"reason": "the user closed the output"}}


def test_resources_read_from_the_view_is_forwarded(host):
    ready(host)
    host.receive({"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": "notes://welcome"}})
    assert host.sent[-1]["result"]["contents"][0]["uri"] == "notes://welcome"


def test_every_postmessage_frame_is_in_the_transcript_with_bytes_and_tokens(host):
    ready(host)
    host.receive(CLICK)
    posted = [e for e in host.transcript if e.transport == "postMessage"]
    assert [(e.method, e.bytes_up > 0) for e in posted] == [
        ("ui/initialize", True), ("ui/initialize", False), ("ui/notifications/initialized", True),
        ("ui/notifications/tool-input", False), ("tools/call", True), ("tools/call", False)]
    click = posted[4]
    assert click.bytes_up == len(click.up) > 0 and click.tokens_up > 0 and click.bytes_down == 0
    assert "View asked tools/call" in "\n".join(host.log)


def test_the_csp_is_the_declared_empty_list_and_logged(host):
    assert host.policy == build_policy({})
    assert "connect-src 'none'" in host.policy and "object-src 'none'" in host.policy
    assert f"CSP {host.policy}" in host.log


def test_without_ui_csp_the_spec_default_is_used():
    assert build_policy(None).startswith("default-src 'none'; script-src 'self' 'unsafe-inline'; "
                                         "style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                                         "media-src 'self' data:; connect-src 'none'")


def test_undeclared_domains_are_refused():
    policy = build_policy({"connectDomains": ["https://api.example.com"]})
    assert allows(policy, "connect-src", "https://api.example.com/v1")
    assert not allows(policy, "connect-src", "https://evil.example.net/")
    assert not allows(policy, "img-src", "https://api.example.com/logo.png")
    assert not allows(build_policy(None), "connect-src", "https://api.example.com/")


def test_a_wildcard_subdomain_matches_subdomains_only():
    policy = build_policy({"resourceDomains": ["https://*.cdn.example"]})
    assert allows(policy, "script-src", "https://a.cdn.example/x.js")
    assert not allows(policy, "script-src", "https://cdn.example.evil/x.js")


@pytest.mark.parametrize("entry", ["https://a.example; script-src *", "https://a.example 'unsafe-eval'", "*",
                                   "data:", "https:", "javascript:alert(1)", "https://a.example/path", 42])
def test_domain_entries_that_could_change_the_policy_are_dropped(entry):
    approved, refused = approved_domains({"connectDomains": [entry, "https://ok.example"]})
    assert approved == {"connectDomains": ["https://ok.example"]}
    assert len(refused) == 1
    assert "unsafe-eval" not in build_policy({"connectDomains": [entry]})
    assert "script-src *" not in build_policy({"connectDomains": [entry]})


@pytest.mark.parametrize("frame, problem", [
    ({"jsonrpc": "2.0", "id": 5, "method": "ui/resource-teardown", "params": {"reason": "closed"}},
     "params: reason is not allowed here"),
    ({"jsonrpc": "2.0", "method": "ui/notifications/tool-input", "params": {"arguments": {}, "extra": 1}},
     "params: extra is not allowed here"),
    ({"jsonrpc": "2.0", "method": "ui/notifications/tool-result", "params": {"isError": False}}, "params: missing content"),
    ({"jsonrpc": "2.0", "method": "ui/notifications/tool-cancelled", "params": {"reason": 3}}, "params.reason: must be a string"),
    ({"jsonrpc": "2.0", "method": "ui/notifications/sandbox-resource-ready", "params": {"csp": {}}}, "params: missing html"),
    ({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2026-01-26", "hostInfo": {"name": "h"},
                                           "hostCapabilities": {}, "hostContext": {}}}, "result.hostInfo: missing version"),
    ({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2026-01-26", "hostInfo": {"name": "h", "version": "1"},
                                           "hostCapabilities": {}, "hostContext": {"containerDimensions": {
                                               "height": 100, "maxHeight": 200}}}},
     "result.hostContext.containerDimensions: either height or maxHeight, not both"),
    ({"jsonrpc": "2.0", "method": "ui/initialize", "params": {}}, "method: a host does not send 'ui/initialize' as a notification"),
])
def test_the_shape_check_catches_what_the_schema_refuses(frame, problem):
    assert problem in check_host_frame(frame)
