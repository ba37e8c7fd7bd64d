"""mcpwire.apps.host against the real lab (`python -m labserver --apps`): the View<->host rules, each refusal,
and every frame the host posts checked by the kit's own View<->host shape check (mcpwire.apps.frames).
"""

from __future__ import annotations

import json

import pytest

from mcpwire import StdioWire
from mcpwire.apps.frames import check_host_frame
from mcpwire.apps.csp import allows, approved_domains, build_policy
from mcpwire.apps.host import (
    HOST_REFUSED,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    AppHost,
    host_tools,
    model_tools,
    visibility,
)

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
    return host_tools(lab)


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
    """Each frame the host posted, checked as the answer to the View's request it answers (the transcript names it)."""
    yield
    host = request.node.funcargs.get("host")
    for entry in host.transcript if host else []:
        if entry.transport == "postMessage" and entry.down_payloads:
            frame = json.loads(entry.down_payloads[0])
            assert check_host_frame(frame, answers=None if "method" in frame else entry.method) == [], frame


def test_an_app_only_tool_never_reaches_the_model(tools):
    names = [tool["name"] for tool in model_tools(tools)]
    assert "show_hypnogram" in names and "search_notes" in names and "epoch_detail" not in names


def test_the_host_reads_the_view_with_its_own_envelope(host):
    assert host.html.startswith("<!DOCTYPE html>")
    (read,) = [e for e in host.transcript if e.transport == "stdio"]
    meta = json.loads(read.up_payloads[0])["params"]["_meta"]
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
    assert result["hostCapabilities"] == {
        "openLinks": {}, "serverTools": {}, "serverResources": {}, "logging": {}, "message": {"text": {}},
        "updateModelContext": {"text": {}, "structuredContent": {}}, "sandbox": {"csp": {}}}
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


def test_the_labs_model_only_tool_called_from_the_view_is_refused_and_never_reaches_the_lab(lab, host):
    ready(host)
    before = len(lab.transcript)
    host.receive({**CLICK, "params": {"name": "flag_epoch", "arguments": {"night": "P07", "epoch": 6, "reason": "x"}}})
    assert host.sent[-1]["error"] == {"code": HOST_REFUSED,
                                      "message": "flag_epoch is not callable from an app (visibility ['model'])"}
    assert len(lab.transcript) == before
    assert "refused tools/call flag_epoch: visibility ['model'] has no 'app'" in host.log


def test_a_host_lists_the_app_only_tool_and_a_plain_list_does_not(lab, tools):
    assert "epoch_detail" in [tool["name"] for tool in tools]
    assert "epoch_detail" not in [tool["name"] for tool in lab.request("tools/list").result["tools"]]


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
    ({"jsonrpc": "2.0", "id": 3, "method": "ping", "result": {}}, "a request or notification carries no result or error"),
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
    {"jsonrpc": "2.0", "id": 44, "error": {"message": "no code"}},
    {"jsonrpc": "2.0", "id": 45, "error": {"code": True, "message": "a bool is no code"}},
    {"jsonrpc": "2.0", "id": 46, "error": "boom"},
])
def test_a_response_is_never_answered_even_malformed_or_unmatched(host, response):
    ready(host)
    before = len(host.sent)
    host.receive(response)
    assert host.sent[before:] == []


@pytest.mark.parametrize("method, params", [
    ("ui/download-file", {"contents": [{"type": "resource", "resource": {"uri": "file:///n.txt", "text": "x"}}]}),
    ("sampling/createMessage", {"messages": [], "maxTokens": 10}),
    ("prompts/list", {}),
    ("ui/no-such-thing", {}),
])
def test_what_the_host_does_not_declare_is_method_not_found(host, method, params):
    ready(host)
    host.receive({"jsonrpc": "2.0", "id": 9, "method": method, "params": params})
    assert host.sent[-1]["error"] == {"code": METHOD_NOT_FOUND, "message": f"Method not found: {method}"}
    (capabilities,) = [e.down_payloads[0] for e in host.transcript if e.method == "ui/initialize" and e.down_payloads]
    assert "downloadFile" not in capabilities and "sampling" not in capabilities


def ask(host, method, params, identifier=9):
    host.receive({"jsonrpc": "2.0", "id": identifier, "method": method, "params": params})
    answer = host.sent[-1]
    assert answer["id"] == identifier
    return answer.get("result"), (answer.get("error") or {}).get("code")


def test_open_link_is_kept_for_the_learner_to_click(host):
    ready(host)
    assert ask(host, "ui/open-link", {"url": "https://aasm.org/clinical-resources/scoring-manual/"}) == ({}, None)
    assert host.links == ["https://aasm.org/clinical-resources/scoring-manual/"]


@pytest.mark.parametrize("params, code", [
    ({"url": "javascript:alert(document.cookie)"}, HOST_REFUSED),
    ({"url": "file:///etc/passwd"}, HOST_REFUSED),
    ({"url": "https:"}, HOST_REFUSED),
    ({"url": "data:text/html,<script>1</script>"}, HOST_REFUSED),
    ({"url": 42}, INVALID_PARAMS),
    ({}, INVALID_PARAMS),
])
def test_open_link_offers_only_http_and_https(host, params, code):
    ready(host)
    assert ask(host, "ui/open-link", params) == (None, code)
    assert host.links == []


def test_a_message_is_kept_as_what_would_join_the_conversation(host):
    ready(host)
    content = [{"type": "text", "text": "Why is epoch 6 N3?"}]
    assert ask(host, "ui/message", {"role": "user", "content": content}) == ({}, None)
    assert host.messages == [content]


