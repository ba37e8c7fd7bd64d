"""Exercise 10, tasks 1 and 2 (progress fractions, cancel a slow call): right answers pass, wrong ones name their mistake."""

import time
from fractions import Fraction

import pytest

import checks
from mcpwire import WireTimeout, frames


def stub(*args):
    raise NotImplementedError("your code here")


def progress_fractions_right(messages, token):
    return [m["params"]["progress"] / m["params"]["total"] if "total" in m["params"] else None for m in messages
            if m.get("method") == "notifications/progress" and m["params"].get("progressToken") == token]


def test_fractions_right(verdict, lab, http):
    assert verdict(checks.check_progress_fractions, progress_fractions_right, lab, http).startswith("✓ progress_fractions followed")


def test_fractions_stub(verdict, lab, http):
    assert verdict(checks.check_progress_fractions, stub, lab, http).startswith("not done yet")


def test_fractions_of_every_token(verdict, lab, http):
    def every_token(messages, token):
        return [m["params"]["progress"] / m["params"]["total"] for m in messages
                if m.get("method") == "notifications/progress"]
    out = verdict(checks.check_progress_fractions, every_token, lab, http)
    assert "You returned 39 fractions; the token 'a' has 13" in out and "the other calls' progress" in out


def test_fractions_that_trust_every_message(verdict, lab, http):
    def trusting(messages, token):
        return [m["params"]["progress"] / m["params"]["total"] for m in messages if m["params"]["progressToken"] == token]
    out = verdict(checks.check_progress_fractions, trusting, lab, http)
    assert "raised KeyError" in out and "acknowledgement has no progressToken" in out


def test_fractions_as_percentages(verdict, lab, http):
    def percent(messages, token):
        return [100 * f for f in progress_fractions_right(messages, token)]
    assert "a fraction runs from 0 to 1" in verdict(checks.check_progress_fractions, percent, lab, http)


def slow_frame(request_id="slow-call", token="slow-progress", pause_ms=200):
    return frames.request("tools/call", {"name": "reindex", "arguments": {"pause_ms": pause_ms}}, id=request_id,
                          meta={"progressToken": token})


