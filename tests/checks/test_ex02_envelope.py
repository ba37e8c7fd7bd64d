"""Exercise 02's checks (the envelope, recovery from -32022): right answers pass, wrong ones name their mistake."""

import copy
import json

import pytest

import checks

VERSION = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
ENVELOPE = {VERSION: "2026-07-28", CAPABILITIES: {}}


# --- found by a fresh reader: each of these got ✓ before its check was tightened ---------------------

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
    pytest.param(lambda frame: json.loads(json.dumps(add_envelope()(frame), ensure_ascii=False)),
                 id="json-round-trip-keeps-types-and-accents"),
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
    # Found by the learner run of round 3: a value of the wrong JSON type was told to compare key by key.
    pytest.param(add_envelope(meta={VERSION: ["2026-07-28"], CAPABILITIES: {}}),
                 ("Input should be a valid string", "is a string"), id="version-in-a-list"),
    pytest.param(add_envelope(meta={VERSION: "2026-07-28", CAPABILITIES: "{}"}),
                 ("valid dictionary", "an object ({} when you declare nothing)"), id="capabilities-as-json-text"),
    # Ids of both JSON types: tools/list has the number 2, and the frame rebuilt from text loses its type.
    pytest.param(lambda frame: {**add_envelope()(frame), "id": str(frame["id"])},
                 ("changed id", "you returned the id '2'", "keep their type"), id="id-turned-into-text"),
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


# --- single answers, the exact words a learner reads -------------------------------------------------


def stub(*args):
    raise NotImplementedError("your code here")


def envelope_right(frame):
    frame.setdefault("params", {}).setdefault("_meta", {}).update(ENVELOPE)
    return frame


def test_envelope_right(verdict, lab):
    out = verdict(checks.check_envelope, envelope_right, lab)
    assert out.startswith("✓ add_envelope made four requests") and "cost 113 bytes" in out


def test_a_learner_exception_is_reported_not_raised(verdict, lab):
    out = verdict(checks.check_envelope, lambda frame: 1 / 0, lab)
    assert out.startswith("✗ add_envelope raised ZeroDivisionError")


def fallback_right(send, frame, speaks):
    reply = send(frame)
    error = reply.get("error") or {}
    shared = [v for v in speaks if v in (error.get("data") or {}).get("supported", [])]
    if error.get("code") != -32022 or not shared:
        return reply
    frame["params"]["_meta"][VERSION] = shared[0]
    return send(frame)


def test_version_recovery_right(verdict, lab):
    assert verdict(checks.check_version_recovery, fallback_right, lab).startswith("✓ Your client resent")


def test_version_recovery_guessing_a_version(verdict, lab):
    def legacy(send, frame, speaks):
        reply = send(frame)
        if (reply.get("error") or {}).get("code") == -32022:
            frame["params"]["_meta"][VERSION] = "2025-11-25"
            return send(frame)
        return reply
    out = verdict(checks.check_version_recovery, legacy, lab)
    assert "named '2025-11-25', which is not in error.data.supported ['2026-07-28']" in out


def test_version_recovery_ignoring_what_the_client_speaks(verdict, lab):
    def first_supported(send, frame, speaks):
        reply = send(frame)
        error = reply.get("error") or {}
        if error.get("code") == -32022:
            frame["params"]["_meta"][VERSION] = error["data"]["supported"][0]
            return send(frame)
        return reply
    out = verdict(checks.check_version_recovery, first_supported, lab)
    assert "a version your client does not speak (it speaks ['2027-01-01'])" in out


def test_version_recovery_retrying_every_error(verdict, lab):
    def always(send, frame, speaks):
        reply = send(frame)
        if "error" in reply:
            frame["params"]["_meta"][VERSION] = "2026-07-28"
            return send(frame)
        return reply
    out = verdict(checks.check_version_recovery, always, lab)
    assert "sent 2 frames; it should send 1" in out and "Only -32022 is about the version" in out


def test_version_recovery_not_retrying(verdict, lab):
    out = verdict(checks.check_version_recovery, lambda send, frame, speaks: send(frame), lab)
    assert "sent 1 frame; it should send 2" in out and "error -32022" in out


# --- unfinished work ---------------------------------------------------------------------------------

@pytest.mark.parametrize("check", [checks.check_envelope, checks.check_version_recovery], ids=lambda v: v.__name__)
def test_an_unfinished_task_is_not_done_yet(verdict, lab, check):
    assert verdict(check, stub, lab).startswith("not done yet: ")
