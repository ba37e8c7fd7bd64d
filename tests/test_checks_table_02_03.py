"""Exercises 02 and 03: each wrong answer a learner might write gets ✗ with a message naming its mistake."""

import copy

import pytest

import checks

VERSION = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
ENVELOPE = {VERSION: "2026-07-28", CAPABILITIES: {}}


def passes(out):
    return out.startswith("✓")


def fails_naming(out, phrases):
    return out.startswith("✗") and all(phrase in out for phrase in phrases)


# --- 02 task 1 · the envelope ----------------------------------------------------------------------

def add_envelope(*, where="params", meta=None, keep_params=True, keep_meta=True, version="2026-07-28",
                 returns=True):
    def work(frame):
        envelope = dict(meta if meta is not None else {VERSION: version, CAPABILITIES: {}})
        if where == "top":
            frame["_meta"] = envelope
        elif keep_params and keep_meta:
            frame.setdefault("params", {}).setdefault("_meta", {}).update(envelope)
        elif keep_params:
            frame.setdefault("params", {})["_meta"] = envelope
        else:
            frame["params"] = {"_meta": envelope}
        return frame if returns else None
    return work


def envelope_without_mutating(frame):
    params = frame.get("params", {})
    return {**frame, "params": {**params, "_meta": {CAPABILITIES: {}, VERSION: "2026-07-28", **params.get("_meta", {})}}}


ENVELOPE_RIGHT = [
    pytest.param(add_envelope(), id="solution"),
    pytest.param(envelope_without_mutating, id="new-dict-keys-reordered"),
    pytest.param(add_envelope(meta={**ENVELOPE, CAPABILITIES: {"elicitation": {}}}), id="declares-a-capability"),
]
ENVELOPE_WRONG = [
    pytest.param(add_envelope(where="top"), ("error -32602", "goes inside params"), id="next-to-params"),
    pytest.param(add_envelope(keep_params=False), ("lost the params",), id="replaces-params"),
    pytest.param(add_envelope(keep_meta=False), ("dropped or changed progressToken", "instead of replacing it"),
                 id="replaces-an-existing-meta"),
    pytest.param(lambda frame: {**frame, "params": {**frame.get("params", {}), "_meta": {
        **frame.get("params", {}).get("_meta", {}), VERSION: "2026-07-28", CAPABILITIES: {}, "progressToken": 1}}},
                 ("dropped or changed progressToken",), id="changes-the-progress-token"),
    pytest.param(add_envelope(meta={VERSION: "2026-07-28"}), ("missing the required envelope key",
                                                              f"Add {CAPABILITIES}"), id="no-capabilities"),
    pytest.param(add_envelope(meta={CAPABILITIES: {}}), (f"Add {VERSION}",), id="no-version"),
    pytest.param(add_envelope(version="2025-11-25"), ("-32022", "name that version"), id="legacy-version"),
    pytest.param(add_envelope(meta={"protocolVersion": "2026-07-28", "capabilities": {}}),
                 ("missing the required envelope key",), id="unprefixed-keys"),
    pytest.param(add_envelope(returns=False), ("returned None",), id="returns-nothing"),
    pytest.param(lambda frame: {**frame, "id": 1, "params": {**frame.get("params", {}), "_meta": {
        **frame.get("params", {}).get("_meta", {}), **ENVELOPE}}},
                 ("changed id",), id="renumbers-the-id"),
    pytest.param(lambda frame: frame["params"].update(_meta=dict(ENVELOPE)) or frame,
                 ("raised KeyError", "no params at all"), id="assumes-params-exist"),
]


@pytest.mark.parametrize("work", ENVELOPE_RIGHT)
def test_envelope_right_answers_pass(verdict, lab, work):
    assert passes(verdict(checks.check_envelope, work, lab))


@pytest.mark.parametrize("work, phrases", ENVELOPE_WRONG)
def test_envelope_wrong_answers_name_their_mistake(verdict, lab, work, phrases):
    out = verdict(checks.check_envelope, work, lab)
    assert fails_naming(out, phrases), out


# --- 02 task 2 · recover from -32022 -----------------------------------------------------------------

def fallback(*, only_32022=True, from_supported=True, check_speaks=True, retries=1, return_first=False, get=True):
    def work(send, frame, speaks):
        reply = first = send(frame)
        for _ in range(retries):
            error = reply.get("error") if get else reply["error"]
            error = error or {}
            if only_32022 and error.get("code") != -32022:
                break
            supported = (error.get("data") or {}).get("supported", [])
            pool = supported if from_supported else speaks
            shared = [v for v in pool if v in speaks] if check_speaks else list(pool)
            if not shared:
                break
            retry = copy.deepcopy(frame)
            retry["params"]["_meta"][VERSION] = max(shared)
            reply = send(retry)
        return first if return_first else reply
    return work


