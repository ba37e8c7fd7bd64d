"""Checks for exercise 16: one copy of a tool result for the model, and where the envelope stops paying.

Task 1 runs the learner's `for_model(result)` on real tool results from the lab server and
counts the tokens with the lesson's tokenizer. Task 2 gives `first_costlier(modern, legacy,
handshake)` sessions whose answers are known, then the bytes and tokens it measures over stdio.
"""

import ast
import decimal
import json
import math
import numbers
import random
import re
import unicodedata

from mcpwire import count_tokens, dumps, frames
from mcpwire.costs import TOKENIZER_NAME, exchange_costs
from mcpwire.stdio import StdioWire
from .attempt import attempt, missing
from .servers import STARTUP_WAIT_S, stdio_lab
from .verdict import failed, not_done, passed, short, shown

# Non-ASCII text, which json.dumps escapes by default: an en dash in the search hits, a name (Tomás), µV.
STRUCTURED_CALLS = [("search_notes", {"query": "spindle"}), ("read_note", {"note_id": "spindle-density"}),
                    ("read_note", {"note_id": "lab-sync-2026-01-12"}), ("read_note", {"note_id": "hypnogram-scoring"})]
UNSTRUCTURED_CALL = ("night_report", {})  # no outputSchema: its result has content blocks only
OPTIONAL_FIELDS = ("structuredContent", "isError", "_meta")  # a CallToolResult always has content, may lack these
GUARD_S = 5  # a pure function on a few numbers answers at once; longer means a loop that never ends
CYCLE = [("tools/list", None),
         ("tools/call", {"name": "search_notes", "arguments": {"query": "spindle"}}),
         ("tools/call", {"name": "read_note", "arguments": {"note_id": "spindle-density"}}),
         ("resources/read", {"uri": "notes://index"})]
MEASURED_REQUESTS = 20


# --- task 1: one copy for the model ----------------------------------------------------------------

def _call(wire, name, arguments):
    return wire.request("tools/call", {"name": name, "arguments": arguments}).result


def check_model_copy(for_model, lab=None):
    """for_model(result): the text a host gives the model, the structured data once and compact."""
    if missing(for_model):
        not_done("define for_model(result) first.")
        return
    with stdio_lab(lab) as wire:
        structured = [(name, _call(wire, name, arguments)) for name, arguments in STRUCTURED_CALLS]
        unstructured = _call(wire, *UNSTRUCTURED_CALL)
    for name, result in structured + _other_structured(structured[1][1]):
        if not _judge_structured(for_model, name, result):
            return
    if not _judge_unstructured(for_model, UNSTRUCTURED_CALL[0], unstructured):
        return
    if not _judge_unstructured(for_model, f"{UNSTRUCTURED_CALL[0]} with its text in two blocks, the second ending with "
                               "a newline", _split_text(unstructured)):
        return
    if not _judge_unstructured(for_model, f"{UNSTRUCTURED_CALL[0]} with one more text block, for the user only "
                               "(annotations.audience [\"user\"])", _with_user_text(unstructured)):
        return
    if not _judge_unstructured(for_model, f"{UNSTRUCTURED_CALL[0]} with one more text block, for the user and the "
                               "assistant (annotations.audience [\"user\", \"assistant\"])", _with_shared_text(unstructured)):
        return
    name, result = structured[0]
    one = count_tokens(dumps(result["structuredContent"]))
    both = count_tokens(result["content"][0]["text"]) + one
    passed(f"Your host gives the model {one} tokens for the result of {name}, where passing both halves would cost {both}; "
           f"non-ASCII text (Tomás, µV) stays as it is, an empty object and a list are passed as structuredContent "
           f"too, and for {UNSTRUCTURED_CALL[0]}, which has no structuredContent, it passes the text blocks, one for the "
           f"user and the assistant included. Tokens "
           f"counted with {TOKENIZER_NAME}.")


def _other_structured(note):
    """Results as other servers may write them, made from a real read_note result: structuredContent that is present
    but empty, or not an object. "When the result has it" covers both."""
    empty = {"content": [], "structuredContent": {}, "isError": False}  # the text copy is a SHOULD: left out here
    tags = note["structuredContent"]["tags"]
    listed = {"content": [{"type": "text", "text": json.dumps(tags, indent=2, ensure_ascii=False)}],
              "structuredContent": tags, "isError": False}
    return [("a tool of another server whose structuredContent is an empty object {}, with no text block", empty),
            ("a tool of another server whose structuredContent is a list (any JSON value may be), with its "
             "indented text copy", listed)]


