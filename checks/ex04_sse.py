"""Check for exercise 04, task 2: the JSON-RPC messages in an SSE reply, however a server frames its events.

The first stream is the lab's own reply to a `reindex` call with a progress token (SDK
2.3.0 ends every line in CRLF and writes `event:` and `data: ` lines). The others carry
real lab messages framed the ways the SSE format lets any server frame them: LF or CR
line ends (or all three mixed in one stream), `id:` lines and `:` keep-alive comments without `event:`, `data:` without its space, one
message over two `data:` lines, UTF-8 written as it is (a note whose body holds U+2028,
a character `str.splitlines` splits at), and a stream that ends before its last event's
blank line. The answer key is `mcpwire.sse`.
"""

import json
import types

from mcpwire import frames, sse
from .attempt import attempt, missing
from .servers import REPLY_WAIT_S, http_lab, stdio_lab
from .verdict import failed, not_done, passed, short

REINDEX = frames.request("tools/call", {"name": "reindex", "arguments": {"pause_ms": 0}}, id="reindex-call",
                         meta={"progressToken": "reindex-1"})
# Taken in turn by the event:, data: and blank lines of three events. Each event ends in "\n\r", "\r\n\r" or
# "\n\r\n", never in a doubled line end, and no CR comes right before an LF (the two would make one CRLF).
MIXED_ENDS = ("\r\n", "\n", "\r", "\n", "\r\n", "\r", "\r", "\n", "\r\n")
SPLIT_LINES_NOTE = {"title": "Minutes", "body": "Line one\u2028line two, split by U+2028.", "tags": ["sync"]}

HINTS = {
    "lab": "An event ends at a blank line, and SDK 2.3.0 ends every line in CRLF: split at CRLF, LF and CR alike, "
           "then keep the data: lines.",
    "lf": "Lines may end in CRLF, LF or CR: split at all three (re.split(r\"\\r\\n|\\r|\\n\", text)).",
    "cr": "Lines may end in CRLF, LF or CR: split at all three (re.split(r\"\\r\\n|\\r|\\n\", text)).",
    "mixed": "One stream may end each line its own way, so the blank line between two events can be \"\\n\\r\" or "
             "\"\\r\\n\\r\": split the text into lines at CRLF, LF and CR first, then end an event at each empty "
             "line, rather than splitting the text at a doubled line end.",
    "fields": "Only data: lines carry the message: skip comments (lines that start with ':') and the other "
              "fields (event:, id:, retry:). An event without an event: line is a \"message\" event all the same.",
    "no-space": "The space after 'data:' is optional: take what follows the colon, less one space if there is one.",
    "two-lines": "An event's data: lines belong together: join them with a newline and parse the JSON when the "
                 "blank line ends the event.",
    "cut": "An event is complete only at its blank line, and the text after the last line end is not a line "
           "yet: here the stream stops after a data: line, so that event is not dispatched and its message not "
           "returned.",
    "utf-8": "str.splitlines() also splits at U+2028 and other characters a JSON string may hold as they are: "
             "split at CR and LF only.",
}


def frame_events(messages, *, end="\r\n", space=" ", fields=False, split=False, ascii_only=True):
    """`messages` as an SSE stream the way some server might write it (every choice here is the format's).

    `end` is one line end for every line, or a tuple of line ends the lines take in turn.
    """
    lines = []
    for number, message in enumerate(messages, 1):
        if fields:  # and no event: line, whose type then defaults to "message"
            lines += [": keep-alive", f"id: {number}", "retry: 3000"]
        else:
            lines.append("event: message")
        data = frames.dumps(message) if ascii_only else json.dumps(message, separators=(",", ":"), ensure_ascii=False)
        if split:
            cut = data.index(",") + 1
            lines += [f"data:{space}{data[:cut]}", f"data:{space}{data[cut:]}"]
        else:
            lines.append(f"data:{space}{data}")
        lines.append("")
    ends = end if isinstance(end, tuple) else (end,)
    return "".join(line + ends[number % len(ends)] for number, line in enumerate(lines))


def messages_of(stream):
    """The answer key: every event's data, parsed."""
    return [json.loads(event.data) for event in sse.parse(stream) if event.data]


