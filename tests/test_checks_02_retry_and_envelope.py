"""Exercise 02: wrong answers found by a fresh reader, each of which got ✓ before its check was tightened."""

import copy

import pytest

import checks

VERSION = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


def rebuilt_retry(send, frame, speaks):
    """Retries with a frame written afresh from method and id: the clientInfo (or a tool's arguments) is lost."""
    reply = send(frame)
    if (reply.get("error") or {}).get("code") == -32022:
        shared = [version for version in speaks if version in reply["error"]["data"]["supported"]]
        if shared:
            reply = send({"jsonrpc": "2.0", "id": frame["id"], "method": frame["method"],
                          "params": {"_meta": {VERSION: shared[0], CAPABILITIES: {}}}})
    return reply


def retry_with_capabilities_dropped(send, frame, speaks):
    reply = send(frame)
    if (reply.get("error") or {}).get("code") == -32022:
        retry = copy.deepcopy(frame)
        retry["params"]["_meta"][VERSION] = "2026-07-28"
        retry["params"]["_meta"][CAPABILITIES] = {"sampling": {}}
        reply = send(retry)
    return reply


def retry_with_a_new_id(send, frame, speaks):
    """A new id is allowed: the refused request has its answer, so its id is free again."""
    reply = send(frame)
    if (reply.get("error") or {}).get("code") == -32022:
        shared = [version for version in speaks if version in reply["error"]["data"]["supported"]]
        if shared:
            retry = copy.deepcopy(frame)
            retry["id"] = f"{frame['id']}-again"
            retry["params"]["_meta"][VERSION] = shared[0]
            reply = send(retry)
    return reply


@pytest.mark.parametrize("work, phrases", [
    pytest.param(rebuilt_retry, ("changed more than the protocol version", "clientInfo is gone"), id="frame-rebuilt"),
    pytest.param(retry_with_capabilities_dropped, ("changed more than the protocol version", "clientCapabilities"),
                 id="capabilities-changed"),
])
def test_a_retry_that_changes_more_than_the_version_fails(verdict, lab, work, phrases):
    out = verdict(checks.check_version_recovery, work, lab)
    assert out.startswith("✗") and all(phrase in out for phrase in phrases), out


def test_a_retry_under_a_new_id_passes(verdict, lab):
    assert verdict(checks.check_version_recovery, retry_with_a_new_id, lab).startswith("✓ Your client resent")