def _run(for_model, name, result):
    """The learner's answer, or None after reporting what went wrong."""
    outcome = attempt(for_model, json.loads(json.dumps(result)))
    if outcome.not_done:
        not_done("for_model still raises NotImplementedError.")
        return None
    if outcome.error:
        # Only a field a result may go without earns the .get() hint; another KeyError is from the learner's own reading.
        absent = [key for key in outcome.error.args[:1] if key in OPTIONAL_FIELDS and key not in result]
        if isinstance(outcome.error, KeyError) and absent:
            failed(f"for_model raised {outcome.error_text} on the result of {name}, which has no {absent[0]}.",
                   hint="Not every tool result has structuredContent: read it with .get() and fall back to the "
                        "content blocks.")
        elif "structuredContent" in result and not result["content"]:
            failed(f"for_model raised {outcome.error_text} on the result of {name}.",
                   hint="This result has structuredContent and no content block: the text copy is a SHOULD, and a "
                        "server may leave it out. Read the data from structuredContent itself, not from the text.")
        else:
            failed(f"for_model raised {outcome.error_text} on the result of {name}.",
                   hint="Print that result and read what it holds: the check gives your function tool results as the "
                        "lab server sent them, and a few as other servers may write them.")
        return None
    if not isinstance(outcome.value, str):
        failed(f"for_model returned {type(outcome.value).__name__} {short(outcome.value)} for {name}.",
               hint="A model reads text: return a string.")
        return None
    return outcome.value


def _judge_structured(for_model, name, result):
    answer = _run(for_model, name, result)
    if answer is None:
        return False
    data = result["structuredContent"]
    text_block = result["content"][0]["text"] if result["content"] else None
    compact = dumps(data)
    try:
        parsed = json.loads(answer)
    except ValueError:
        parsed = None
    if parsed == data and type(parsed) is type(data):
        if not isinstance(data, dict) and answer == text_block and answer != compact:
            failed(f"For {name}, your text is its indented text block, {count_tokens(answer)} tokens, where the "
                   f"structuredContent, compact, takes {count_tokens(compact)}.",
                   hint=f"structuredContent is a {type(data).__name__} here, and the result has it: pass it as compact "
                        "JSON whatever its type. Test `is not None`, not whether it is a dict.")
            return False
        return _judge_compact(name, answer, parsed)
    if not isinstance(data, dict) or not data:
        what = "an empty object" if data == {} else f"a {type(data).__name__}"
        failed(f"For {name}, your text is {shown(answer, 80)}, where the structuredContent, compact, is "
               f"{shown(compact, 80)}.",
               hint=f"structuredContent is {what} here, but the result has it: pass it as compact JSON whatever its "
                    "value. Test `is not None`, not its truth (an empty {} is false) or whether it is a dict.")
        return False
    if isinstance(parsed, dict) and "structuredContent" in parsed:
        failed(f"For {name}, your text is the whole result, {count_tokens(answer)} tokens: it carries the data "
               "twice, as structuredContent and as the text block.",
               hint="structuredContent and the text block hold the same data: the model needs one of them.")
        return False
    if text_block and text_block in answer:
        failed(f"For {name}, your text is {count_tokens(answer)} tokens: the indented text block and more, where "
               f"the data alone, compact, takes {count_tokens(compact)}.",
               hint="structuredContent and the text block hold the same data: the model needs one of them.")
        return False
    try:
        as_python = ast.literal_eval(answer)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        as_python = None
    if as_python == data:
        failed(f"For {name}, your text is the structured data as Python writes it, not as JSON: {short(answer, 80)}",
               hint="str() and repr() write single quotes, True and None; a model is given JSON. Serialize with "
                    "the json module.")
        return False
    if parsed is not None and _folded(dumps(parsed)) == _folded(compact):
        word = re.search(r"\w*[^\x00-\x7f]\w*", compact).group(0)
        failed(f"For {name}, your text holds the structured data with its non-ASCII text changed: the note has "
               f"'{word}', which your text does not keep as it is.",
               hint="The model should read the note's own text: json.dumps(..., ensure_ascii=False) keeps á, µ and – "
                    "as they are, and costs no \\uXXXX escapes.")
        return False
    failed(f"For {name}, your text is not the tool's structured data: {short(answer)}",
           hint="When the result has structuredContent, that is the copy to pass, as JSON text.")
    return False