@pytest.mark.parametrize("params, code", [
    ({"role": "user", "content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]}, HOST_REFUSED),
    ({"role": "assistant", "content": [{"type": "text", "text": "I am the model"}]}, INVALID_PARAMS),
    ({"role": "user", "content": {"type": "text", "text": "one block, as the spec's example writes it"}}, INVALID_PARAMS),
    ({"role": "user", "content": [{"type": "text"}]}, INVALID_PARAMS),
    ({"role": "user"}, INVALID_PARAMS),
])
def test_a_message_the_host_does_not_take_is_refused(host, params, code):
    ready(host)
    assert ask(host, "ui/message", params) == (None, code)
    assert host.messages == []


def test_each_model_context_update_replaces_the_last(host):
    ready(host)
    first = {"content": [{"type": "text", "text": "The user is looking at epoch 6."}], "structuredContent": {"epoch": 6}}
    assert ask(host, "ui/update-model-context", first) == ({}, None)
    assert ask(host, "ui/update-model-context", {"structuredContent": {"epoch": 7}}, 10) == ({}, None)
    assert host.model_context == {"structuredContent": {"epoch": 7}}


@pytest.mark.parametrize("params, code", [
    ({"content": [{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}]}, HOST_REFUSED),
    ({"structuredContent": ["epoch", 6]}, INVALID_PARAMS),
    ({"content": "The user is looking at epoch 6."}, INVALID_PARAMS),
])
def test_a_model_context_the_host_does_not_take_is_refused_and_the_last_one_stays(host, params, code):
    ready(host)
    ask(host, "ui/update-model-context", {"structuredContent": {"epoch": 6}})
    assert ask(host, "ui/update-model-context", params, 10) == (None, code)
    assert host.model_context == {"structuredContent": {"epoch": 6}}


@pytest.mark.parametrize("mode", ["inline", "fullscreen", "pip"])
def test_a_display_mode_request_gets_inline_the_one_mode_an_output_has(host, mode):
    ready(host)
    assert ask(host, "ui/request-display-mode", {"mode": mode}) == ({"mode": "inline"}, None)


def test_an_unknown_display_mode_is_invalid_params(host):
    ready(host)
    assert ask(host, "ui/request-display-mode", {"mode": "huge"}) == (None, INVALID_PARAMS)


@pytest.mark.parametrize("method, params", [
    ("ui/open-link", {"url": "https://example.com"}),
    ("ui/message", {"role": "user", "content": [{"type": "text", "text": "hi"}]}),
    ("ui/update-model-context", {"structuredContent": {}}),
    ("tools/list", {}),
])
def test_before_initialized_these_are_refused_too(host, method, params):
    host.receive(INITIALIZE)
    assert ask(host, method, params) == (None, HOST_REFUSED)
    assert host.links == host.messages == [] and host.model_context is None


def test_a_view_that_asks_to_be_torn_down_gets_the_teardown_request(host):
    ready(host)
    host.receive({"jsonrpc": "2.0", "method": "ui/notifications/request-teardown", "params": {}})
    assert host.sent[-1] == {"jsonrpc": "2.0", "id": 1, "method": "ui/resource-teardown", "params": {}}
    assert host.state == "closing" and "teardown: the View asked for it" in host.log


def test_tools_list_from_the_view_lists_only_what_it_may_call(host):
    ready(host)
    result, code = ask(host, "tools/list", {})
    names = [tool["name"] for tool in result["tools"]]
    assert code is None and "epoch_detail" in names and "show_hypnogram" in names and "flag_epoch" not in names
    assert all("app" in visibility(tool) for tool in result["tools"])
    assert [(e.transport, e.method) for e in host.transcript][-2:] == [("stdio", "tools/list"), ("postMessage", "tools/list")]


@pytest.mark.parametrize("method", ["resources/list", "resources/templates/list"])
def test_resource_lists_from_the_view_are_forwarded(host, method):
    ready(host)
    result, code = ask(host, method, {})
    assert code is None and result == json.loads(host.transcript[-2].down_payloads[0])["result"]


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


@pytest.mark.parametrize("answers, result, problem", [
    ("ui/request-display-mode", {"mode": "huge"}, "result.mode: must be one of ['fullscreen', 'inline', 'pip']"),
    ("ui/request-display-mode", {}, "result.mode: must be one of ['fullscreen', 'inline', 'pip']"),
    ("ui/open-link", {"isError": "no"}, "result.isError: must be a boolean"),
    ("ui/message", [], "result: must be an object"),
    ("ui/initialize", {"protocolVersion": "2026-01-26", "hostInfo": {"name": "h", "version": "1"},
                       "hostCapabilities": {"message": {"markdown": {}}}, "hostContext": {}},
     "result.hostCapabilities.message: markdown is not allowed here"),
    ("ui/initialize", {"protocolVersion": "2026-01-26", "hostInfo": {"name": "h", "version": "1"},
                       "hostCapabilities": {"openLinks": {"newTab": True}}, "hostContext": {}},
     "result.hostCapabilities.openLinks: newTab is not allowed here"),
])
def test_the_shape_check_reads_an_answer_as_the_answer_to_its_request(answers, result, problem):
    assert problem in check_host_frame({"jsonrpc": "2.0", "id": 3, "result": result}, answers=answers)


def test_a_teardown_answer_with_a_malformed_error_does_not_close(host):
    ready(host)
    host.teardown()
    host.receive({"jsonrpc": "2.0", "id": host.sent[-1]["id"], "error": {"code": "-32000", "message": "x"}})
    assert host.state == "closing" and host.log[-1] == "ignored a malformed response: an error needs an integer code and a string message"
