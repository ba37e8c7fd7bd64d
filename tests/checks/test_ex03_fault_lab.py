"""Exercise 03, task 2 (the fault lab): right predictions pass, each miss is explained."""

import pytest

import checks


def fails_naming(out, phrases):
    return out.startswith("✗") and all(phrase in out for phrase in phrases)


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

# --- single answers, the exact words a learner reads -------------------------------------------------


def test_fault_lab_right(verdict, http):
    out = verdict(checks.check_fault_lab, dict(RIGHT), http)
    assert "✓ 8 of 8 predictions right." in out and "✗" not in out


def test_fault_lab_two_misses_are_explained(verdict, http):
    wrong = {**RIGHT, "get-instead-of-post": (400, -32600), "foreign-origin": (400, None)}
    out = verdict(checks.check_fault_lab, wrong, http)
    assert "✗ 6 of 8 predictions right." in out
    assert "get-instead-of-post: you predicted 400 -32600; the server answered 405 with an empty body with Allow: POST" in out
    assert "the plain text 'Invalid Origin header'" in out


def test_fault_lab_predictions_that_are_not_pairs(verdict, http):
    out = verdict(checks.check_fault_lab, {**RIGHT, "not-json": "400"}, http)
    assert "not (status, code) pairs: not-json = '400'" in out


def test_fault_lab_unknown_fault(verdict, http):
    out = verdict(checks.check_fault_lab, {**RIGHT, "no-accept": (406, None)}, http)
    assert "There is no fault called 'no-accept'" in out


def test_the_faults_show_as_wire_text(capsys):
    checks.show_faults()
    out = capsys.readouterr().out
    assert out.count("POST /mcp HTTP/1.1") == 7 and "GET /mcp HTTP/1.1" in out and "Host:" not in out


# --- unfinished work ---------------------------------------------------------------------------------

@pytest.mark.parametrize("work", [{name: (None, None) for name in checks.FAULT_NAMES}, None],
                         ids=["every-prediction-left-none", "no-predictions"])
def test_an_unfinished_task_is_not_done_yet(verdict, http, work):
    assert verdict(checks.check_fault_lab, work, http).startswith("not done yet: ")