def _folded(text):
    """The text with its non-ASCII characters decomposed and dropped: equal for two texts that differ only there."""
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def _judge_compact(name, answer, parsed):
    """The data is all there: judge the tokens against the same data compact, in the answer's own key order."""
    compact = dumps(parsed)
    spent, needed = count_tokens(answer), count_tokens(compact)
    if spent <= needed and answer == answer.strip():
        return True
    if spent <= needed:
        ends = f"it ends {shown(answer[-8:])}" if answer[-1:].isspace() else f"it starts {shown(answer[:8])}"
        failed(f"For {name}, your text is the compact JSON with whitespace around it: {ends}.",
               hint="Compact JSON has no whitespace outside its strings, before or after it included: return the text "
                    "json.dumps gives as it is.")
        return False
    escaped = json.dumps(parsed, separators=(",", ":"))
    if answer == escaped:
        word = re.search(r"\w*[^\x00-\x7f]\w*", compact).group(0)
        failed(f"For {name}, your text holds the structured data, but in {spent} tokens; with its non-ASCII text as "
               f"it is, it takes {needed}: your JSON writes '{json.dumps(word)[1:-1]}' where the note has '{word}'.",
               hint="json.dumps escapes every non-ASCII character (á, µ, °) as \\uXXXX unless you pass "
                    "ensure_ascii=False; each escape is six characters and costs tokens.")
        return False
    failed(f"For {name}, your text holds the structured data, but in {spent} tokens; written compactly it takes "
           f"{needed}.",
           hint="Newlines, indentation and the spaces after , and : all cost tokens. Serialize structuredContent "
                "without them" + (", and with ensure_ascii=False, so that á or µ is not written as \\uXXXX."
                                  if "\\u" in answer else "."))
    return False


def _split_text(result):
    """The same result with its text block cut in two, the second half after the image: text in several blocks.

    The second half ends with a newline, as many servers end a text: a copy that strips the texts loses it.
    """
    first, *rest = result["content"]
    head, _, tail = first["text"].partition(". ")
    return {**result, "content": [{**first, "text": head + "."}, rest[0], {**first, "text": tail + "\n"}, *rest[1:]]}


def _with_user_text(result):
    """The same result with a text block for the user only added at the end: a host may leave it out, or keep it."""
    note = {"type": "text", "text": "Tap the hypnogram to zoom in.", "annotations": {"audience": ["user"]}}
    return {**result, "content": [*result["content"], note]}


def _with_shared_text(result):
    """The same result with a text block for both the user and the assistant added: it names the assistant, so the
    model is given it (a copy that drops every block naming the user drops it too)."""
    note = {"type": "text", "text": "Spindle density fell in N2 after 03:00.",
            "annotations": {"audience": ["user", "assistant"]}}
    return {**result, "content": [*result["content"], note]}


def _as_a_list(answer):
    """'JSON' or 'Python' when the answer is a list of strings written out, else None."""
    for how, read in (("JSON", json.loads), ("Python", ast.literal_eval)):
        try:
            value = read(answer)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, (list, tuple)) and value and all(isinstance(item, str) for item in value):
            return how
    return None


