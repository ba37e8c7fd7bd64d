"""Checks for exercise 05: call tools with arguments that fit their schema, sort replies into results and errors."""

import copy
import json
import random

from . import input_schema
from .attempt import RecordingCall, TooManySends, attempt, missing
from .servers import stdio_lab
from .verdict import failed, not_done, passed, said, short, shown

MAX_CALLS = 6
DETAIL_LIMIT = 400  # both compared details are cut at the same length, and say their full length

# --- task 1: search, then read the best hit ------------------------------------------------

# A space, a non-ASCII letter (only lab syncs name Tomás: folded to "tomas" it matches nothing), no match at all, and
# white space at both ends (the lab finds the same note either way: only the query sent tells a strip() apart).
TOPICS = ["actigraphy", "spindle density", "Tomás", "zebrafish", "  hypnogram scoring\n"]


def tool_definitions(wire):
    """{name: definition} from the server's tools/list."""
    return {tool["name"]: tool for tool in wire.request("tools/list").result["tools"]}


def schema_problems(tool, arguments):
    """What is wrong with `arguments` for this tool by JSON Schema (a validator's messages)."""
    if not isinstance(arguments, dict):
        return [f"arguments must be an object, not {type(arguments).__name__}"]
    return [error.message for error in input_schema.validator(tool["inputSchema"]).iter_errors(arguments)]


def unknown_arguments(tool, arguments):
    """The argument names the schema's properties do not name: JSON Schema allows them (no additionalProperties:
    false), but the lab drops them silently, so the task refuses them."""
    known = tool["inputSchema"].get("properties", {})
    return [name for name in arguments if name not in known] if isinstance(arguments, dict) else []


class _SummaryCall(RecordingCall):
    """The check's call_tool: the lab's real reply, with a summary for people in its text block instead of the JSON.

    The spec says a tool SHOULD repeat its structured data as text, not that it must: code that parses the text copy
    works on the lab server only. The reply kept for the verdict is the real one.
    """

    def __call__(self, name, arguments):
        message = super().__call__(name, arguments)
        result = message.get("result") or {}
        structured = result.get("structuredContent")
        if isinstance(structured, dict) and not result.get("isError"):
            result["content"] = [{"type": "text", "text": _summary(structured)}]
        return message


def _summary(structured):
    """A line a person reads: no JSON, so only structuredContent holds the data."""
    if "hits" in structured:
        hits = structured["hits"]
        return f"Best match: {hits[0].get('title')}." if hits else "No note matches."
    return f"{structured.get('title')}, written {structured.get('date')}."


def _expected_tags(wire, topic):
    hits = wire.request("tools/call", {"name": "search_notes", "arguments": {"query": topic, "limit": 1}})
    hits = hits.result["structuredContent"]["hits"]
    if not hits:
        return None
    note = wire.request("tools/call", {"name": "read_note", "arguments": {"note_id": hits[0]["id"]}})
    return note.result["structuredContent"]["tags"]


def check_search_then_read(best_note_tags, lab=None):
    """best_note_tags(call_tool, topic): one search hit, read it, return its tags; None when nothing matches."""
    if missing(best_note_tags):
        not_done("define best_note_tags(call_tool, topic) first.")
        return
    with stdio_lab(lab) as wire:
        tools = tool_definitions(wire)
        answers = []
        for topic in TOPICS:
            expected = _expected_tags(wire, topic)
            call_tool = _SummaryCall(wire, max_calls=MAX_CALLS)
            outcome = attempt(best_note_tags, call_tool, topic)
            if outcome.not_done:
                not_done("best_note_tags still raises NotImplementedError. Call search_notes, then read_note.")
                return
            if not _judge_topic(topic, expected, call_tool.calls, outcome, tools):
                return
            answers.append((topic, expected))
    shown = ", ".join(f"{topic!r} → {tags}" for topic, tags in answers)
    passed(f"best_note_tags asked search_notes for one hit, read it with read_note and returned its tags "
           f"({shown}); with no hit it made no second call.")


