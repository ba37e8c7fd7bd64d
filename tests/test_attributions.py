"""No lesson passes an SDK 2.3.0 habit off as the spec's rule, and every "SDK does" note names SDK 2.3.0.

SDK_HABITS lists behaviours the course shows in SDK 2.3.0 (or in the lab built on it) that the spec does not
require. A lesson may describe each one, but two things must hold:
- the spec's half of a "Spec says" note (its text before it first names the SDK or the lab) holds none of them;
- a sentence that describes one and speaks of the spec also says whose behaviour it is (SDK 2.3.0, the SDK, the lab).
A learner who reads "the spec says X" for one of these goes on to expect X from every server.
"""

import itertools
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "notebooks").glob("*.ipynb"))

# (the habit, how lessons write it): each pattern names the behaviour itself, not a rule it is compared with.
SDK_HABITS = [
    ("an open request answered -32000 when the connection closes", r"Connection closed"),
    ("a cancelled legacy request still answered, with -32800", r"-32800"),
    ("a foreign Host refused with 421", r"\b421\b"),
    ("an unknown tool answered as an isError result", r"Unknown tool: "),
    ("the session id echoed on every legacy reply", r"session id comes back on the reply"),
    ("the server counting its own ids from 1", r"server starts its own count at 1"),
    ("HTTP routed on the version header alone", r"\broutes? (?:\w+ )?(?:on|by) the (?:version )?header alone"),
    ("a process refusing initialize after a modern request", r"refuses a later `initialize`"),
    ("a stdio process's era fixed by its first request", r"first request (?:a process reads )?decides which era"),
    ("a POSTed modern cancel accepted with 202 and ignored", r"accepts (?:the POST|one) with `202`"),
    ("-32601 carrying the method name as data", r'"data":"ping"'),
    ("session ids written as 32 hex digits", r"32 hex digits"),
]
SPEC_NOTE = re.compile(r"\*\*Spec says")
SDK_DOES = re.compile(r"\*\*Spec says / SDK does")
SPEAKS_OF_SPEC = re.compile(r"\bspec(?:'s|ification)?\b|\bMCP (?:requires|says|asks)\b", re.I)
OWNER = re.compile(r"\bSDK\b|\bthe lab\b|\blab's\b|\blab server\b", re.I)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(*\"])")


def markdown_cells(path):
    return [cell.source for cell in nbformat.read(ROOT / path, as_version=4).cells if cell.cell_type == "markdown"]


def notes(source):
    """Each "Spec says" note in a markdown cell, as one line: its blockquote, or its paragraph when it is not quoted."""
    found = []
    for paragraph in re.split(r"\n\s*\n(?!>)", source):
        lines = paragraph.splitlines()
        start = next((i for i, line in enumerate(lines) if SPEC_NOTE.search(line)), None)
        if start is None:
            continue
        body = lines[start:]
        if body[0].lstrip().startswith(">"):
            body = list(itertools.takewhile(lambda line: line.lstrip().startswith(">"), body))
        found.append(" ".join(line.lstrip("> ").strip() for line in body))
    return found


def sentences(source):
    text = " ".join(line.lstrip("> ").strip() for line in source.splitlines())
    return [s for s in SENTENCE_END.split(text) if s]


def habits_in(text):
    return [habit for habit, pattern in SDK_HABITS if re.search(pattern, text)]


def problems(cells):
    """(what is wrong, the note or sentence it is wrong in) for a lesson's markdown cells."""
    found = []
    for index, source in enumerate(cells):
        for note in notes(source):
            owner = OWNER.search(note[len("**Spec says"):])
            spec_half = note if owner is None else note[:len("**Spec says") + owner.start()]
            found += [(f"markdown cell {index}: the spec's half of a note describes {habit}", note)
                      for habit in habits_in(spec_half)]
            if SDK_DOES.search(note) and "SDK 2.3.0" not in note:
                found.append((f"markdown cell {index}: a \"Spec says / SDK does\" note that never names SDK 2.3.0", note))
        for sentence in sentences(source):
            if SPEAKS_OF_SPEC.search(sentence) and not OWNER.search(sentence):
                found += [(f"markdown cell {index}: {habit} is told as the spec's", sentence) for habit in habits_in(sentence)]
    return found


@pytest.mark.parametrize("path", LESSONS)
def test_no_sdk_habit_is_told_as_the_spec(path):
    found = [f"{problem}: {text[:160]!r}" for problem, text in problems(markdown_cells(path))]
    assert not found, "\n".join(found)


def test_every_habit_in_the_table_is_taught_somewhere():
    # A pattern that matches no lesson checks nothing: the wording moved, and the table must follow it.
    text = "\n".join(source for path in LESSONS for source in markdown_cells(path))
    assert not [habit for habit, pattern in SDK_HABITS if not re.search(pattern, text)]


# Real lesson text, changed the way a careless edit would change it: each must be caught.
MUTATIONS = [
    ("the SDK's answer to an open listen, moved into the spec's half",
     "notebooks/10-notifications-progress-subscriptions.ipynb",
     "SDK 2.3.0, when its stdin closes with a listen open, does neither: it answers",
     "The spec says a server whose stdin closes with a listen open answers"),
    ("the echoed session id credited to the spec",
     "notebooks/11-the-legacy-era.ipynb",
     "(SDK 2.3.0's habit: the spec has the server assign it on",
     "(as the spec asks: the server assigns it on"),
    ("a Spec says / SDK does note that lost its SDK",
     "notebooks/13-build-a-host.ipynb",
     "SDK 2.3.0 answers with a normal result instead",
     "A server answers with a normal result instead"),
    ("the 421 told as the spec's",
     "notebooks/14-security-on-the-wire.ipynb",
     "SDK 2.3.0 checks `Host` before `Origin`, so a rebound request gets 421",
     "The spec checks `Host` before `Origin`, so a rebound request gets 421"),
]


@pytest.mark.parametrize("path, old, new", [case[1:] for case in MUTATIONS], ids=[case[0] for case in MUTATIONS])
def test_a_mutated_lesson_fails(path, old, new):
    cells = markdown_cells(path)
    assert sum(source.count(old) for source in cells) == 1, f"the text to mutate is no longer in {path}: {old!r}"
    assert not problems(cells), "the lesson itself must pass before its mutant can show anything"
    assert problems([source.replace(old, new) for source in cells])