def _judge_unstructured(for_model, name, result):
    answer = _run(for_model, name, result)
    if answer is None:
        return False
    # A block whose audience leaves out the assistant is not for the model: the task lets a host leave it out.
    texts = [block["text"] for block in result["content"] if block.get("type") == "text"
             and "assistant" in block.get("annotations", {}).get("audience", ["assistant"])]
    user_only = [block["text"] for block in result["content"] if block.get("type") == "text"
                 and block["text"] not in texts]
    listed = _as_a_list(answer)
    if listed is not None:
        failed(f"For {name}, which has no structuredContent, your text is a list of its texts written as "
               f"{listed}: {short(answer, 80)}",
               hint="The model is given one text: join the texts of the text blocks (\"\\n\".join(...)), so no "
                    "brackets, quotes or escapes go with them.")
        return False
    left_out = [text for text in texts if text not in answer]
    stripped = [text for text in left_out if text != text.strip() and text.strip() in answer]
    if stripped:
        failed(f"For {name}, your text changes the text block {shown(stripped[0], 80)}: the whitespace at its ends is "
               "gone.",
               hint="Pass each text block's text as it is: strip() takes off whitespace that is part of the text.")
        return False
    shared = [block for block in result["content"] if block.get("type") == "text" and block["text"] in left_out
              and "user" in block.get("annotations", {}).get("audience", [])]
    if shared:
        failed(f"For {name}, your text leaves out the text block {shown(shared[0]['text'], 80)}, whose "
               f"annotations.audience is {json.dumps(shared[0]['annotations']['audience'])}.",
               hint="That audience names the assistant too, so the block is for the model as well as the user: only "
                    "a block whose audience leaves out \"assistant\" may be left out.")
        return False
    if left_out:
        failed(f"For {name}, which has no structuredContent, your text leaves out the text block "
               f"{shown(left_out[0], 80)}.",
               hint="Without structuredContent, the content blocks are the only copy: pass the text of every text "
                    "block (only one whose annotations.audience leaves out \"assistant\" may be left out).")
        return False
    # The texts, a separator between each two and a little room: anything larger passes more than the text blocks.
    kept = texts + [text for text in user_only if text in answer]  # a user-only text kept is allowed too
    allowed = sum(count_tokens(text) for text in kept) + 2 * len(kept)
    if count_tokens(answer) <= allowed:
        return True
    spent = f"For {name}, which has no structuredContent, your text is {count_tokens(answer)} tokens, where the text " \
            f"of its text blocks takes {allowed - 2 * len(kept)}"
    images = [block["data"] for block in result["content"] if block.get("type") == "image"]
    if any(data[:64] in answer for data in images):
        failed(f"{spent}: it carries the image block's base64 data, which is for the user.",
               hint="Other blocks are not text: take the text of the blocks whose type is \"text\" only.")
    else:
        failed(f"{spent}: it passes more than the text blocks, such as the other blocks' fields or the "
               "blocks as JSON.",
               hint="A model reads the text of the text blocks: leave out the other blocks and the JSON "
                    "around them.")
    return False


# --- task 2: where the envelope stops paying ---------------------------------------------------------

# (what the case is, modern per request, legacy per request, handshake, the answer)
KNOWN_SESSIONS = [
    ("a session whose totals pass each other between requests 2 and 3", [250] * 6, [150] * 6, 250, 3),
    ("a session whose totals are equal after request 3", [250] * 6, [150] * 6, 300, 4),
    ("a session where every modern request is the cheaper one", [100] * 6, [120] * 6, 500, None),
    ("a session whose handshake costs less than one envelope", [250] * 6, [150] * 6, 50, 1),
    ("a session whose totals pass each other only at its last request", [200] * 6, [100] * 6, 550, 6),
    # Requests that cost different amounts: an average gap per request, times a count, misses the crossing.
    ("a session whose first request is the dearest", [400] + [100] * 5, [100] * 6, 250, 1),
    # The legacy requests cost more: the gap shrinks; counted without its sign, it would grow.
    ("a session where every modern request is a little cheaper", [100] * 6, [120] * 6, 50, None),
    # The modern total gets ahead, then a dear legacy request puts it behind again: the first crossing is the answer.
    ("a session whose modern total gets ahead, then falls behind again", [100, 400, 100, 100, 100, 100],
     [100, 100, 400, 100, 100, 100], 250, 2),
    # Longer than the 20 requests measured over stdio: a loop must run to the end of the session it is given.
    ("a session of 30 requests whose totals pass each other between requests 25 and 26", [110] * 30, [100] * 30, 250, 26),
    # Ahead, behind, ahead again: the first crossing is the answer, not the last.
    ("a session whose modern total gets ahead, falls behind, then gets ahead again", [100, 400, 100, 400, 100, 100],
     [100, 100, 400, 100, 100, 100], 250, 2),
    # Modern dearer by 10 a request, but a handshake of 250 is paid back only after request 25: not within these 6.
    ("a session that ends before the modern total gets ahead", [110] * 6, [100] * 6, 250, None),
    # Equal after the last request: the modern total would get ahead only at a request 7 the session does not have.
    ("a session whose totals are equal after its last request", [110] * 6, [100] * 6, 60, None),
]
RANDOM_SESSIONS = 2  # drawn for each run, on top of the known ones: an answer cannot be a table of the inputs


