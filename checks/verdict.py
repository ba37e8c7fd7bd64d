"""How a check reports: one line when the work is right, a short explanation when it is not.

Checks print instead of raising, so a learner never has to read a traceback to find out
what is wrong. Everything printed is deterministic: the solutions compare it under nbval.
"""

import json
import os
import sys

# Set by the grader (checks/grade.py): a file that gets one JSON line per verdict, beside what is printed.
VERDICT_LOG = "CHECKS_VERDICT_LOG"
_unasked = []  # verdicts since the last raise_unless_passed(), for nbgrader's check cells


def passed(summary):
    print(f"✓ {summary}")
    _record("pass", f"✓ {summary}")


def failed(problem, *, server=None, hint=None, more=None):
    """What is wrong, what the server answered (or would answer), and what to try.

    Hints come in two layers: `hint` nudges (where to look), `more` is the specific one,
    printed on its own labelled line so a learner can stop reading before it.
    """
    lines = [f"✗ {problem}"]
    if server:
        lines.append(f"  The server answered: {server}")
    if hint:
        lines.append(f"  Hint: {hint}")
    if more:
        lines.append(f"  If you are still stuck: {more}")
    print("\n".join(lines))
    _record("fail", "\n".join(lines))


def not_done(what):
    print(f"not done yet: {what}")
    _record("not done", f"not done yet: {what}")


def raise_unless_passed():
    """For nbgrader, whose check cells score by raising: raise if a check since the last call did not pass."""
    verdicts, _unasked[:] = list(_unasked), []
    if not verdicts or any(verdict != "pass" for verdict in verdicts):
        raise AssertionError("a check above did not pass (or did not run): read its message")


def _record(verdict, message):
    """Remember the verdict; with CHECKS_VERDICT_LOG set, also append it as a JSON line naming the check."""
    _unasked.append(verdict)
    path = os.environ.get(VERDICT_LOG)
    if not path:
        return
    check = next((frame.f_code.co_name for frame in _frames() if frame.f_code.co_name.startswith("check_")
                  and frame.f_globals.get("__name__", "").startswith("checks.")), "?")
    try:
        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps({"check": check, "verdict": verdict, "message": message}, ensure_ascii=False) + "\n")
    except OSError:
        pass  # a learner's notebook may have removed the folder; the printed verdict still stands


def _frames():
    """From the outermost caller inwards, so a check that calls another is named by the one the learner called."""
    frame, frames = sys._getframe(2), []
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    return reversed(frames)


def server_said(message):
    """A reply message in a few words: its error code and message, or the kind of result."""
    if not isinstance(message, dict):
        return f"something that is not a JSON-RPC message: {short(message)}"
    error = message.get("error")
    if isinstance(error, dict):
        words = f"error {error.get('code')} {error.get('message')!r}"
        data = error.get("data")
        if isinstance(data, dict) and "supported" in data:
            words += f" with data.supported {data['supported']}"
        return words
    result = message.get("result")
    if isinstance(result, dict) and result.get("isError"):
        texts = [c.get("text", "") for c in result.get("content", []) if isinstance(c, dict)]
        return f"a tool error result: {short(' '.join(texts))}"
    if isinstance(result, dict):
        return f"a result (resultType {result.get('resultType', 'missing')!r})"
    return f"a message with neither result nor error: {short(message)}"


def short(value, limit=160):
    """A value as compact text, cut to `limit` characters."""
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown(value, limit=160):
    """A value as Python writes it (quotes included, so "403" and 403 differ), cut with its full length said."""
    try:
        text = repr(value)
    except Exception as error:  # a learner's own class may break its __repr__; the verdict must still print
        return f"a {type(value).__name__} whose repr raised {type(error).__name__}"
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters in all)"


def said(message):
    """server_said on one line (pydantic's messages span several)."""
    return " ".join(server_said(message).split())