def streams(lab=None):
    """(name, what it is, the stream as text) for each stream the check reads."""
    with http_lab(lab) as http:
        reply = http.send(REINDEX)
    lab_stream = reply.raw.decode("utf-8")
    real = messages_of(lab_stream)
    with stdio_lab(None) as own:  # the note is written in a lab of the check's own: yours keeps its notes
        created = own.request("tools/call", {"name": "create_note", "arguments": SPLIT_LINES_NOTE}, timeout=REPLY_WAIT_S)
        note_id = created.result["structuredContent"]["id"]
        read = own.request("tools/call", {"name": "read_note", "arguments": {"note_id": note_id}},
                           timeout=REPLY_WAIT_S).message
    return [
        ("lab", "the lab's own reply to reindex with a progress token", lab_stream),
        ("lf", "the same messages with lines ending in LF", frame_events(real, end="\n")),
        ("cr", "the same messages with lines ending in CR", frame_events(real, end="\r")),
        ("mixed", "the same messages with CRLF, LF and CR line ends mixed in one stream",
         frame_events(real, end=MIXED_ENDS)),
        ("fields", "the same messages with a keep-alive comment, id: and retry: lines and no event: line in each "
                   "event",
         frame_events(real, fields=True)),
        ("no-space", "the same messages with no space after data:", frame_events(real, space="")),
        ("two-lines", "the same messages, each over two data: lines", frame_events(real, split=True)),
        ("utf-8", "a read_note result written as UTF-8, the note's body holding U+2028",
         frame_events([read], end="\n", ascii_only=False)),
        ("cut", "the same messages on a stream that ends before the last event's blank line (a dropped connection)",
         frame_events(real, end="\n")[:-1]),
    ]


def check_sse_messages(messages_in, lab=None):
    """messages_in(stream) must return every JSON-RPC message the SSE stream carries, in order."""
    if missing(messages_in):
        not_done("define messages_in(stream) first.")
        return
    cases = streams(lab)
    for name, story, stream in cases:
        expected = messages_of(stream)
        outcome = attempt(messages_in, stream)
        if outcome.not_done:
            not_done("messages_in still raises NotImplementedError. Split the stream into lines, keep the data: "
                     "lines, and parse each event's data as JSON.")
            return
        if outcome.error:
            failed(f"messages_in raised {outcome.error_text} for {story}.", hint=_raised_hint(outcome.error, name))
            return
        got = outcome.value
        if isinstance(got, (tuple, types.GeneratorType)):
            try:
                got = list(got)
            except Exception as error:  # noqa: BLE001 - a generator runs the learner's code here
                failed(f"messages_in raised {type(error).__name__}: {error} for {story}.", hint=HINTS.get(name))
                return
        if not isinstance(got, list):
            failed(f"For {story}, messages_in returned {short(got)}; return a list of the messages, each a dict.")
            return
        if got != expected:
            _say_what_differs(story, got, expected, HINTS.get(name, "Keep every message, in the order it came."))
            return
    passed(f"messages_in read all {len(cases)} streams: the lab's own (CRLF), LF, CR and mixed line ends, comments and "
           "id:/retry: fields, data: without its space, a message over two data: lines, UTF-8 with U+2028 "
           "in a string, and a last event cut off before its blank line.")


def _say_what_differs(story, got, expected, hint):
    described = _described(got)
    if described != _described(expected):
        failed(f"For {story}, messages_in returned {described}; the stream carries {_described(expected)}.", hint=hint)
        return
    yours, theirs = _first_difference(got, expected)
    if _read_as_a_code_page(yours, theirs):
        hint = ("Each character beyond ASCII came back as two or three: the UTF-8 bytes were read as Latin-1 or "
                "cp1252. An SSE stream is always UTF-8 (the format allows no other): messages_in gets text already, "
                "and bytes of a stream are decoded with .decode(\"utf-8\").")
    failed(f"For {story}, messages_in returned {described}, but a value differs: {short(yours)} where the stream "
           f"carries {short(theirs)}.", hint=hint)


def _first_difference(got, expected):
    """The first pair of values that differ, going down through dicts and lists."""
    if type(got) is type(expected) and isinstance(got, dict) and got.keys() == expected.keys():
        return next(_first_difference(got[key], expected[key]) for key in got if got[key] != expected[key])
    if type(got) is type(expected) and isinstance(got, list) and len(got) == len(expected):
        return next(_first_difference(a, b) for a, b in zip(got, expected) if a != b)
    return got, expected


def _read_as_a_code_page(yours, theirs):
    if not (isinstance(yours, str) and isinstance(theirs, str)):
        return False
    for code_page in ("latin-1", "cp1252"):
        try:
            if theirs.encode("utf-8").decode(code_page) == yours:
                return True
        except UnicodeDecodeError:
            continue
    return False


def _raised_hint(error, name):
    """A name the code never defined is the code's own mistake, whatever the stream: say so before any framing hint."""
    if isinstance(error, (NameError, ImportError)):
        return (f"{type(error).__name__} comes from your code, not from this stream: a name it uses is not defined "
                "or imported in the notebook (run the cell with the imports, or add the import to your function).")
    return HINTS.get(name)


def _described(messages):
    if not isinstance(messages, list):
        return short(messages)
    kinds = [message.get("method") or f"the reply to {message.get('id')!r}" if isinstance(message, dict)
             else short(message, 30) for message in messages]
    if not kinds:
        return "no messages"
    return f"{len(messages)} message{'s' if len(messages) != 1 else ''} ({', '.join(kinds[:4])}" + \
        (", ..." if len(kinds) > 4 else "") + ")"