def random_sessions(rng=None):
    """Sessions of varied costs drawn for one run, each with a crossing somewhere inside it: (what, modern, legacy,
    handshake, answer). The answer is computed, so a right function passes whatever is drawn."""
    rng = rng or random.Random()
    sessions = []
    while len(sessions) < RANDOM_SESSIONS:
        length = rng.randrange(8, 25)
        legacy = [rng.randrange(80, 400) for _ in range(length)]
        modern = [cost + rng.randrange(-40, 160) for cost in legacy]
        handshake = rng.randrange(100, 900)
        answer = expected_crossing(modern, legacy, handshake)
        if answer is not None and answer > 1:
            sessions.append((f"a session of {length} requests drawn at random for this run", modern, legacy,
                             handshake, answer))
    return sessions


def _totals(modern, legacy, handshake, n):
    return sum(modern[:n]), handshake + sum(legacy[:n])


def expected_crossing(modern, legacy, handshake):
    """The first n after which the modern total exceeds the legacy total plus its handshake, or None."""
    return next((n for n in range(1, len(modern) + 1)
                 if _totals(modern, legacy, handshake, n)[0] > _totals(modern, legacy, handshake, n)[1]), None)


def check_break_even(first_costlier, lab=None):
    """first_costlier(modern, legacy, handshake): the request from which the envelope has cost more, or None."""
    if missing(first_costlier):
        not_done("define first_costlier(modern, legacy, handshake) first.")
        return
    for what, modern, legacy, handshake, answer in KNOWN_SESSIONS + random_sessions():
        if not _judge_crossing(first_costlier, what, "bytes", modern, legacy, handshake, answer):
            return
    measured = _measure_stdio(lab)
    for unit, (modern, legacy, handshake) in measured.items():
        answer = expected_crossing(modern, legacy, handshake)
        if not _judge_crossing(first_costlier, f"the {MEASURED_REQUESTS} requests measured over stdio", unit,
                               modern, legacy, handshake, answer):
            return
    found = {unit: expected_crossing(*costs) for unit, costs in measured.items()}
    passed(f"Over stdio the modern session has cost more from request {found['bytes']} in bytes and "
           f"{found['tokens']} in tokens ({TOKENIZER_NAME}), as your function says; it also gets a tie, a crossing at the "
           "first and at the last request, requests of different costs, a lead lost again (and won again later), a "
           "session of 30 requests, sessions drawn at random, and sessions where the envelope never costs more within "
           "the session (one of them with equal totals at its end) right.")