def _judge_topic(topic, expected, calls, outcome, tools):
    story = f"For the topic {topic!r}"
    if isinstance(outcome.error, TooManySends):
        failed(f"{story}, your function called tools {MAX_CALLS} times and was still going.",
               hint="Two calls are enough: search_notes, then read_note.")
        return False
    for index, (name, arguments, message) in enumerate(calls):
        if index and expected is None:
            answered = " It answered with a tool error." if (message.get("result") or {}).get("isError") else ""
            failed(f"{story}, the search found nothing, yet your function then called {name} with "
                   f"{short(arguments)}.{answered}", server=said(message),
                   hint="With an empty hits list there is nothing to read: return None, and make no second call.")
            return False
        if name not in tools:
            failed(f"{story}, your function called a tool named {name!r}.", server=said(message),
                   hint=f"The tools are named {', '.join(tools)}.")
            return False
        problems = schema_problems(tools[name], arguments)
        if problems:
            failed(f"{story}, your {name} arguments {short(arguments)} do not fit its inputSchema: "
                   f"{'; '.join(problems)}.", server=said(message), hint=_schema_hint(name, problems))
            return False
        unknown = unknown_arguments(tools[name], arguments)
        if unknown:
            known = ", ".join(tools[name]["inputSchema"].get("properties", {}))
            failed(f"{story}, your {name} arguments {short(arguments)} pass {', '.join(map(repr, unknown))}, which "
                   f"its inputSchema's properties do not name (it takes {known}). The schema does not forbid an "
                   "extra argument, but the lab drops it without a word, so it does nothing; the task refuses it.",
                   server=said(message), hint="Send only the arguments the tool takes: the names under properties.")
            return False
        if "error" in message:
            failed(f"{story}, the server refused your {name} call as a request.", server=said(message),
                   hint="arguments is an object whose keys are the argument names.")
            return False
        result = message.get("result") or {}
        if result.get("isError"):
            failed(f"{story}, {name} answered with a tool error.", server=said(message),
                   hint="Read the error text: it says what the tool expected.")
            return False
    names = [name for name, _, _ in calls]
    if not names or names[0] != "search_notes":
        failed(f"{story}, your function called {names or 'no tool'}; it should start with search_notes.")
        return False
    searches = [arguments.get("limit") for name, arguments, _ in calls if name == "search_notes"]
    if len(searches) > 1:
        failed(f"{story}, your function called search_notes {len(searches)} times (with limit "
               f"{', then '.join(map(repr, searches))}).",
               hint="One search is enough, asking for one hit (\"limit\": 1): read its hit with read_note.")
        return False
    limit = calls[0][1].get("limit")
    if limit != 1:
        asked = "no limit (the default is 5)" if limit is None else f"limit {limit!r}"
        failed(f"{story}, you asked search_notes for {asked}, and you use one hit.",
               hint="Pass \"limit\": 1, the argument the schema names for the number of hits.")
        return False
    if isinstance(outcome.error, json.JSONDecodeError):
        failed(f"{story}, your function raised {outcome.error_text}: it parsed a text block, which here holds a "
               "summary for people, not JSON.",
               hint="A tool SHOULD repeat its data as text, but need not, and its text may say anything: read the "
                    "hits and the tags from structuredContent, the copy meant for programs.")
        return False
    if outcome.error:
        hint = ("When nothing matches, structuredContent[\"hits\"] is an empty list: return None then."
                if expected is None else "The reply is the whole JSON-RPC message: message[\"result\"][\"structuredContent\"].")
        failed(f"{story}, your function raised {outcome.error_text}", hint=hint)
        return False
    if expected is None:
        if outcome.value is not None:
            failed(f"{story}, the search found nothing, and you returned {short(outcome.value)} instead of None.")
            return False
        return True
    query = calls[0][1].get("query")
    if query != topic:
        found = ("the same note's tags came back this time" if outcome.value == expected else
                 f"you returned {short(outcome.value)}, where the best note's tags are {expected}")
        stripped = " (the white space at its ends is gone)" if isinstance(query, str) and query == topic.strip() \
            and query != topic else ""
        failed(f"{story}, you searched for {shown(query)}, not for the topic {topic!r} as it is{stripped}; {found}.",
               hint="Pass the topic as the query, unchanged: the server reads it as text (case, spaces and letters "
                    "such as á included), and another query may find another note or none.")
        return False
    if names[1:] != ["read_note"]:
        failed(f"{story}, after the search your function called {names[1:] or 'nothing'}; read the hit with read_note.",
               hint="The tags are in read_note's structuredContent, not in the search hit.")
        return False
    if outcome.value != expected:
        value = outcome.value
        if isinstance(value, (tuple, set)) and sorted(value) == sorted(expected):
            what = f"a {type(value).__name__} of the right tags, not a list"
        else:
            what = short(value)
        failed(f"{story}, you returned {what}; the best note's tags are {expected}.",
               server=short(calls[-1][2].get("result", {}).get("structuredContent")),
               hint="Return read_note's structuredContent[\"tags\"], the list as it is.")
        return False
    return True


