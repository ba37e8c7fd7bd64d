"""Exercise 16: one copy of a tool result for the model, and where the envelope stops paying.

Each right answer passes whichever way it is written; each typical wrong one gets ✗ naming its mistake.
"""

import decimal
import itertools
import json
import math
import time

import numpy as np

import pytest

import checks
import mcpwire
from checks.ex16_costs import KNOWN_SESSIONS, expected_crossing


def stub(*args):
    raise NotImplementedError("your code here")


def fails_naming(out, phrases):
    return out.startswith("✗") and all(phrase in out for phrase in phrases)


# --- task 1 · one copy for the model ---------------------------------------------------------------

def solution_copy(result):
    structured = result.get("structuredContent")
    if structured is not None:
        return json.dumps(structured, separators=(",", ":"), ensure_ascii=False)
    return "\n".join(block["text"] for block in result.get("content", []) if block.get("type") == "text")


def sorted_and_for_the_assistant_only(result):
    """Right, written differently: keys sorted, and only the blocks whose audience includes the assistant."""
    if "structuredContent" in result:
        return json.dumps(result["structuredContent"], separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    return " ".join(block["text"] for block in result["content"] if block["type"] == "text"
                    and "assistant" in block.get("annotations", {}).get("audience", ["assistant"]))


def with_an_encoder(result):
    """Right, written differently: one JSONEncoder, and an explicit test for the key."""
    encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
    if "structuredContent" in result:
        return encoder.encode(result["structuredContent"])
    return "\n".join(block["text"] for block in result["content"] if "text" in block)


def ascii_escapes(result):
    """Compact, but json.dumps's default ensure_ascii writes Tomás as Tom\\u00e1s."""
    structured = result.get("structuredContent")
    return json.dumps(structured, separators=(",", ":")) if structured is not None else solution_copy(result)


def ascii_escapes_and_spaces(result):
    structured = result.get("structuredContent")
    return json.dumps(structured, separators=(",", ": ")) if structured is not None else solution_copy(result)


def with_mcpwire(result):
    """Right, written differently: the kit's own compact writer (tested with `is not None`: an empty {} counts)."""
    return mcpwire.dumps(result["structuredContent"]) if result.get("structuredContent") is not None else \
        "\n\n".join(block.get("text", "") for block in result["content"])


def the_text_block(result):
    return result["content"][0]["text"]


def default_dumps(result):
    structured = result.get("structuredContent")
    return json.dumps(structured) if structured is not None else solution_copy(result)


def both_halves(result):
    structured = result.get("structuredContent")
    if structured is None:
        return solution_copy(result)
    return result["content"][0]["text"] + "\n" + mcpwire.dumps(structured)


def whole_result(result):
    return mcpwire.dumps(result)


def always_structured(result):
    return mcpwire.dumps(result["structuredContent"])


def returns_the_dict(result):
    return result.get("structuredContent") or result["content"]


def nothing_without_structure(result):
    structured = result.get("structuredContent")
    return mcpwire.dumps(structured) if structured is not None else ""


def the_first_hit_only(result):
    structured = result.get("structuredContent")
    if structured is None:
        return solution_copy(result)
    return mcpwire.dumps(next(iter(structured.values())))


def whole_result_without_structure(result):
    structured = result.get("structuredContent")
    return mcpwire.dumps(structured) if structured is not None else json.dumps(result)


def str_of_the_result_without_structure(result):
    structured = result.get("structuredContent")
    return mcpwire.dumps(structured) if structured is not None else str(result)


def the_blocks_as_json_without_structure(result):
    structured = result.get("structuredContent")
    return mcpwire.dumps(structured) if structured is not None else json.dumps(result["content"])


def every_block_s_text_or_data(result):
    structured = result.get("structuredContent")
    if structured is not None:
        return mcpwire.dumps(structured)
    return "\n".join(block.get("text", block.get("data", "")) for block in result["content"])


def the_first_text_block_without_structure(result):
    structured = result.get("structuredContent")
    return mcpwire.dumps(structured) if structured is not None else result["content"][0]["text"]


def python_repr(result):
    structured = result.get("structuredContent")
    return str(structured) if structured is not None else solution_copy(result)


def a_newline_after_the_json(result):
    """Compact JSON, and a newline after it (found by a blind learner): the same tokens, but not compact JSON alone."""
    structured = result.get("structuredContent")
    return solution_copy(result) + "\n" if structured is not None else solution_copy(result)


def stripped_blocks(result):
    """Each block's text stripped (found by a blind learner): it changes the texts the model is given."""
    structured = result.get("structuredContent")
    if structured is not None:
        return solution_copy(result)
    return "\n".join(block["text"].strip() for block in result["content"] if block["type"] == "text")


def ascii_folded(result):
    """The non-ASCII characters decomposed and dropped "to save tokens" (found by a blind learner)."""
    import unicodedata
    return unicodedata.normalize("NFKD", solution_copy(result)).encode("ascii", "ignore").decode()


def a_newline_after_each_block(result):
    """Right, written differently: each text block's text followed by a newline (the task leaves the joint open)."""
    structured = result.get("structuredContent")
    if structured is not None:
        return solution_copy(result)
    return "".join(block["text"] + "\n" for block in result["content"] if block["type"] == "text")


COPY_RIGHT = [solution_copy, sorted_and_for_the_assistant_only, with_mcpwire, with_an_encoder, a_newline_after_each_block]
COPY_WRONG = [
    pytest.param(the_text_block, ("For search_notes", "in 310 tokens", "compactly it takes 229"), id="indented-text-block"),
    pytest.param(default_dumps, ("For search_notes", "in 267 tokens", "spaces after , and :"), id="json-dumps-defaults"),
    pytest.param(both_halves, ("the indented text block and more", "the model needs one of them"), id="both-halves"),
    pytest.param(whole_result, ("the whole result", "carries the data twice"), id="the-whole-result"),
    pytest.param(always_structured, ("raised KeyError", "on the result of night_report", "read it with .get()"),
                 id="keyerror-without-structured-content"),
    pytest.param(returns_the_dict, ("returned dict", "return a string"), id="returns-a-dict"),
    pytest.param(nothing_without_structure, ("For night_report", "leaves out the text block", "Pilot night P07"),
                 id="drops-the-text-blocks"),
    pytest.param(the_first_hit_only, ("not the tool's structured data",), id="part-of-the-data"),
    pytest.param(whole_result_without_structure, ("For night_report", "base64 data, which is for the user"),
                 id="the-whole-result-without-structured-content"),
    pytest.param(str_of_the_result_without_structure, ("For night_report", "base64 data, which is for the user"),
                 id="str-of-the-result-without-structured-content"),
    pytest.param(the_blocks_as_json_without_structure, ("For night_report", "base64 data"), id="the-blocks-as-json"),
    pytest.param(every_block_s_text_or_data, ("For night_report", "base64 data"), id="every-block-s-text-or-data"),
    pytest.param(the_first_text_block_without_structure, ("night_report with its text in two blocks",
                                                         "leaves out the text block", "The hypnogram is for the user"),
                 id="only-the-first-text-block"),
    pytest.param(python_repr, ("as Python writes it, not as JSON", "json module"), id="python-repr"),
    # Non-ASCII text (search_notes has an en dash): the escapes cost tokens, which is what the task measures.
    pytest.param(ascii_escapes, ("For search_notes, your text holds the structured data, but in 231 tokens",
                                 "it takes 229", "writes 'oscillation\\u2013spindle' where the note has "
                                 "'oscillation–spindle'", "ensure_ascii=False"), id="ensure-ascii-left-on"),
    pytest.param(ascii_escapes_and_spaces, ("For search_notes", "written compactly it takes 229",
                                            "spaces after , and :", "ensure_ascii=False"), id="ascii-and-spaces"),
    pytest.param(a_newline_after_the_json, ("For search_notes, your text is the compact JSON with whitespace around "
                                            "it: it ends", "\\n'", "no whitespace outside its strings"),
                 id="a-newline-after-the-json"),
    pytest.param(stripped_blocks, ("night_report with its text in two blocks, the second ending with a newline",
                                   "changes the text block 'The hypnogram is for the user", "whitespace at its ends",
                                   "as it is"), id="stripped-text-blocks"),
    pytest.param(ascii_folded, ("For search_notes", "non-ASCII text changed", "'oscillation–spindle'",
                                "ensure_ascii=False"), id="non-ascii-dropped"),
]


@pytest.mark.parametrize("for_model", COPY_RIGHT, ids=lambda f: f.__name__)
def test_model_copy_right_answers_pass(verdict, lab, for_model):
    out = verdict(checks.check_model_copy, for_model, lab)
    assert out.startswith("✓ Your host gives the model 229 tokens for the result of search_notes, where passing both "
                          "halves would cost 539"), out
    assert "Tokens counted with cl100k_base." in out


@pytest.mark.parametrize("for_model, phrases", COPY_WRONG)
def test_model_copy_wrong_answers_name_their_mistake(verdict, lab, for_model, phrases):
    out = verdict(checks.check_model_copy, for_model, lab)
    assert fails_naming(out, phrases), out


def texts_of(result):
    return [block["text"] for block in result.get("content", []) if block.get("type") == "text"]


def texts_written_as(write):
    """The solution's copy, with the text blocks' texts given to the model as write(list of texts)."""
    def for_model(result):
        structured = result.get("structuredContent")
        return solution_copy(result) if structured is not None else write(texts_of(result))
    return for_model


def one_field_of_the_structured_content(result):
    # Picks a field the results do not have, inside structuredContent that is there.
    structured = result.get("structuredContent")
    return solution_copy(result) if structured is None else json.dumps(structured["x"])


def texts_joined_by_spaces(result):
    """Right, written differently: the texts joined by a space, the structured data through json.JSONEncoder."""
    structured = result.get("structuredContent")
    if structured is not None:
        return json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode(structured)
    return " ".join(texts_of(result))


@pytest.mark.parametrize("for_model, phrases", [
    pytest.param(texts_written_as(json.dumps), ("For night_report", "a list of its texts written as JSON",
                                                "join the texts"), id="texts-as-a-json-list"),
    pytest.param(texts_written_as(str), ("For night_report", "a list of its texts written as Python"),
                 id="texts-as-str-of-a-list"),
    pytest.param(one_field_of_the_structured_content, ("raised KeyError: 'x' on the result of search_notes.",
                                                       "Print that result"), id="keyerror-inside-structured-content"),
])
def test_model_copy_answers_the_learner_found(verdict, lab, for_model, phrases):
    out = verdict(checks.check_model_copy, for_model, lab)
    assert fails_naming(out, phrases) and ".get()" not in out, out


def test_model_copy_with_texts_joined_by_spaces_passes(verdict, lab):
    assert verdict(checks.check_model_copy, texts_joined_by_spaces, lab).startswith("✓ Your host gives the model")


def test_model_copy_starts_its_own_server_without_a_lab(verdict):
    assert verdict(checks.check_model_copy, solution_copy).startswith("✓ Your host gives the model")


# --- task 2 · where the envelope stops paying ------------------------------------------------------

def solution_crossing(modern, legacy, handshake):
    ours, theirs = 0, handshake
    for number, (mine, bare) in enumerate(zip(modern, legacy), start=1):
        ours, theirs = ours + mine, theirs + bare
        if ours > theirs:
            return number
    return None


def accumulated_gap(modern, legacy, handshake):
    """Right, written differently: the running gap, which has to climb past the handshake."""
    gaps = itertools.accumulate(m - b for m, b in zip(modern, legacy))
    return next((n for n, gap in enumerate(gaps, start=1) if gap > handshake), None)


def no_handshake(modern, legacy, handshake):
    return solution_crossing(modern, legacy, 0)


def counted_from_zero(modern, legacy, handshake):
    found = solution_crossing(modern, legacy, handshake)
    return None if found is None else found - 1


def a_tie_counts(modern, legacy, handshake):
    ours, theirs = 0, handshake
    for number, (mine, bare) in enumerate(zip(modern, legacy), start=1):
        ours, theirs = ours + mine, theirs + bare
        if ours >= theirs:
            return number
    return None


def request_by_request(modern, legacy, handshake):
    return next((n for n, (mine, bare) in enumerate(zip(modern, legacy), start=1) if mine > bare), None)


def zero_for_never(modern, legacy, handshake):
    return solution_crossing(modern, legacy, handshake) or 0


def skips_the_first_request(modern, legacy, handshake):
    ours, theirs = modern[0], handshake + legacy[0]
    for number, (mine, bare) in enumerate(zip(modern[1:], legacy[1:]), start=2):
        ours, theirs = ours + mine, theirs + bare
        if ours > theirs:
            return number
    return None


def stops_before_the_last_request(modern, legacy, handshake):
    return next((n for n in range(1, len(modern)) if sum(modern[:n]) > handshake + sum(legacy[:n])), None)


def never_returns(modern, legacy, handshake):
    while True:
        time.sleep(0.05)


def as_numpy(modern, legacy, handshake):
    """Right, written differently: numpy's running totals, and numpy's integer back."""
    over = np.cumsum(modern) > handshake + np.cumsum(legacy)
    return np.argmax(over) + 1 if over.any() else None


def as_a_float(modern, legacy, handshake):
    """Right, written differently: a count that is a float."""
    found = solution_crossing(modern, legacy, handshake)
    return None if found is None else float(found)


def as_a_decimal(modern, legacy, handshake):
    """Right, written differently: a count that is a Decimal."""
    found = solution_crossing(modern, legacy, handshake)
    return None if found is None else decimal.Decimal(found)


def as_text(modern, legacy, handshake):
    found = solution_crossing(modern, legacy, handshake)
    return None if found is None else str(found)


def false_for_never(modern, legacy, handshake):
    return solution_crossing(modern, legacy, handshake) or False


def the_last_crossing(modern, legacy, handshake):
    """The request from which the modern total stays ahead to the end (found by a blind learner)."""
    ours, theirs, found = 0, handshake, None
    for number, (mine, bare) in enumerate(zip(modern, legacy), start=1):
        ours, theirs = ours + mine, theirs + bare
        if ours <= theirs:
            found = None
        elif found is None:
            found = number
    return found


def a_binary_search(modern, legacy, handshake):
    """A binary search over the running gap, as if it only grew (found by a blind learner)."""
    gaps = list(itertools.accumulate(m - b for m, b in zip(modern, legacy)))
    low, high = 0, len(gaps)
    while low < high:
        middle = (low + high) // 2
        if gaps[middle] > handshake:
            high = middle
        else:
            low = middle + 1
    return low + 1 if low < len(gaps) else None


def ahead_at_the_end_only(modern, legacy, handshake):
    """None unless the modern session costs more at the end (found by a blind learner)."""
    return solution_crossing(modern, legacy, handshake) if sum(modern) > handshake + sum(legacy) else None


def twenty_requests_at_most(modern, legacy, handshake):
    """The 20 requests the task measures, hard-coded (found by a blind learner)."""
    return solution_crossing(modern[:20], legacy[:20], handshake)


def an_average_gap(modern, legacy, handshake):
    gap = (sum(modern) - sum(legacy)) / len(modern)
    return math.floor(handshake / gap) + 1 if gap > 0 and math.floor(handshake / gap) + 1 <= len(modern) else None


def the_gap_without_its_sign(modern, legacy, handshake):
    extra = 0
    for number, (mine, bare) in enumerate(zip(modern, legacy), start=1):
        extra += abs(mine - bare)
        if extra > handshake:
            return number
    return None


CROSSING_RIGHT = [solution_crossing, accumulated_gap, as_numpy, as_a_float, as_a_decimal]
CROSSING_WRONG = [
    pytest.param(no_handshake, ("returned 1", "modern session has cost 250 bytes and the legacy one 400",
                                "handshake counted in the legacy one"), id="forgets-the-handshake"),
    pytest.param(counted_from_zero, ("returned 2", "cost 500 bytes and the legacy one 550", "request 1"),
                 id="counts-from-zero"),
    pytest.param(a_tie_counts, ("returned 3", "both sessions have cost 750 bytes", "Equal is not more"),
                 id="a-tie-counts-as-more"),
    pytest.param(request_by_request, ("returned 1", "Compare running totals"), id="request-by-request"),
    pytest.param(zero_for_never, ("where every modern request is the cheaper one", "returned 0", "None says so"),
                 id="zero-for-never"),
    pytest.param(skips_the_first_request, ("handshake costs less than one envelope", "returned 2",
                                           "already after 1 request:"), id="skips-the-first-request"),
    pytest.param(stops_before_the_last_request, ("only at its last request", "returned None",
                                                 "After 6 requests the modern session has cost 1200 bytes"),
                 id="stops-before-the-last-request"),
    pytest.param(never_returns, ("did not return within 5 s",), id="a-loop-that-never-ends"),
    pytest.param(an_average_gap, ("first request is the dearest", "returned 6", "already after 1 request: 400 bytes against 350"),
                 id="an-average-gap"),
    # The right count as text: shown with its quotes, and blamed on its type rather than on the totals.
    pytest.param(as_text, ("returned '3', which is not a whole number", "an int"), id="the-count-as-text"),
    pytest.param(false_for_never, ("returned False", "None says so"), id="false-for-never"),
    pytest.param(the_gap_without_its_sign, ("a little cheaper", "returned 3", "the legacy one 410"),
                 id="the-gap-without-its-sign"),
    pytest.param(the_last_crossing, ("gets ahead, then falls behind again", "returned None",
                                     "After 2 requests the modern session has cost 500 bytes and the legacy one 450",
                                     "costs more again by the end"), id="the-last-crossing"),
    pytest.param(a_binary_search, ("gets ahead, then falls behind again", "returned None", "After 2 requests"),
                 id="a-binary-search"),
    pytest.param(ahead_at_the_end_only, ("gets ahead, then falls behind again", "returned None", "After 2 requests"),
                 id="ahead-at-the-end-only"),
    pytest.param(twenty_requests_at_most, ("a session of 30 requests", "returned None",
                                           "After 26 requests the modern session has cost 2860 bytes and the legacy "
                                           "one 2850, handshake included."), id="twenty-requests-at-most"),
]


def test_the_known_sessions_have_the_answers_the_check_gives():
    assert [expected_crossing(m, leg, h) for _, m, leg, h, _ in KNOWN_SESSIONS] == [s[-1] for s in KNOWN_SESSIONS]
    assert [solution_crossing(m, leg, h) for _, m, leg, h, _ in KNOWN_SESSIONS] == [3, 4, None, 1, 6, 1, None, 2, 26, 2, None, None]


@pytest.mark.parametrize("first_costlier", CROSSING_RIGHT, ids=lambda f: f.__name__)
def test_break_even_right_answers_pass(verdict, lab, first_costlier):
    out = verdict(checks.check_break_even, first_costlier, lab)
    # The lesson's stdio figures: four requests, cycled, cross at request 3 in bytes and in tokens.
    assert out.startswith("✓ Over stdio the modern session has cost more from request 3 in bytes and 3 in tokens "
                          "(cl100k_base)"), out


@pytest.mark.parametrize("first_costlier, phrases", CROSSING_WRONG)
def test_break_even_wrong_answers_name_their_mistake(verdict, first_costlier, phrases):
    # Every one of these fails on a known session, before the check measures anything on a server.
    out = verdict(checks.check_break_even, first_costlier)
    assert fails_naming(out, phrases), out


# --- stubs -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("check", [checks.check_model_copy, checks.check_break_even], ids=lambda c: c.__name__)
@pytest.mark.parametrize("work", [stub, None], ids=["raises-not-implemented", "not-defined"])
def test_an_unfinished_task_is_not_done_yet(verdict, lab, check, work):
    assert verdict(check, work, lab).startswith("not done yet"), check.__name__


# --- found by a second blind learner run: wrong answers that passed, right ones written differently ----------------

def truthy_structured_content(result):
    """Wrong: `if result.get("structuredContent"):` takes an empty {} for no structuredContent."""
    structured = result.get("structuredContent")
    return json.dumps(structured, separators=(",", ":"), ensure_ascii=False) if structured else solution_copy(
        {**result, "structuredContent": None})


def dict_only_structured_content(result):
    """Wrong: structuredContent used only when it is a dict, though it may be any JSON value."""
    structured = result.get("structuredContent")
    if isinstance(structured, dict):
        return json.dumps(structured, separators=(",", ":"), ensure_ascii=False)
    return "\n".join(texts_of(result))


def the_text_copy_compacted_only(result):
    """Wrong: the text copy parsed and written again, never structuredContent: breaks where the copy is left out."""
    if result.get("structuredContent") is not None:
        return mcpwire.dumps(json.loads(result["content"][0]["text"]))
    return "\n".join(texts_of(result))


@pytest.mark.parametrize("for_model, phrases", [
    pytest.param(the_text_copy_compacted_only, ("raised IndexError", "an empty object {}, with no text block",
                                                "the text copy is a SHOULD", "from structuredContent itself"),
                 id="the-text-copy-read-instead-of-structured-content"),
    pytest.param(truthy_structured_content, ("structuredContent is an empty object {}", "your text is ''",
                                             "'{}'", "is not None"), id="empty-structured-content-taken-for-none"),
    pytest.param(dict_only_structured_content, ("structuredContent is a list", "its indented text block",
                                                "is a list here", "not whether it is a dict"),
                 id="structured-content-used-only-when-a-dict"),
])
def test_model_copy_second_run_wrong_answers_fail(verdict, lab, for_model, phrases):
    out = verdict(checks.check_model_copy, for_model, lab)
    assert fails_naming(out, phrases), out


def for_the_assistant_joined_by_newlines(result):
    """Right, as lesson 06 routes blocks: a text block for the user only is left out (the task allows it)."""
    structured = result.get("structuredContent")
    if structured is not None:
        return json.dumps(structured, separators=(",", ":"), ensure_ascii=False)
    return "\n".join(block["text"] for block in result.get("content", []) if block.get("type") == "text"
                     and "assistant" in block.get("annotations", {}).get("audience", ["assistant"]))


def text_copy_compacted(result):
    """Right (a blind learner's): the text copy parsed and written again compactly; the texts joined by nothing."""
    if result.get("structuredContent") is not None:
        return mcpwire.dumps(json.loads(result["content"][0]["text"])) if result.get("content") else \
            mcpwire.dumps(result["structuredContent"])
    return "".join(texts_of(result))


@pytest.mark.parametrize("for_model", [solution_copy, for_the_assistant_joined_by_newlines, text_copy_compacted,
                                       sorted_and_for_the_assistant_only, with_an_encoder], ids=lambda f: f.__name__)
def test_model_copy_second_run_right_answers_pass(verdict, lab, for_model):
    out = verdict(checks.check_model_copy, for_model, lab)
    assert out.startswith("✓ Your host gives the model 229 tokens") and "an empty object and a list" in out, out


def the_last_upward_crossing(modern, legacy, handshake):
    """Wrong: the last request after which the modern total went (back) ahead, not the first."""
    answer, was_ahead, mine, theirs = None, False, 0, handshake
    for number, (m, leg) in enumerate(zip(modern, legacy), 1):
        mine, theirs = mine + m, theirs + leg
        if mine > theirs and not was_ahead:
            answer = number
        was_ahead = mine > theirs
    return answer


def extrapolated_past_the_end(modern, legacy, handshake):
    """Wrong: with no crossing inside the session, the last request's gap carried on past its end."""
    gap = -handshake
    for number, (m, leg) in enumerate(zip(modern, legacy), 1):
        gap += m - leg
        if gap > 0:
            return number
    step = modern[-1] - legacy[-1]
    return None if step <= 0 else len(modern) + math.floor(-gap / step) + 1


KNOWN_ANSWERS = {(h, m[0], leg[0], len(m)): answer for _, m, leg, h, answer in KNOWN_SESSIONS}


def a_table_of_the_known_sessions(modern, legacy, handshake):
    """Wrong (a cheat): every known session's answer looked up, nothing added up; the rest computed honestly
    except on sessions drawn at random, which it cannot know."""
    key = (handshake, modern[0], legacy[0], len(modern))
    return KNOWN_ANSWERS.get(key)


@pytest.mark.parametrize("first_costlier, phrases", [
    pytest.param(the_last_upward_crossing, ("falls behind, then gets ahead again", "returned 4",
                                            "has cost more already after 2 requests"), id="the-last-upward-crossing"),
    pytest.param(extrapolated_past_the_end, ("ends before the modern total gets ahead", "returned 26",
                                             "never costs more within the session", "after the last one"),
                 id="extrapolated-past-the-end"),
    pytest.param(a_table_of_the_known_sessions, ("drawn at random for this run", "returned None"),
                 id="a-table-of-the-known-sessions"),
])
def test_break_even_second_run_wrong_answers_fail(verdict, first_costlier, phrases):
    out = verdict(checks.check_break_even, first_costlier)
    assert fails_naming(out, phrases), out


def running_sums_in_place(modern, legacy, handshake):
    """Right (a blind learner's): the caller's lists turned into running sums in place."""
    for i in range(1, len(modern)):
        modern[i] += modern[i - 1]
        legacy[i] += legacy[i - 1]
    return next((i + 1 for i, (m, leg) in enumerate(zip(modern, legacy)) if m > leg + handshake), None)


def sums_of_slices(modern, legacy, handshake):
    """Right (a blind learner's): the totals summed again from slices after each request."""
    return next((n for n in range(1, len(modern) + 1) if sum(modern[:n]) > sum(legacy[:n]) + handshake), None)


def numpy_int64(modern, legacy, handshake):
    """Right (a blind learner's): numpy's argmax, returned as numpy.int64 without int()."""
    ahead = np.cumsum(modern) > np.cumsum(legacy) + handshake
    return np.argmax(ahead) + 1 if ahead.any() else None


@pytest.mark.parametrize("first_costlier", [running_sums_in_place, sums_of_slices, numpy_int64],
                         ids=lambda f: f.__name__)
def test_break_even_second_run_right_answers_pass(verdict, lab, first_costlier):
    assert verdict(checks.check_break_even, first_costlier, lab).startswith("✓ Over stdio"), first_costlier


def test_the_random_sessions_each_cross_inside_and_differ_between_runs():
    from checks.ex16_costs import random_sessions
    drawn = [random_sessions() for _ in range(20)]
    for sessions in drawn:
        for _, modern, legacy, handshake, answer in sessions:
            assert answer == solution_crossing(modern, legacy, handshake) and 1 < answer <= len(modern)
    assert len({json.dumps(sessions) for sessions in drawn}) == len(drawn)


# --- found by a third blind learner run: a false pass, and a hint that blamed a cause the answer did not have -------

def drops_every_block_naming_the_user(result):
    """Wrong: a block for the user and the assistant is for the model too; only one that leaves out the assistant
    may go."""
    structured = result.get("structuredContent")
    if structured is not None:
        return json.dumps(structured, separators=(",", ":"), ensure_ascii=False)
    return "\n".join(block["text"] for block in result.get("content", []) if block.get("type") == "text"
                     and "user" not in block.get("annotations", {}).get("audience", []))


def test_model_copy_dropping_every_block_that_names_the_user_fails(verdict, lab):
    out = verdict(checks.check_model_copy, drops_every_block_naming_the_user, lab)
    assert fails_naming(out, ("for the user and the assistant", "leaves out the text block 'Spindle density",
                              '["user", "assistant"]', "names the assistant too")), out


def extrapolated_from_the_first_request(modern, legacy, handshake):
    """Wrong: request 1's gap taken for every request's, so the crossing is computed, not added up."""
    gap = modern[0] - legacy[0]
    if gap <= 0:
        return None
    found = math.floor(handshake / gap) + 1
    return found if found <= len(modern) else None


def test_break_even_extrapolated_from_request_one_is_not_told_it_judged_by_the_end(verdict):
    out = verdict(checks.check_break_even, extrapolated_from_the_first_request)
    assert fails_naming(out, ("gets ahead, then falls behind again", "returned None", "After 2 requests",
                              "each request's own costs")), out
    assert "by the end" not in out, out


def test_break_even_judged_by_the_end_is_still_told_so(verdict):
    # the_last_crossing finds the crossing in the session cut off there: what came later changed its answer.
    out = verdict(checks.check_break_even, the_last_crossing)
    assert fails_naming(out, ("returned None", "costs more again by the end")), out


def drops_only_the_blocks_for_the_user_alone(result):
    """Right, written differently: leaves out a block whose audience is exactly ["user"], and keeps the rest."""
    if result.get("structuredContent") is not None:
        return solution_copy(result)
    return "\n".join(block["text"] for block in result.get("content", []) if block.get("type") == "text"
                     and block.get("annotations", {}).get("audience") != ["user"])


def test_model_copy_dropping_only_the_blocks_for_the_user_alone_passes(verdict, lab):
    out = verdict(checks.check_model_copy, drops_only_the_blocks_for_the_user_alone, lab)
    assert out.startswith("✓ Your host gives the model 229 tokens") and "one for the user and the assistant" in out, out


# --- found by a fourth blind learner run: a bool for a count, and a count past the end of the session --------------

def true_for_the_first_request(modern, legacy, handshake):
    """Wrong: True for request 1 (Python counts True as 1, but a bool is no count)."""
    found = solution_crossing(modern, legacy, handshake)
    return True if found == 1 else found


def one_past_the_end_on_a_tie(modern, legacy, handshake):
    """Wrong: when the totals are equal after the last request, the next request is taken as the crossing."""
    found = solution_crossing(modern, legacy, handshake)
    if found is None and sum(modern) == handshake + sum(legacy):
        return len(modern) + 1
    return found


@pytest.mark.parametrize("first_costlier, phrases", [
    pytest.param(true_for_the_first_request, ("returned True", "a bool", "an int"), id="true-for-request-one"),
    pytest.param(one_past_the_end_on_a_tie, ("equal after its last request", "returned 7",
                                             "a request after the last one is not in the session"),
                 id="one-past-the-end-on-a-tie"),
])
def test_break_even_fourth_run_wrong_answers_fail(verdict, first_costlier, phrases):
    out = verdict(checks.check_break_even, first_costlier)
    assert fails_naming(out, phrases), out


def joined_with_nothing(result):
    """Allowed (the separator is the learner's, even none): every text block's text, as it is, run together."""
    if result.get("structuredContent") is not None:
        return solution_copy(result)
    return "".join(texts_of(result))


def structured_content_by_its_key(result):
    """Allowed: `"structuredContent" in result` (the check never sends null, which the two readings would split on)."""
    if "structuredContent" in result:
        return json.dumps(result["structuredContent"], separators=(",", ":"), ensure_ascii=False)
    return "\n".join(texts_of(result))


@pytest.mark.parametrize("for_model", [joined_with_nothing, structured_content_by_its_key], ids=lambda f: f.__name__)
def test_model_copy_fourth_run_right_answers_pass(verdict, lab, for_model):
    assert verdict(checks.check_model_copy, for_model, lab).startswith("✓ Your host gives the model"), for_model
