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
    assert out.startswith("✓ A batch gets one -32600 with id null (HTTP 400)") and 'ids 1, "1", 2' in out


@pytest.mark.parametrize("prediction, split_batch", [
    ([400, -32600, None], lambda body: json.loads(body)),  # a list, and dicts for bodies
    (RIGHT, lambda body: [json.dumps(request, indent=2) for request in json.loads(body)]),
    (RIGHT, lambda body: [json.dumps(request).encode() for request in json.loads(body)]),
    (RIGHT, lambda body: [json.dumps(request, ensure_ascii=False).encode("utf-8") for request in json.loads(body)]),
    ((400, -32600, None), lambda body: [json.dumps(item, separators=(",", ":"), sort_keys=True)
                                        for item in json.JSONDecoder().decode(body)]),
    (RIGHT, lambda body: (json.dumps(request) for request in json.loads(body))),
], ids=["list-and-dicts", "pretty-printed-bodies", "utf-8-bytes", "non-ascii-as-utf-8", "sorted-compact-bodies",
        "a-generator-of-bodies"])
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


def _each(change):
    return lambda body: [json.dumps(change(request)) for request in json.loads(body)]


# Each changed request is still answered (a tool's isError result, a notification's 202), so only comparing the
# bodies with the batch's own requests catches it.
@pytest.mark.parametrize("split_batch, phrase", [
    (_each(lambda r: {**r, "method": "server/discover", "params": {"_meta": r["params"]["_meta"]}}),
     "Body 2 is not request 2 of the batch as it was: its method is 'server/discover'"),
    (_each(lambda r: {**r, "params": {k: v for k, v in r["params"].items() if k != "arguments"}}),
     "Body 3 is not request 3 of the batch as it was: its params is"),
    (_each(lambda r: {k: v for k, v in r.items() if k != "id"}), "Body 1 is not request 1 of the batch as it was: "
                                                                  "its id is missing"),
    (lambda body: [json.dumps(r) for r in reversed(json.loads(body))], "Body 1 is not request 1 of the batch as it "
                                                                        "was: its id is 2,"),
    (lambda body: [json.dumps([r]) for r in json.loads(body)], "Body 1 is not request 1 of the batch as it was: "
                                                               "it is [{"),
    # Ids of both JSON types: the batch's second id is the string "1".
    (_each(lambda r: {**r, "id": str(r["id"])}), "Body 1 is not request 1 of the batch as it was: its id is '1'"),
    (lambda body: [json.dumps({**r, "id": number}) for number, r in enumerate(json.loads(body), start=1)],
     "Body 2 is not request 2 of the batch as it was: its id is 2"),
], ids=["every-body-a-discover", "arguments-dropped", "ids-dropped", "order-reversed", "each-in-its-own-array",
        "ids-turned-into-text", "ids-renumbered"])
def test_a_body_that_is_not_its_request_is_explained(verdict, http, split_batch, phrase):
    out = verdict(checks.check_batch, RIGHT, split_batch, http)
    assert out.startswith(f"✗ {phrase}") and "send it as it is" in out, out


@pytest.mark.parametrize("prediction", [(400.0, -32600, None), ("400", -32600, None), (400, True, None)],
                         ids=["float-status", "status-as-text", "bool-code"])
def test_a_prediction_that_is_not_whole_numbers_is_explained(verdict, http, prediction):
    out = verdict(checks.check_batch, prediction, split, http)
    assert out.startswith("✗ batch_prediction holds status") and "both are whole numbers" in out, out


@pytest.mark.parametrize("prediction", [{"status": 400, "code": -32600, "id": None}, 400],
                         ids=["prediction-as-a-dict", "status-alone"])
def test_a_prediction_in_another_shape_is_explained(verdict, http, prediction):
    out = verdict(checks.check_batch, prediction, split, http)
    assert out.startswith("✗ batch_prediction is") and "(status, code, id)" in out, out


def test_bodies_in_a_code_page_other_than_utf_8_are_explained(verdict, http):
    out = verdict(checks.check_batch, RIGHT,
                  lambda body: [json.dumps(r, ensure_ascii=False).encode("latin-1") for r in json.loads(body)], http)
    assert out.startswith("✗ Body 3 is") and "must be JSON text (a str, or UTF-8 bytes)" in out and "latin-1" in out, out


@pytest.mark.parametrize("split_batch", [
    lambda body: list({str(request["id"]): json.dumps(request) for request in json.loads(body)}.values()),
    lambda body: [json.dumps(r) for n, r in enumerate(json.loads(body))
                  if str(r["id"]) not in {str(s["id"]) for s in json.loads(body)[:n]}],
], ids=["deduped-by-str-id", "first-of-each-id-text-kept"])
def test_requests_whose_ids_share_their_text_are_two_requests(verdict, http, split_batch):
    # A blind learner run: deduping by str(id) passed while the batch's ids all had different text.
    out = verdict(checks.check_batch, RIGHT, split_batch, http)
    assert out.startswith("✗ split_batch returned 2 bodies for the 3 requests") and "keep their type" in out, out


def test_bodies_cut_out_of_the_text_are_told_to_parse_it(verdict, http):
    # Found by the learner run of round 3: cut text was told that str() writes Python.
    def cut_at_braces(body):
        return [part if part.startswith("{") else "{" + part for part in body[1:-1].split("},{")]
    out = verdict(checks.check_batch, RIGHT, cut_at_braces, http)
    assert out.startswith("✗ Body 1 was refused") and "error -32700" in out and "cuts the objects" in out, out
