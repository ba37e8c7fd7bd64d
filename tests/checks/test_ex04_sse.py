"""Exercise 04, task 2: messages out of an SSE stream. Right answers pass; the usual shortcuts fail and say why."""

import json
import re

import pytest

import checks
from checks.ex04_sse import messages_of, streams
from mcpwire import sse

LINE_END = re.compile(r"\r\n|\r|\n")


def by_lines(stream, *, split=LINE_END.split, keep_space=False, join=True, drop_tail=True):
    messages, data = [], []
    lines = split(stream)
    for line in lines[:-1] if drop_tail else lines:  # what follows the last line end is not a line yet
        if line == "":
            if data:
                messages.extend([json.loads("\n".join(data))] if join else [json.loads(part) for part in data])
            data = []
        elif line.startswith("data:"):
            value = line[len("data:"):]
            data.append(value if keep_space or not value.startswith(" ") else value[1:])
    return messages


def with_the_toolkit(stream):
    return [json.loads(event.data) for event in sse.parse(stream)]


def by_regex(stream):
    found = []
    for event in re.sub(r"\r\n|\r", "\n", stream).split("\n\n")[:-1]:  # the last piece never got its blank line
        data = re.findall(r"^data: ?(.*)$", event, re.M)
        if data:
            found.append(json.loads("\n".join(data)))
    return found


def the_lessons_one_liner(stream):
    return [json.loads(line.removeprefix("data: ")) for line in LINE_END.split(stream) if line.startswith("data: ")]


def only_message_events(stream):
    messages, after_event_line = [], False
    for line in LINE_END.split(stream):
        if line == "event: message":
            after_event_line = True
        elif line.startswith("data:") and after_event_line:
            messages.append(json.loads(line[len("data:"):]))
            after_event_line = False
    return messages


def stub(stream):
    raise NotImplementedError("your code here")


def as_a_generator(stream):
    yield from by_lines(stream)


def flushing_at_the_end(stream):
    # The pieces re.split leaves, each taken for a line: the empty piece after the last line end ends an event.
    return by_lines(stream + "\n")


def split_at_doubled_line_ends(stream):
    """A blind learner run: events cut at a doubled line end of one kind, which a mixed stream never writes."""
    found = []
    for event in re.split(r"\r\n\r\n|\n\n|\r\r", stream)[:-1]:
        data = [line[len("data:"):].removeprefix(" ") for line in LINE_END.split(event) if line.startswith("data:")]
        if data:
            found.append(json.loads("\n".join(data)))
    return found


def by_lines_with_a_state_machine(stream):
    """Right, written differently: a field parser that keeps the event's type and skips events of no data."""
    messages, data, kind = [], [], "message"
    for line in LINE_END.split(stream)[:-1]:
        if not line:
            if data and kind == "message":
                messages.append(json.loads("\n".join(data)))
            data, kind = [], "message"
            continue
        field, colon, value = line.partition(":")
        value = value[1:] if colon and value.startswith(" ") else value
        if field == "data":
            data.append(value)
        elif field == "event":
            kind = value
    return messages


def learner_cell(source):
    """A learner's function defined from its cell's text, in a namespace that has only json (the re import is gone)."""
    namespace = {"json": json}
    exec(source, namespace)  # noqa: S102 - the text is this file's own
    return namespace["messages_in"]


FORGOT_THE_IMPORT = learner_cell(
    "def messages_in(stream):\n"
    "    return [json.loads(line[5:].strip()) for line in re.split(r'\\r\\n|\\r|\\n', stream) if line.startswith('data:')]\n"
)


