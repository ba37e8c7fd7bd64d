"""Exercise 19: three differences between a session the SDK's client sent and one written by hand.

Both sessions are on Streamable HTTP. A finding is `("method", name)`: a method one session
sends and the other does not; `("header", name)`: an HTTP header one session's requests
carry and the other's never do (names compared case-insensitively, as HTTP does); or
`("field", method, path)`: a place (a list of keys) where the first frames of `method` in
the two sessions differ. Ids do not count: every client numbers its own requests. Two
findings on the same path, or one path inside the other, are one difference, under one method or two:
a field the client writes into every request differs in each of them.
"""

import json

from .attempt import attempt
from .verdict import failed, not_done, passed

_MISSING = object()


def _methods(transcript):
    return [e.method for e in transcript if e.method and e.up]


def _first_frame(transcript, method):
    for exchange in transcript:
        if exchange.method == method and exchange.up_payloads:
            try:
                return json.loads(exchange.up_payloads[0])
            except ValueError:
                return None
    return None


def _header_names(transcript):
    names = set()
    for exchange in transcript:
        head = exchange.up.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")[1:]
        names.update(line.split(":", 1)[0].strip().lower() for line in head if ":" in line)
    return names


def _at(frame, path):
    for key in path:
        if not isinstance(frame, dict) or key not in frame:
            return _MISSING
        frame = frame[key]
    return frame


def _shown(value):
    return "(absent)" if value is _MISSING else json.dumps(value)


def _judge(finding, real, hand):
    """None when the finding is a real difference, else what is wrong with it."""
    if not isinstance(finding, (tuple, list)) or not finding or finding[0] not in ("method", "header", "field"):
        return f"{finding!r} is none of (\"method\", name), (\"header\", name), (\"field\", method, path)", None
    if finding[0] == "header":
        if len(finding) != 2 or not isinstance(finding[1], str):
            return f"{finding!r}: a header finding is (\"header\", name)", None
        name = finding[1].lower()
        in_real, in_hand = name in _header_names(real), name in _header_names(hand)
        if in_real == in_hand:
            return (f"the header {finding[1]!r} is sent in {'both sessions' if in_real else 'neither session'}",
                    "list the header names of one request from each session, side by side")
        return None, None
    if finding[0] == "method":
        if len(finding) != 2 or not isinstance(finding[1], str):
            return f"{finding!r}: a method finding is (\"method\", name)", None
        name = finding[1]
        in_real, in_hand = name in _methods(real), name in _methods(hand)
        if in_real == in_hand:
            return (f"{name!r} is sent in {'both sessions' if in_real else 'neither session'}",
                    "compare the method column of the two transcripts")
        return None, None
    if len(finding) != 3 or not isinstance(finding[1], str) or not isinstance(finding[2], (tuple, list)) \
            or not finding[2]:
        return f"{finding!r}: a field finding is (\"field\", method, [key, key, ...])", None
    method, path = finding[1], list(finding[2])
    if not all(isinstance(key, str) for key in path):
        return (f"{finding!r}: every key in a field's path is a string, as in a JSON object",
                "write the path as the keys you read from the outside in, e.g. [\"params\", ...]")
    if path == ["id"]:
        return ("the id is a counter each client keeps, not a difference in what it says",
                "look inside params, or at which methods each session sends")
    frames = {"real": _first_frame(real, method), "hand": _first_frame(hand, method)}
    absent = [side for side, frame in frames.items() if frame is None]
    if absent:
        return (f"the {' and '.join(absent)} session sends no {method!r} to compare",
                "pick a method both sessions send")
    values = {side: _at(frame, path) for side, frame in frames.items()}
    if values["real"] == values["hand"]:
        return (f"{method} {'.'.join(map(str, path))} is {_shown(values['real'])} in both sessions",
                "print the two frames one above the other and read them key by key")
    return None, None


def _key(finding):
    if finding[0] == "field":
        return ("field", tuple(finding[2]))
    return (finding[0], finding[1].lower() if finding[0] == "header" else finding[1])


def _same(a, b):
    if a[0] != b[0]:
        return False
    if a[0] != "field":
        return a == b
    shorter, longer = sorted((a[1], b[1]), key=len)
    return longer[:len(shorter)] == shorter


def _named(finding):
    if finding[0] == "field":
        return f"{finding[1]} {'.'.join(finding[2])}"
    return f"{finding[0]} {finding[1]}"


def check_three_differences(three_differences, real, hand):
    outcome = attempt(three_differences)
    if outcome.not_done:
        not_done("three_differences() still raises NotImplementedError")
        return
    if outcome.error is not None:
        failed(f"three_differences() raised {outcome.error_text}", hint="run it on its own and read the traceback")
        return
    findings = outcome.value
    if not isinstance(findings, (list, tuple)):
        failed(f"three_differences() returned a {type(findings).__name__}, not a list of three findings",
               hint="one tuple per difference, three in a list")
        return
    if len(findings) != 3:
        failed(f"you returned {len(findings)} findings; the task asks for three",
               hint="one tuple per difference, three in a list")
        return
    for finding in findings:
        problem, hint = _judge(finding, real, hand)
        if problem:
            failed(problem, hint=hint)
            return
    keys = [_key(finding) for finding in findings]
    for index, first in enumerate(keys):
        for later, second in enumerate(keys[index + 1:], start=index + 1):
            if _same(first, second):
                methods = {findings[index][1], findings[later][1]} if first[0] == "field" else set()
                if len(methods) == 2:
                    why = f"the client writes that field into {' and '.join(sorted(methods))} alike, so it counts once"
                elif first == second:
                    # A header in another case, or the very same finding again: a repeat, not a nested field.
                    why = f"the same {first[0]} named twice counts once"
                else:
                    why = "a field and the fields inside it count once"
                failed(f"two findings are one difference: {_named(findings[index])} and {_named(findings[later])}",
                       hint=f"{why}; find something else that differs")
                return
    shown = "; ".join(f"{k[0]} {'.'.join(map(str, k[1])) if k[0] == 'field' else k[1]}" for k in sorted(keys))
    passed(f"three real differences: {shown}")