def _judge_crossing(first_costlier, what, unit, modern, legacy, handshake, answer):
    outcome = attempt(first_costlier, list(modern), list(legacy), handshake, guard=GUARD_S)
    if outcome.hung:
        failed(f"first_costlier did not return within {GUARD_S} s on {what}.",
               hint="Walk the requests once, from 1 to len(modern), and stop there.")
        return False
    if outcome.not_done:
        not_done("first_costlier still raises NotImplementedError.")
        return False
    if outcome.error:
        failed(f"first_costlier raised {outcome.error_text} on {what}.")
        return False
    got = _whole(outcome.value)
    if got == answer and (got is None or isinstance(got, int) and not isinstance(got, bool)):
        return True
    given = f"On {what} (modern {short(modern, 400)}, legacy {short(legacy, 400)}, handshake {handshake} {unit})"
    if isinstance(got, bool) and (got or answer is not None):  # False for never is told that None says so, below
        # Python counts True as 1 and False as 0, so a bool compares equal to a count: blame its type.
        failed(f"{given} your function returned {got}, a bool, not a number of requests.",
               hint="Return the count as a number (an int), or None when the modern session never costs more.")
        return False
    if got is None or not isinstance(got, int) or isinstance(got, bool) or not 1 <= got <= len(modern):
        if got is not None and not isinstance(got, int):
            # The right count as text ("3") would read as 3 in the message: blame its type, not the totals.
            failed(f"{given} your function returned {shown(got)}, which is not a whole number of requests.",
                   hint="Return the count as a number (an int; a whole float such as 3.0 is taken too), or None "
                        "when the modern session never costs more.")
            return False
        ours, theirs = _totals(modern, legacy, handshake, answer) if answer else _totals(modern, legacy, handshake,
                                                                                       len(modern))
        # A lead that is lost again by the end is still the answer. Blame the end only when the function, given the
        # session cut off at the crossing, finds it: then what came after is what changed its answer.
        ours_at_end, theirs_at_end = _totals(modern, legacy, handshake, len(modern))
        lost = answer and got is None and ours_at_end <= theirs_at_end
        by_the_end = lost and _whole(attempt(first_costlier, list(modern[:answer]), list(legacy[:answer]), handshake,
                                             guard=GUARD_S).value) == answer
        failed(f"{given} your function returned {shown(got)}.",
               hint=(f"After {_requests(answer)} the modern session has cost {ours} {unit} and the legacy one "
                     f"{theirs}, handshake included" + (": it has cost more from there, even though the legacy "
                                                        "session costs more again by the end." if by_the_end else
                                                        ": it has cost more from there. Add up each request's own "
                                                        "costs: here they differ from one request to the next."
                                                        if lost else ".")
                     if answer else
                     f"After all {len(modern)} requests the modern session has cost {ours} {unit}, the legacy one "
                     f"{theirs}: it never costs more within the session, and None says so"
                     + (" (a request after the last one is not in the session)." if isinstance(got, int)
                        and not isinstance(got, bool) and got > len(modern) else ".")))
        return False
    ours, theirs = _totals(modern, legacy, handshake, got)
    if ours == theirs:
        failed(f"{given} your function returned {got}: after {_requests(got)} both sessions have cost {ours} {unit}.",
               hint="Equal is not more: the modern session has cost more only once its total is larger.")
    elif ours < theirs:
        failed(f"{given} your function returned {got}, but after {_requests(got)} the modern session has cost "
               f"{ours} {unit} and the legacy one {theirs}, handshake included.",
               hint="Compare running totals, with the handshake counted in the legacy one; the first request is "
                    "request 1.")
    else:
        failed(f"{given} your function returned {got}, but the modern session has cost more already after "
               f"{_requests(answer)}: {sum(modern[:answer])} {unit} against "
               f"{handshake + sum(legacy[:answer])}.",
               hint="Return the first request after which the modern total is larger.")
    return False


def _whole(value):
    """A whole number of any numeric type (numpy's int64, 3.0, Decimal) as an int; anything else as it is."""
    if isinstance(value, (numbers.Real, decimal.Decimal)) and not isinstance(value, bool) and math.isfinite(value) \
            and value == int(value):
        return int(value)
    return value


def _requests(n):
    return "1 request" if n == 1 else f"{n} requests"


def _measure_stdio(lab):
    """{unit: (modern per request, legacy per request, handshake)} for CYCLE repeated, on two stdio processes."""
    requests = [CYCLE[i % len(CYCLE)] for i in range(MEASURED_REQUESTS)]
    with stdio_lab(lab) as modern_wire:
        start = len(modern_wire.transcript)
        for number, (method, params) in enumerate(requests, start=2):
            modern_wire.send(frames.request(method, params, id=number))
        modern = exchange_costs(modern_wire.transcript[start:])
    # A second process: the first request a stdio process reads fixes its era (lesson 11). Its first reply waits for
    # the server to start, which on a busy machine takes longer than a request's usual wait.
    with StdioWire.labserver() as legacy_wire:
        legacy_wire.send(frames.legacy_initialize(), timeout=STARTUP_WAIT_S)
        legacy_wire.send(frames.legacy_initialized())
        for number, (method, params) in enumerate(requests, start=2):
            legacy_wire.send(frames.legacy_request(method, params, id=number))
        handshake = exchange_costs(legacy_wire.transcript[:2])
        legacy = exchange_costs(legacy_wire.transcript[2:])
    return {unit: ([cost[index] for cost in modern], [cost[index] for cost in legacy],
                   sum(cost[index] for cost in handshake))
            for index, unit in enumerate(("bytes", "tokens"))}