RIGHT = [
    pytest.param(by_lines, id="line-by-line"),
    # Borderline, accepted: joined with "" the data lines lose a newline that is whitespace to JSON, so no JSON
    # payload tells "" from the format's "\n" (a JSON text never holds a raw newline inside a string).
    pytest.param(lambda s: [json.loads("".join(re.findall(r"^data: ?(.*)$", event, re.M)))
                            for event in re.sub(r"\r\n|\r", "\n", s).split("\n\n")[:-1] if "data:" in event],
                 id="data-lines-joined-with-nothing"),
    pytest.param(as_a_generator, id="a-generator"),
    pytest.param(with_the_toolkit, id="mcpwire-sse"),
    pytest.param(by_regex, id="regex-per-event"),
    pytest.param(by_lines_with_a_state_machine, id="field-parser-with-event-type"),
]
WRONG = [
    pytest.param(the_lessons_one_liner, ("no space after data:", "optional"), id="the-lessons-one-liner"),
    pytest.param(lambda s: by_lines(s, split=str.splitlines, drop_tail=False), ("U+2028", "split at CR and LF only"),
                 id="splitlines"),
    pytest.param(lambda s: by_lines(s, split=lambda t: t.split("\r\n")), ("lines ending in LF", "split at all three"),
                 id="crlf-only"),
    pytest.param(lambda s: by_lines(s, split=lambda t: t.split("\n")), ("lab's own reply", "ends every line in CRLF"),
                 id="lf-only"),
    pytest.param(lambda s: by_lines(s, join=False), ("each over two data: lines", "join them with a newline"),
                 id="data-lines-parsed-alone"),
    pytest.param(lambda s: [json.loads(line.split(":", 1)[1]) for line in LINE_END.split(s)
                            if line and not line.startswith("event")],
                 ("keep-alive comment", "skip comments"), id="every-field-taken-for-data"),
    pytest.param(only_message_events, ("no event: line", "a \"message\" event all the same"),
                 id="only-after-event-message"),
    pytest.param(flushing_at_the_end, ("ends before the last event's blank line", "is not dispatched"),
                 id="an-unfinished-event-returned"),
    pytest.param(lambda s: json.dumps(by_lines(s)), ("return a list of the messages",), id="a-json-string"),
    pytest.param(lambda s: by_lines(s)[-1:], ("returned 1 message", "the stream carries 14 messages"),
                 id="only-the-result"),
    pytest.param(lambda s: [json.dumps(m) for m in by_lines(s)], ("the stream carries 14 messages",),
                 id="messages-left-as-text"),
    pytest.param(split_at_doubled_line_ends, ("mixed in one stream", "returned no messages", "split the text into "
                                              "lines at CRLF, LF and CR first"), id="events-cut-at-doubled-line-ends"),
    # A blind learner run: the text read back through Latin-1 was told about str.splitlines.
    pytest.param(lambda s: by_lines(s.encode("utf-8").decode("latin-1")),
                 ("holding U+2028", "a value differs", "read as Latin-1", "always UTF-8"), id="utf-8-read-as-latin-1"),
    # Issue 31: a removed import was answered with a hint about CRLF line ends.
    pytest.param(FORGOT_THE_IMPORT, ("raised NameError: name 're' is not defined", "comes from your code"),
                 id="the-import-removed"),
]


def test_every_stream_carries_real_lab_messages():
    named = {name: stream for name, _, stream in streams()}
    lab = messages_of(named["lab"])
    assert [m.get("method") for m in lab[:-1]] == ["notifications/progress"] * (len(lab) - 1)
    assert lab[-1]["id"] == "reindex-call" and lab[-1]["result"]["resultType"] == "complete"
    assert all(end in named["mixed"] for end in ("\n\r", "\r\n\r", "\n\r\n"))
    for name in ("lf", "cr", "mixed", "fields", "no-space", "two-lines"):
        assert messages_of(named[name]) == lab, name
    (read,) = messages_of(named["utf-8"])
    assert "\u2028" in named["utf-8"] and "\u2028" in read["result"]["structuredContent"]["body"]
    assert messages_of(named["cut"]) == lab[:-1] and named["cut"].endswith(json.dumps(lab[-1], separators=(",", ":")) + "\n")


@pytest.mark.parametrize("work", RIGHT)
def test_right_answers_pass(verdict, http, work):
    assert verdict(checks.check_sse_messages, work, http).startswith("✓ messages_in read all 9 streams")


@pytest.mark.parametrize("work, phrases", WRONG)
def test_wrong_answers_name_their_mistake(verdict, http, work, phrases):
    out = verdict(checks.check_sse_messages, work, http)
    assert out.startswith("✗") and all(phrase in out for phrase in phrases), out


@pytest.mark.parametrize("work", [None, stub])
def test_an_unfinished_task_is_not_done_yet(verdict, http, work):
    assert verdict(checks.check_sse_messages, work, http).startswith("not done yet")