def _schema_hint(name, problems):
    text = " ".join(problems)
    if "required property" in text:
        return f"Read {name}'s inputSchema: its \"required\" list names the arguments you must send."
    if "True is not of type" in text or "False is not of type" in text:
        return ("True is a boolean (JSON true), not a number: Python counts a bool as an int, but JSON and the "
                "schema keep them apart. Write 1.")
    if "' is not of type 'integer'" in text:
        return ("The schema says integer: write 1, not \"1\". The lab server would accept \"1\" (pydantic converts it), "
                "but the schema is the contract, and another server may refuse it.")
    if "is not of type 'integer'" in text:
        return "The schema says integer: write a whole number, 1, with no quotes, list or fraction."
    return "Compare your arguments with the inputSchema: types, minimum and maximum."


# --- task 2: a result, a tool error or a protocol error ---------------------------------------

def _reply_cases(wire):
    """Real replies from the lab server, then some rewritten: (what the check sent, message).

    Every request, and every rewritten reply, gets an id drawn at random for the run: a classify that looks the
    kind up by id (from a table made on one run) fails on the next. The kind never depends on the id.
    """
    cases = []
    ids = iter(random.Random().sample(range(100, 1_000_000), 20))

    def call(story, params, method="tools/call", **frame_options):
        cases.append((story, wire.request(method, params, id=next(ids), **frame_options).message))

    call("search_notes for 'eeg'", {"name": "search_notes", "arguments": {"query": "eeg", "limit": 1}})
    # A success whose text holds the word "error" (its hit's snippet says "mean error"): tells isError from the words.
    call("search_notes for 'error', whose hit's snippet says \"mean error\"",
         {"name": "search_notes", "arguments": {"query": "error", "limit": 1}})
    call("sync_notes, which always fails", {"name": "sync_notes", "arguments": {"remote": "backup"}})
    call("read_note of an id that does not exist", {"name": "read_note", "arguments": {"note_id": "no-such-note"}})
    call("a tool that does not exist", {"name": "summarize_notes", "arguments": {}})
    call("tools/call without a tool name", {"arguments": {"note_id": "welcome"}})
    call("tools/call without the _meta envelope", {"name": "read_note", "arguments": {"note_id": "welcome"}}, meta=None)
    call("a misspelt method, tools/calls", {"name": "read_note", "arguments": {"note_id": "welcome"}},
         method="tools/calls")
    call("read_note of 'welcome'", {"name": "read_note", "arguments": {"note_id": "welcome"}})
    # No outputSchema, so a success without structuredContent: tells isError from "has structuredContent".
    call("night_report, a tool with no outputSchema", {"name": "night_report", "arguments": {}})
    for story, message in _other_servers(cases):
        cases.append((story, {**message, "id": next(ids)}))
    return cases