def retry_any_error(send, frame, speaks):
    reply = send(frame)
    if "error" in reply:
        supported = reply["error"].get("data", {}).get("supported") or speaks
        frame["params"]["_meta"][VERSION] = max(v for v in supported if v in speaks)
        reply = send(frame)
    return reply


def fallback_in_another_style(send, frame, speaks):
    reply = send(frame)
    if reply.get("error", {}).get("code") == -32022:
        common = sorted(set(reply["error"]["data"]["supported"]) & set(speaks), reverse=True)
        if common:
            frame["params"]["_meta"][VERSION] = common[0]
            reply = send(frame)
    return reply


def none_when_nothing_is_shared(send, frame, speaks):
    reply = send(frame)
    error = reply.get("error") or {}
    if error.get("code") != -32022:
        return reply
    shared = [v for v in speaks if v in error["data"]["supported"]]
    if not shared:
        return None
    frame["params"]["_meta"][VERSION] = shared[0]
    return send(frame)


RECOVERY_RIGHT = [
    pytest.param(fallback(), id="solution"),
    pytest.param(fallback_in_another_style, id="sets-and-mutation"),
]
RECOVERY_WRONG = [
    pytest.param(retry_any_error, ("sent 2 frames; it should send 1", "Only -32022 is about the version"),
                 id="retries-every-error"),
    pytest.param(fallback(from_supported=False), ("not in error.data.supported",), id="guesses-from-its-own-list"),
    pytest.param(fallback(check_speaks=False), ("a version your client does not speak",), id="ignores-what-it-speaks"),
    pytest.param(fallback(retries=0), ("sent 1 frame; it should send 2", "error -32022"), id="never-retries"),
    pytest.param(fallback(only_32022=False, from_supported=False, check_speaks=False, retries=9),
                 ("sent 4 frames and was still going",), id="retries-without-end"),
    pytest.param(fallback(return_first=True), ("not the last reply",), id="returns-the-first-reply"),
    pytest.param(fallback(get=False), ("raised KeyError", "read it with .get()"), id="reads-error-of-a-result"),
    pytest.param(none_when_nothing_is_shared, ("speaks only 2027-01-01", "returned None"),
                 id="none-when-nothing-is-shared"),
]


@pytest.mark.parametrize("work", RECOVERY_RIGHT)
def test_version_recovery_right_answers_pass(verdict, lab, work):
    assert passes(verdict(checks.check_version_recovery, work, lab))


@pytest.mark.parametrize("work, phrases", RECOVERY_WRONG)
def test_version_recovery_wrong_answers_name_their_mistake(verdict, lab, work, phrases):
    out = verdict(checks.check_version_recovery, work, lab)
    assert fails_naming(out, phrases), out


# --- 03 task 1 · routing headers -----------------------------------------------------------------------

def routing(*, version=True, method=True, names=("tools/call", "prompts/get", "resources/read"), uri=True,
            lower=False, extra_name=False):
    def work(frame):
        headers = {}
        if version:
            headers["MCP-Protocol-Version"] = frame["params"]["_meta"][VERSION]
        if method:
            headers["Mcp-Method"] = frame["method"]
        if frame["method"] in names:
            field = "uri" if frame["method"] == "resources/read" and uri else "name"
            headers["Mcp-Name"] = frame["params"].get(field, "")
        elif extra_name:
            headers["Mcp-Name"] = frame["method"]
        return {name.lower(): value for name, value in headers.items()} if lower else headers
    return work


