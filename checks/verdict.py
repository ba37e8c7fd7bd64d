"""How a check reports: one line when the work is right, a short explanation when it is not.

Checks print instead of raising, so a learner never has to read a traceback to find out
what is wrong. Everything printed is deterministic: the solutions compare it under nbval.
"""

import json


def passed(summary):
    print(f"✓ {summary}")


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


def not_done(what):
    print(f"not done yet: {what}")


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
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters in all)"


def said(message):
    """server_said on one line (pydantic's messages span several)."""
    return " ".join(server_said(message).split())