def wait_for_progress(wire, token, timeout=5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not any(
            n.get("params", {}).get("progressToken") == token for n in wire.notifications):
        time.sleep(0.01)


def cancelling(cancel_params=None, *, as_request=False, pause_ms=200):
    """cancel_slow_call, optionally with a wrong cancel (its params, or sent as a request) or a short pause."""
    def cancel_slow_call(wire):
        wire.write(slow_frame(pause_ms=pause_ms))
        wait_for_progress(wire, "slow-progress")
        params = cancel_params if cancel_params is not None else {"requestId": "slow-call"}
        if as_request:
            wire.request("notifications/cancelled", params)
        else:
            wire.send(frames.notification("notifications/cancelled", params))
        try:
            late = wire.wait("slow-call", timeout=1)
        except WireTimeout:
            late = None
        return late, wire.request("server/discover")
    return cancel_slow_call


def test_cancel_right(verdict):
    assert verdict(checks.check_cancel, cancelling()).startswith("✓ The server stopped your reindex")


def test_cancel_stub(verdict):
    assert verdict(checks.check_cancel, stub).startswith("not done yet")


def test_cancel_naming_the_progress_token(verdict):
    out = verdict(checks.check_cancel, cancelling({"requestId": "slow-progress"}))
    assert "it names 'slow-progress', the progressToken of the call, not its id 'slow-call'" in out


def test_cancel_sent_as_a_request(verdict):
    out = verdict(checks.check_cancel, cancelling(as_request=True))
    assert "Your cancel has an id, which makes it a request" in out and "error -32601" in out


def test_cancel_with_a_short_pause(verdict):
    assert "pause_ms 20: it may finish before your cancel arrives" in verdict(checks.check_cancel, cancelling(pause_ms=20))


def test_never_cancelling(verdict):
    def only_waits(wire):
        wire.write(slow_frame())
        try:
            late = wire.wait("slow-call", timeout=1)
        except WireTimeout:
            late = None
        return late, wire.request("server/discover")
    assert "never sent notifications/cancelled" in verdict(checks.check_cancel, only_waits)


def test_fractions_that_assume_a_total(verdict, lab, http):
    """The task asks for None where a notification has no total; the lab always sends one, so the check removes it."""
    def assumes_total(messages, token):
        return [m["params"]["progress"] / m["params"]["total"] for m in messages
                if m.get("method") == "notifications/progress" and m["params"].get("progressToken") == token]
    out = verdict(checks.check_progress_fractions, assumes_total, lab, http)
    assert out.startswith("✗") and "total left out" in out and "raised KeyError" in out, out


def test_fractions_that_guess_a_total(verdict, lab, http):
    def guesses(messages, token):
        return [m["params"]["progress"] / m["params"].get("total", 13) for m in messages
                if m.get("method") == "notifications/progress" and m["params"].get("progressToken") == token]
    out = verdict(checks.check_progress_fractions, guesses, lab, http)
    assert out.startswith("✗") and "without a total you returned" in out and "not a guess" in out, out


def test_fractions_that_compare_tokens_as_text(verdict, lab, http):
    """7 and "7" are different tokens; the stdio batch has both, so text on both sides keeps the other call's progress."""
    def as_text(messages, token):
        return [m["params"]["progress"] / m["params"]["total"] if "total" in m["params"] else None for m in messages
                if m.get("method") == "notifications/progress" and str(m["params"].get("progressToken")) == str(token)]
    out = verdict(checks.check_progress_fractions, as_text, lab, http)
    assert out.startswith("✗") and "token 7 (an integer)" in out and "different tokens" in out, out


def test_fractions_as_exact_fractions(verdict, lab, http):
    def exact(messages, token):
        return [Fraction(m["params"]["progress"], m["params"]["total"]) if "total" in m["params"] else None
                for m in messages
                if m.get("method") == "notifications/progress" and m["params"].get("progressToken") == token]
    assert verdict(checks.check_progress_fractions, exact, lab, http).startswith("✓ progress_fractions followed")


def cancel_variant(variant):
    """cancel_slow_call as a learner might write it, right or wrong in one way named by `variant`."""
    def cancel_slow_call(wire):
        pause = 300.0 if variant == "float-pause" else 300
        request_id = 1 if variant == "id-named-as-text" else "slow-call"
        frame = slow_frame(request_id=request_id, pause_ms=pause)
        if variant == "blocking-request":
            wire.send(frame, timeout=10)
        else:
            wire.write(frame)
        following = wire.request("server/discover") if variant == "discover-first" else None
        if variant == "sleeps-past-the-call":
            time.sleep(pause * 13 / 1000 + 0.5)  # all 13 notes indexed: nothing is left to cancel
        elif variant != "no-wait-for-progress":
            wait_for_progress(wire, "slow-progress")
        named = "1" if variant == "id-named-as-text" else request_id
        if variant == "notify-then-read":
            wire.notify("notifications/cancelled", {"requestId": named})
            return wire.read(timeout=1), wire.request("tools/list")  # read() waits the whole second when nothing comes
        wire.send(frames.notification("notifications/cancelled", {"requestId": named}))
        if variant == "no-wait-for-late-reply":
            return None, wire.request("server/discover")
        try:
            late = wire.wait("slow-progress" if variant == "waits-on-token" else request_id, timeout=1)
        except WireTimeout as timeout:
            late = timeout if variant == "timeout-as-late" else None
        following = following or wire.request("server/discover")
        if variant == "reversed":
            return following, late
        return [late, following] if variant == "list" else (late, following)
    return cancel_slow_call


@pytest.mark.parametrize("variant", ["float-pause", "list", "notify-then-read"])
def test_cancel_right_written_differently(verdict, variant):
    assert verdict(checks.check_cancel, cancel_variant(variant)).startswith("✓ The server stopped your reindex")


@pytest.mark.parametrize("variant, phrase", [
    ("discover-first", "went out before your cancel"),
    ("no-wait-for-progress", "before any progress"),
    ("no-wait-for-late-reply", "after your cancel"),
    ("reversed", "is the reply to your request"),
    ("timeout-as-late", "a WireTimeout"),
    ("id-named-as-text", 'it names "1", but the call\'s id is 1'),
    ("blocking-request", "wire.request (or wire.send) waits for the reply"),
    ("waits-on-token", "not its progressToken"),
    ("sleeps-past-the-call", "after the call had finished"),
])
def test_cancel_wrong_names_its_mistake(verdict, variant, phrase):
    out = verdict(checks.check_cancel, cancel_variant(variant))
    assert out.startswith("✗") and phrase in out, out


def fails_naming(out, phrases):
    return out.startswith("✗") and all(phrase in out for phrase in phrases)


# --- 10 task 1 · progress fractions ----------------------------------------------------------------------------

def progress_fractions(*, token_check=True, method_check=True, scale=1, divide=True, use_get=True):
    def work(messages, token):
        fractions = []
        for message in messages:
            params = (message.get("params") or {}) if use_get else message["params"]
            if method_check and message.get("method") != "notifications/progress":
                continue
            if token_check and params.get("progressToken") != token:
                continue
            if "progress" not in params:
                continue
            if divide and "total" not in params:  # the spec lets a server leave total out: no fraction then
                fractions.append(None)
                continue
            fractions.append(scale * (params["progress"] / params["total"] if divide else params["progress"]))
        return fractions
    return work


FRACTIONS_RIGHT = [
    pytest.param(progress_fractions(), id="solution"),
    pytest.param(lambda messages, token: [m["params"]["progress"] / m["params"]["total"] if "total" in m["params"] else None
                                          for m in messages if m.get("method") == "notifications/progress"
                                          and m["params"]["progressToken"] == token], id="comprehension"),
]
FRACTIONS_WRONG = [
    pytest.param(progress_fractions(token_check=False), ("fractions; the token 'a' has", "progressToken equals token"),
                 id="every-token"),
    pytest.param(progress_fractions(divide=False), ("params.progress itself",), id="progress-not-divided"),
    pytest.param(progress_fractions(scale=100), ("a percentage",), id="percentages"),
    pytest.param(progress_fractions(use_get=False), ("raised KeyError",), id="reads-params-of-a-response"),
    pytest.param(lambda messages, token: [m["params"]["progress"] / m["params"]["total"] for m in messages
                                          if str((m.get("params") or {}).get("progressToken")) == token],
                 ("token 7",), id="token-compared-as-text"),
    pytest.param(lambda messages, token: None, ("returned None",), id="returns-nothing"),
]


@pytest.mark.parametrize("work", FRACTIONS_RIGHT)
def test_progress_fractions_right_answers_pass(verdict, lab, http, work):
    assert verdict(checks.check_progress_fractions, work, lab, http).startswith("✓ progress_fractions followed")


@pytest.mark.parametrize("work, phrases", FRACTIONS_WRONG)
def test_progress_fractions_wrong_answers_name_their_mistake(verdict, lab, http, work, phrases):
    out = verdict(checks.check_progress_fractions, work, lab, http)
    assert fails_naming(out, phrases), out


# --- 10 task 2 · cancel a slow call --------------------------------------------------------------------------------

def cancel_slow_call(*, pause=300, token=True, wait_running=True, name="id", cancel_as="notification",
                     wait_timeout=1, next_request=True, call_id="slow-call"):
    def work(wire):
        meta = {"progressToken": "slow-progress"} if token else None
        slow = frames.request("tools/call", {"name": "reindex", "arguments": {"pause_ms": pause}}, id=call_id,
                              meta=meta)
        wire.write(slow)
        if wait_running:
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and not any(
                    n.get("method") == "notifications/progress" for n in wire.notifications):
                time.sleep(0.01)
        named = {"id": call_id, "token": "slow-progress", "text": str(call_id)}[name]
        if cancel_as == "notification":
            wire.send(frames.notification("notifications/cancelled", {"requestId": named}))
        else:
            wire.write(frames.request("notifications/cancelled", {"requestId": named}, id="cancel"))
        try:
            late = wire.wait(call_id, timeout=wait_timeout)
        except WireTimeout:
            late = None
        return late, (wire.request("server/discover") if next_request else None)
    return work


CANCEL_WRONG = [
    pytest.param(cancel_slow_call(name="token"), ("does not name the call", "progressToken of the call"),
                 id="names-the-token"),
    pytest.param(cancel_slow_call(cancel_as="request"), ("has an id, which makes it a request",), id="cancel-as-request"),
    pytest.param(cancel_slow_call(pause=10), ("pause_ms 10",), id="too-fast-to-catch"),
    pytest.param(cancel_slow_call(token=False, wait_running=False), ("no progressToken",), id="no-token"),
    pytest.param(cancel_slow_call(wait_timeout=60), ("still running after",), id="waits-for-ever"),
    pytest.param(cancel_slow_call(next_request=False), ("not the reply to a request sent after the cancel",),
                 id="no-next-request"),
    # Ids of both JSON types: a call with the number id 7 is not named by the string "7".
    pytest.param(cancel_slow_call(call_id=7, name="text"), ("does not name the call", "it names \"7\"",
                                                            "the call's id is 7"), id="number-id-named-as-text"),
]


@pytest.mark.parametrize("work", [cancel_slow_call(), cancel_slow_call(call_id=7)], ids=["string-id", "number-id"])
def test_cancel_right_answer_passes(verdict, work):
    assert verdict(checks.check_cancel, work).startswith("✓ The server stopped your reindex")


@pytest.mark.parametrize("work, phrases", CANCEL_WRONG)
def test_cancel_wrong_answers_name_their_mistake(verdict, work, phrases):
    out = verdict(checks.check_cancel, work)
    assert fails_naming(out, phrases), out