ROUTING_RIGHT = [
    pytest.param(routing(), id="solution"),
    pytest.param(routing(lower=True), id="lower-case-names"),
]
ROUTING_WRONG = [
    pytest.param(routing(names=("tools/call", "resources/read")), ("refused prompts/get", "-32020", "Mcp-Name"),
                 id="prompts-get-without-name"),
    pytest.param(routing(names=("tools/call",)), ("refused resources/read", "Mcp-Name"), id="resources-read-without-name"),
    pytest.param(routing(names=()), ("refused tools/call", "Mcp-Name"), id="no-name-at-all"),
    pytest.param(routing(uri=False), ("refused resources/read", "params.uri"), id="name-instead-of-uri"),
    pytest.param(routing(method=False), ("refused server/discover", "Mcp-Method"), id="no-method-header"),
    pytest.param(routing(version=False), ("refused server/discover", "MCP-Protocol-Version"), id="no-version-header"),
    pytest.param(lambda f: {**routing()(f), "MCP-Protocol-Version": "2025-11-25"}, ("legacy transport",),
                 id="handshake-era-version"),
    pytest.param(lambda f: {**routing()(f), "Mcp-Method": f["method"].upper()}, ("-32020",), id="method-case-changed"),
    pytest.param(lambda f: {key: 1 for key in routing()(f)}, ("values are strings",), id="non-string-values"),
    pytest.param(lambda f: {**routing()(f), "Mcp-Name": "séance"} if f["method"] == "tools/call" else routing()(f),
                 ("cannot go on the wire",), id="non-ascii-value"),
    # The four requests all name 2026-07-28, so only a body naming another version shows a hard-coded header.
    pytest.param(lambda f: {**routing()(f), "MCP-Protocol-Version": "2026-07-28"},
                 ("names version '2027-01-01'", "your MCP-Protocol-Version header is '2026-07-28'", "-32020"),
                 id="hard-coded-version"),
    # The lab accepts an Mcp-Name on server/discover, so the check itself must refuse a header that mirrors nothing.
    pytest.param(routing(extra_name=True), ("give server/discover an Mcp-Name ('server/discover')",
                                            "repeats nothing from the body"), id="name-for-every-method"),
    pytest.param(lambda f: {"Mcp-Name": "", **routing()(f)}, ("give server/discover an Mcp-Name ('')",),
                 id="empty-name-for-every-method"),
    # Every name in the four requests is lower case already, so only the capitalised probe shows a lowered value.
    pytest.param(lambda f: {name: value.lower() for name, value in routing()(f).items()},
                 ("For a tools/call of 'Search_Notes'", "Mcp-Name 'search_notes'", "-32020", "values are not"),
                 id="values-lower-cased"),
]


@pytest.mark.parametrize("work", ROUTING_RIGHT)
def test_routing_headers_right_answers_pass(verdict, http, work):
    assert verdict(checks.check_routing_headers, work, http).startswith("✓ Your headers routed all four requests")


@pytest.mark.parametrize("work, phrases", ROUTING_WRONG)
def test_routing_headers_wrong_answers_name_their_mistake(verdict, http, work, phrases):
    out = verdict(checks.check_routing_headers, work, http)
    assert fails_naming(out, phrases), out


# --- 03 task 2 · the fault lab ---------------------------------------------------------------------------

RIGHT = {
    "method-header-mismatch": (400, -32020), "get-instead-of-post": (405, None), "no-envelope": (400, -32602),
    "foreign-origin": (403, None), "unknown-method": (404, -32601), "future-version": (400, -32022),
    "no-version-header": (400, -32600), "not-json": (400, -32700),
}
# The likeliest wrong guess for each fault, and the words of the explanation a learner must read.
MISSES = {
    "method-header-mismatch": ((400, -32600), "compares every routing header with the body"),
    "get-instead-of-post": ((400, -32600), "Allow: POST"),
    "no-envelope": ((400, -32600), "the spec requires status 400"),
    "foreign-origin": ((400, None), "Invalid Origin header"),
    "unknown-method": ((400, -32601), "on HTTP it is a 404"),
    "future-version": ((400, -32020), "Header and body agree"),
    "no-version-header": ((400, -32020), "400 is the SDK's mapping"),
    "not-json": ((400, -32600), "400 is the SDK's mapping"),
}


def test_fault_lab_right_as_lists_passes(verdict, http):
    out = verdict(checks.check_fault_lab, {name: list(pair) for name, pair in RIGHT.items()}, http)
    assert "✓ 8 of 8 predictions right." in out


@pytest.mark.parametrize("fault", list(MISSES))
def test_fault_lab_each_miss_is_explained(verdict, http, fault):
    guess, why = MISSES[fault]
    out = verdict(checks.check_fault_lab, {**RIGHT, fault: guess}, http)
    assert "✗ 7 of 8 predictions right." in out and f"{fault}: you predicted" in out and why in out, out


@pytest.mark.parametrize("prediction, phrase", [
    pytest.param("400", "not (status, code) pairs", id="text"),
    pytest.param((400,), "not (status, code) pairs", id="status-only"),
    pytest.param(("400", -32700), "not (status, code) pairs", id="status-as-text"),
    pytest.param((True, -32700), "not (status, code) pairs", id="bool-status"),
])
def test_fault_lab_malformed_predictions(verdict, http, prediction, phrase):
    out = verdict(checks.check_fault_lab, {**RIGHT, "not-json": prediction}, http)
    assert fails_naming(out, (phrase, "not-json")), out


def test_fault_lab_half_done_is_not_done(verdict, http):
    out = verdict(checks.check_fault_lab, {**RIGHT, "not-json": (None, None), "foreign-origin": ...}, http)
    assert out.startswith("not done yet: predict 2 more: foreign-origin, not-json")