def _other_servers(cases):
    """Real replies rewritten the way other servers may write them: the lab's SDK always writes isError, one
    content block and an error text such as "Error executing tool …" or "Unknown tool: …", but isError may be left out (it means
    false), a tool error may have several blocks, its text may start with anything, and a success's text may
    start with "Error"."""
    by_story = dict(cases)
    quiet = copy.deepcopy(by_story["read_note of 'welcome'"])
    del quiet["result"]["isError"]
    split = copy.deepcopy(by_story["sync_notes, which always fails"])
    first = split["result"]["content"][0]["text"]
    cut = first.index(":") + 1
    # The second block ends with a newline, as many texts do: it belongs to the text, which is passed on as it is.
    split["result"]["content"] = [{"type": "text", "text": first[:cut]},
                                  {"type": "text", "text": first[cut:].strip() + "\n"}]
    plain = copy.deepcopy(by_story["read_note of an id that does not exist"])
    block = plain["result"]["content"][0]
    block["text"] = block["text"].split(": ", 1)[1]
    lint = copy.deepcopy(by_story["night_report, a tool with no outputSchema"])
    lint["result"]["content"] = [{"type": "text", "text": "Errors found: 0. All 13 notes have an id, a title and tags."}]
    # No structuredContent, its data only as JSON in a text block (as servers from before 2025-06-18 write it): the
    # text is for reading, so the detail is None, whatever the text looks like.
    text_only = copy.deepcopy(by_story["read_note of 'welcome'"])
    text_only["result"]["content"] = [{"type": "text", "text": json.dumps(text_only["result"].pop("structuredContent"))}]
    # structuredContent there but empty: {} is the detail, though it is false (`or None` loses it).
    empty = copy.deepcopy(by_story["read_note of 'welcome'"])
    empty["result"]["structuredContent"] = {}
    empty["result"]["content"] = [{"type": "text", "text": "Nothing to report."}]
    # isError left out and no structuredContent either: still a result (absent isError means false, whatever else).
    bare = copy.deepcopy(by_story["night_report, a tool with no outputSchema"])
    del bare["result"]["isError"]
    return [("read_note of 'welcome', from a server that leaves out isError (absent means false)", quiet),
            ("sync_notes, from a server that writes its error text in two blocks, the second ending with a newline",
             split),
            ("read_note of an id that does not exist, from a server whose error text does not start with "
             "\"Error\"", plain),
            ("a lint tool of another server that found nothing wrong and says so in a text starting with "
             "\"Errors found: 0\" (isError false)", lint),
            ("read_note of 'welcome', from a server that sends no structuredContent, its data only as JSON in a text "
             "block", text_only),
            ("a tool of another server whose structuredContent is an empty {} (it had nothing to report)", empty),
            ("night_report, from a server that leaves out isError and sends no structuredContent (the tool has no "
             "outputSchema)", bare)]


def expected_kind(message):
    """The answer key: ("result", structuredContent), ("tool error", text) or ("protocol error", code)."""
    if "error" in message:
        return ("protocol error", message["error"]["code"])
    result = message["result"]
    if result.get("isError", False):
        return ("tool error", "\n".join(block.get("text", "") for block in result.get("content", [])))
    return ("result", result.get("structuredContent"))


def check_reply_kinds(classify, lab=None):
    """classify(message) must tell a result, a tool error (isError) and a protocol error (JSON-RPC error) apart."""
    if missing(classify):
        not_done("define classify(message) first.")
        return
    with stdio_lab(lab) as wire:
        cases = _reply_cases(wire)
    for story, message in cases:
        outcome = attempt(classify, copy.deepcopy(message))
        if outcome.not_done:
            not_done("classify still raises NotImplementedError. Return (kind, detail).")
            return
        want = expected_kind(message)
        if outcome.error:
            failed(f"The check sent {story}. classify raised {outcome.error_text}",
                   server=short(message, 240), hint=_raised_hint(want[0], message))
            return
        got = outcome.value
        if not (isinstance(got, (tuple, list)) and len(got) == 2):
            failed(f"The check sent {story}. classify returned {short(got)}; return a pair (kind, detail).")
            return
        if got[0] != want[0]:
            failed(f"The check sent {story}. classify said {got[0]!r}; this is a {want[0]!r}.",
                   server=short(message, 240), hint=_kind_hint(want[0], message))
            return
        if got[1] != want[1]:
            failed(f"The check sent {story}. classify found the kind ({want[0]!r}) but returned the detail "
                   f"{shown(got[1], DETAIL_LIMIT)}; expected {shown(want[1], DETAIL_LIMIT)}.",
                   hint=_empty_structured_hint(message, got[1]) or _parsed_text_hint(message, got[1])
                   or _stripped_hint(message, got[1])
                   or _detail_hint(want[0]))
            return
    passed(f"classify sorted all {len(cases)} replies: results with their structuredContent (isError absent "
           "included, texts that talk of errors included, an empty {} kept as it is, and None for a tool with no "
           "outputSchema and for a result whose only copy of the data is JSON text), tool errors "
           "(the unknown tool included) with their text, and JSON-RPC errors with their code.")


