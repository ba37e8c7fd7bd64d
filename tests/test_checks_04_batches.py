"""Exercise 04, the batch: a right answer passes, typical wrong answers fail with the right explanation."""

import json

import pytest

import checks

RIGHT = (400, -32600, None)


def split(body):
    return [json.dumps(request) for request in json.loads(body)]


def stub(*args):
    raise NotImplementedError("your code here")


def test_the_solution_passes(verdict, http):
    out = verdict(checks.check_batch, RIGHT, split, http)
    assert out.startswith("✓ A batch gets one -32600 with id null (HTTP 400)") and "ids 1, 2, 3" in out


@pytest.mark.parametrize("prediction, split_batch", [
    ([400, -32600, None], lambda body: json.loads(body)),  # a list, and dicts for bodies
    (RIGHT, lambda body: [json.dumps(request, indent=2) for request in json.loads(body)]),
], ids=["list-and-dicts", "pretty-printed-bodies"])
def test_a_right_answer_written_differently_passes(verdict, http, prediction, split_batch):
    assert verdict(checks.check_batch, prediction, split_batch, http).startswith("✓")


def test_predicting_an_array_of_responses_is_explained(verdict, http):
    out = verdict(checks.check_batch, (200, None, None), split, http)
    assert out.startswith("✗ You predicted status 200, as if the server answered the batch with an array")
    assert "error -32600" in out and "Hint: Does 2026-07-28 have a batch form?" in out


def test_predicting_the_first_requests_id_is_explained(verdict, http):
    out = verdict(checks.check_batch, (400, -32600, 1), split, http)
    assert out.startswith("✗ Status and code are right, but you predicted the error carries id 1.")
    assert "Which id could the server read from an array?" in out


def test_sending_the_batch_again_is_explained(verdict, http):
    out = verdict(checks.check_batch, RIGHT, lambda body: [body], http)
    assert out.startswith("✗ split_batch returned the batch itself as one body") and "-32600" in out


def test_python_text_instead_of_json_is_explained(verdict, http):
    out = verdict(checks.check_batch, RIGHT, lambda body: [str(request) for request in json.loads(body)], http)
    assert out.startswith("✗ Body 1 was refused") and "error -32700" in out and "json.dumps" in out


def test_the_stub_is_not_done(verdict, http):
    assert verdict(checks.check_batch, (..., ..., ...), stub, http).startswith("not done yet: replace each ...")
    assert verdict(checks.check_batch, RIGHT, stub, http).startswith("not done yet: split_batch")
