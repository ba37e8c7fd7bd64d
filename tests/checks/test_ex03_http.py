"""Exercise 03, task 1 (routing headers): right answers pass, wrong ones name their mistake."""

import base64
from urllib.parse import quote

import pytest

import checks
from mcpwire.headers import encode_value

VERSION = "io.modelcontextprotocol/protocolVersion"


def encoded(value, how="sentinel"):
    """A header value: as it is when it is printable ASCII, otherwise encoded the way `how` says."""
    if all(" " <= ch <= "~" for ch in value) and how != "always":
        return value
    utf8_base64 = base64.b64encode(value.encode()).decode()
    return {"sentinel": f"=?base64?{utf8_base64}?=", "always": f"=?base64?{utf8_base64}?=", "raw": value,
            "percent": quote(value), "bare-base64": utf8_base64, "mime-word": f"=?utf-8?b?{utf8_base64}?=",
            "ascii-only": value.encode("ascii", "ignore").decode(), "toolkit": encode_value(value),
            "latin-1": f"=?base64?{base64.b64encode(value.encode('latin-1')).decode()}?="}[how]


def fails_naming(out, phrases):
    return out.startswith("✗") and all(phrase in out for phrase in phrases)


# --- 03 task 1 · routing headers -----------------------------------------------------------------------

def routing(*, version=True, method=True, names=("tools/call", "prompts/get", "resources/read"), uri=True,
            lower=False, extra_name=False, how="sentinel"):
    def work(frame):
        headers = {}
        if version:
            headers["MCP-Protocol-Version"] = frame["params"]["_meta"][VERSION]
        if method:
            headers["Mcp-Method"] = frame["method"]
        if frame["method"] in names:
            field = "uri" if frame["method"] == "resources/read" and uri else "name"
            headers["Mcp-Name"] = encoded(frame["params"].get(field, ""), how)
        elif extra_name:
            headers["Mcp-Name"] = frame["method"]
        return {name.lower(): value for name, value in headers.items()} if lower else headers
    return work


ROUTING_RIGHT = [
    pytest.param(routing(), id="solution"),
    pytest.param(routing(lower=True), id="lower-case-names"),
    pytest.param(routing(how="toolkit"), id="mcpwire-encode-value"),
    pytest.param(routing(how="always"), id="every-name-base64-encoded"),
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
    # A value that needs encoding: résumé is not printable ASCII, so it travels as =?base64?...?=.
    pytest.param(routing(how="raw"), ("For a tools/call of 'résumé'", "cannot go on the wire", "=?base64?"),
                 id="accented-name-sent-as-it-is"),
    pytest.param(routing(how="percent"), ("your Mcp-Name is 'r%C3%A9sum%C3%A9'", "-32020", "=?base64? and ?="),
                 id="accented-name-percent-encoded"),
    pytest.param(routing(how="bare-base64"), ("your Mcp-Name is 'csOpc3Vtw6k='", "between =?base64? and ?="),
                 id="base64-without-the-sentinel"),
    pytest.param(routing(how="mime-word"), ("'=?utf-8?b?csOpc3Vtw6k=?='", "-32020"), id="an-rfc-2047-word"),
    pytest.param(routing(how="ascii-only"), ("your Mcp-Name is 'rsum'",), id="accents-dropped"),
    # Found by the learner run of round 3: the right sentinel around the wrong bytes was told to use the sentinel.
    pytest.param(routing(how="latin-1"), ("'=?base64?culzdW3p?='", "carries the name's latin-1 bytes", "UTF-8"),
                 id="latin-1-bytes-in-the-sentinel"),
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


# --- single answers, the exact words a learner reads -------------------------------------------------

def headers_right(frame):
    headers = {"MCP-Protocol-Version": frame["params"]["_meta"][VERSION], "Mcp-Method": frame["method"]}
    field = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(frame["method"])
    if field:
        headers["Mcp-Name"] = encoded(frame["params"][field])
    return headers


def test_routing_headers_right(verdict, http):
    assert verdict(checks.check_routing_headers, headers_right, http).startswith("✓ Your headers routed")


def test_routing_headers_without_name(verdict, http):
    out = verdict(checks.check_routing_headers,
                  lambda f: {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": f["method"]}, http)
    assert "refused tools/call (HTTP 400)" in out and "error -32020" in out and "Mcp-Name" in out


def test_routing_headers_with_a_legacy_version(verdict, http):
    out = verdict(checks.check_routing_headers, lambda f: {**headers_right(f), "MCP-Protocol-Version": "2025-11-25"}, http)
    assert "Missing session ID" in out and "legacy transport" in out


# --- unfinished work ---------------------------------------------------------------------------------

def stub(*args):
    raise NotImplementedError("your code here")


def test_an_unfinished_task_is_not_done_yet(verdict, http):
    assert verdict(checks.check_routing_headers, stub, http).startswith("not done yet: ")