def _raised_hint(kind, message):
    if kind == "result" and "structuredContent" not in message["result"]:
        # night_report: code that sorts by structuredContent reads its image block's text, not a missing member
        return ("This reply is a result (isError absent or false) with no structuredContent, since a tool with no "
                "outputSchema returns none, and not every block of its content is text. Decide the kind by isError "
                "first; then read optional members with .get().")
    if kind == "tool error":
        return ("This reply is a tool error: a result with isError true and only text in its content, no "
                "structuredContent. Decide the kind before you read the detail.")
    if kind == "protocol error":
        return "An error reply has no \"result\": look for \"error\" first."
    return "A result has no \"error\", and isError may be absent: read optional members with .get()."


def _kind_hint(kind, message):
    if kind == "tool error":
        return ("A tool error is a result: look for result[\"isError\"] == true (an absent isError means false). "
                "SDK 2.3.0 reports even an unknown tool this way. Do not go by the wording of the text: each server words "
                "its errors its own way.")
    if kind == "protocol error":
        return "A JSON-RPC error has an \"error\" member instead of \"result\": no tool ran."
    if "error" in json.dumps(message["result"].get("content", [])).lower():
        return ("isError is false, so the call worked, whatever its text says: a tool's text may talk of errors "
                "(a note about measurement error, a report of errors found: 0). The kind is never read from the "
                "words: only isError and the \"error\" member decide it.")
    if "isError" not in message["result"]:
        return ("This result leaves out isError, and an absent isError means false, whatever else the result holds "
                "or lacks (structuredContent too): the call worked. Go by isError alone, read with "
                "result.get(\"isError\", False).")
    return ("isError false (or absent) and no \"error\" member: the call worked. structuredContent is optional "
            "(on the lab, only tools with an outputSchema send it), so a result may have none (its detail is then None).")


def _parsed_text_hint(message, detail):
    """A hint when the detail is a text block parsed as JSON where the result has no structuredContent, else None."""
    result = message.get("result") or {}
    if "structuredContent" in result or result.get("isError") or detail is None:
        return None
    for block in result.get("content", []):
        try:
            if json.loads(block.get("text", "")) == detail:
                return ("This result has no structuredContent, so its detail is None, even though its text block "
                        "holds JSON: a text block is for reading, and a server may write anything there. Only "
                        "structuredContent is the data for programs.")
        except ValueError:
            continue
    return None


def _stripped_hint(message, detail):
    """A hint when the detail is the blocks' texts with whitespace taken off or added at their ends, else None."""
    texts = [block.get("text", "") for block in (message.get("result") or {}).get("content", [])]
    joined = "\n".join(texts)
    if not isinstance(detail, str) or detail == joined or detail.strip() not in (
            "\n".join(text.strip() for text in texts), joined.strip()):
        return None
    if len(detail) < len(joined):
        return ("Pass each block's text as it is, joined by newlines: strip() takes off whitespace that is part "
                "of the text, such as the newline that ends a block.")
    return ("Your text has whitespace the blocks do not: pass each block's text as it is, with one newline between "
            "two blocks and nothing added after the last (\"\\n\".join(texts)).")


def _empty_structured_hint(message, detail):
    """A hint when the detail is None (or missing) where structuredContent is an empty {}, else None."""
    if (message.get("result") or {}).get("structuredContent", None) != {} or detail:
        return None
    return ("This result has structuredContent, an empty {}: that is its detail. An empty {} is false, so `or None` "
            "or a truth test turns it into None; test `is not None`, or return result.get(\"structuredContent\") "
            "as it is.")


def _detail_hint(kind):
    return {
        "result": "The detail of a result is result[\"structuredContent\"], as it is (not the text in content).",
        "tool error": "The detail of a tool error is its text: the \"text\" of the blocks in result[\"content\"], "
                      "joined by newlines.",
        "protocol error": "The detail of a protocol error is error[\"code\"], an integer.",
    }[kind]
