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


def _on_32022(pick):
    """A fallback that resends after a -32022 with the version `pick(reply, frame, speaks)` chooses."""
    def work(send, frame, speaks):
        reply = send(frame)
        if (reply.get("error") or {}).get("code") != -32022:
            return reply
        version = pick(reply, frame, speaks)
        if version is None:
            return reply
        frame["params"]["_meta"][VERSION] = version
        return send(frame)
    return work


def _shared(reply, speaks):
    return [version for version in speaks if version in reply["error"]["data"]["supported"]]


def _next_after_current(reply, frame, speaks):
    rest = speaks[speaks.index(frame["params"]["_meta"][VERSION]) + 1:]
    return rest[0] if rest else None


def _server_order(reply, frame, speaks):
    return next((version for version in reply["error"]["data"]["supported"] if version in speaks), None)


def _raises_when_nothing_is_shared(reply, frame, speaks):
    shared = _shared(reply, speaks)
    if not shared:
        raise ValueError("no common protocol version")
    return shared[0]


@pytest.mark.parametrize("work, phrases", [
    pytest.param(_on_32022(lambda reply, frame, speaks: speaks[1] if len(speaks) > 1 else None),
                 ("named '2026-09-01', which is not in error.data.supported",), id="second-version-it-speaks"),
    pytest.param(_on_32022(_next_after_current), ("named '2026-09-01', which is not in error.data.supported",),
                 id="next-version-down"),
    pytest.param(_on_32022(lambda reply, frame, speaks: "2026-07-28" if "2026-07-28" in speaks else None),
                 ("named '2026-07-28'", "'2026-10-01' is the first version in your client's list"),
                 id="the-lab-version-written-in"),
    pytest.param(_on_32022(lambda reply, frame, speaks: (_shared(reply, speaks) or [None])[-1]),
                 ("named '2026-07-28'", "'2026-10-01' is the first version in your client's list", "newest first"),
                 id="oldest-shared-version"),
    pytest.param(_on_32022(_server_order), ("named '2026-07-28'", "first version in your client's list"),
                 id="first-shared-in-the-server-order"),
    pytest.param(_on_32022(lambda reply, frame, speaks: _shared(reply, speaks)[0]),
                 ("raised IndexError", "share no version", "return the -32022 reply"), id="empty-shared-list-indexed"),
    pytest.param(_on_32022(_raises_when_nothing_is_shared),
                 ("raised ValueError", "share no version", "return the -32022 reply"), id="raises-when-nothing-shared"),
])
def test_a_retry_that_does_not_pick_from_both_lists_fails(verdict, lab, work, phrases):
    out = verdict(checks.check_version_recovery, work, lab)
    assert out.startswith("✗") and all(phrase in out for phrase in phrases), out


def test_a_loop_over_the_versions_it_speaks_passes(verdict, lab):
    def first_spoken(reply, frame, speaks):
        for version in speaks:
            if version in reply["error"]["data"]["supported"]:
                return version
        return None
    assert verdict(checks.check_version_recovery, _on_32022(first_spoken), lab).startswith("✓ Your client resent")


def envelope_in_both_places(frame):
    frame.setdefault("params", {}).setdefault("_meta", {}).update({VERSION: "2026-07-28", CAPABILITIES: {}})
    frame["_meta"] = {VERSION: "2026-07-28", CAPABILITIES: {}}
    return frame


def envelope_with_arguments_everywhere(frame):
    params = frame.setdefault("params", {})
    params.setdefault("arguments", {})
    params.setdefault("_meta", {}).update({VERSION: "2026-07-28", CAPABILITIES: {}})
    return frame


@pytest.mark.parametrize("work, phrases", [
    pytest.param(envelope_in_both_places, ("added a top-level _meta", "server/discover", "goes in params._meta only"),
                 id="envelope-also-next-to-params"),
    pytest.param(envelope_with_arguments_everywhere, ("added params.arguments", "server/discover"),
                 id="arguments-added-to-every-request"),
])
def test_an_envelope_that_adds_more_than_meta_fails(verdict, lab, work, phrases):
    out = verdict(checks.check_envelope, work, lab)
    assert out.startswith("✗") and all(phrase in out for phrase in phrases), out
