"""No lesson passes an SDK 2.3.0 habit off as the spec's rule, and every "SDK does" note names SDK 2.3.0.

SDK_HABITS lists behaviours the course shows in SDK 2.3.0 (or in the lab built on it) that the spec does not
require. A lesson may describe each one, but two things must hold:
- the spec's half of a "Spec says" note (its text before it first names the SDK or the lab) holds none of them;
- a sentence that describes one and speaks of the spec also says whose behaviour it is (SDK 2.3.0, the SDK, the lab).
A learner who reads "the spec says X" for one of these goes on to expect X from every server.
"""

import ast
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


# One claim, one truth: a rule the course states in more than one place. Each row is (the claim, the pattern of its
# right wording, the pattern of a wrong wording, the files where it is made). Every file listed must keep the right
# wording, and no lesson, task text or listed module may hold the wrong one, listed or not (a new lesson that words
# the claim the old way fails too). Patterns match one sentence at a time, with the targets of markdown links left out.
CLAIMS = [
    ("an unknown tool's code: the 2026-07-28 schema's InvalidParamsError names -32602",
     r"unknown tool.{0,200}-32602|-32602.{0,200}unknown\s+tool",
     r"(?:the spec|it) names no code(?:,? and|;) its example uses `-32602`|spec (?:names|gives|sets) no code for an unknown tool",
     ["notebooks/05-tools-and-schemas.ipynb", "notebooks/13-build-a-host.ipynb", "notebooks/22-field-trip.ipynb",
      "notebooks/23-a-server-by-hand.ipynb", "solutions/21-mcp-apps.ipynb", "solutions/22-field-trip.ipynb"]),
    ("a bad tool argument: the tools page says isError, the schema's InvalidParamsError says -32602",
     r"tools page.{0,120}schema.{0,80}-32602|schema.{0,80}-32602.{0,120}tools page",
     r"(?:arguments?|validation errors?).{0,60}`isError`,? as the spec asks|so that is what (?:it|the spec) asks for",
     ["notebooks/05-tools-and-schemas.ipynb", "notebooks/22-field-trip.ipynb", "solutions/22-field-trip.ipynb"]),
    ("the HTTP status SDK 2.3.0 gives a -32602: 400 in a JSON reply, 200 once it has opened an SSE stream",
     r"\b400\b.{0,120}(?:as JSON|JSON reply|answers with JSON)|(?:as JSON|JSON reply|answers with JSON).{0,120}\b400\b",
     r"(?:every|all|any)(?: other)? `?-32602`?s?\b.{0,60}\b400\b|\b400\b.{0,30}\b(?:with|to|for) (?:every|all|any)(?: other)? `?-32602",
     ["notebooks/03-streamable-http-by-hand.ipynb", "notebooks/07-resources-prompts-completion.ipynb",
      "mcpwire/codes.py"]),
    ("what SDK 2.3.0 hides of an exception: not a ResourceError's text nor an MCPError's message",
     r"ResourceError.{0,300}MCPError|MCPError.{0,300}ResourceError",
     r"(?:any|every|all) exceptions? (?:other than|except|but) `?ToolError|exception other than `?ToolError`? reaches",
     ["notebooks/05-tools-and-schemas.ipynb"]),
    ("SDK 2.3.0's -32000 'Connection closed': older SDK usage the 2026-07-28 changelog grandfathers",
     r"-32000.{0,200}grandfathered|grandfathered.{0,200}-32000|existing SDK usage grandfathered",
     r"SDK 2\.3\.0 is a new implementation",
     ["notebooks/01-json-rpc-over-stdio.ipynb"]),
]
CLAIM_SOURCES = sorted({*(str(p.relative_to(ROOT)) for folder in ("notebooks", "solutions")
                          for p in (ROOT / folder).glob("*.ipynb")),
                        *(place for *_, places in CLAIMS for place in places)})
LINK_TARGET = re.compile(r"\]\([^)\s]*\)")


def prose(path):
    """The text a reader meets in a file: a notebook's markdown cells, or a module's string constants."""
    if path.endswith(".py"):
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    return markdown_cells(path)


def claim_sentences(texts):
    return [sentence for text in texts for sentence in sentences(LINK_TARGET.sub("]", text))]


def claim_problems(claim, texts_by_path):
    """What breaks one claim's agreement in these files: a listed place without the right wording, a wrong wording
    anywhere."""
    name, right, wrong, places = claim
    found = []
    for path, texts in texts_by_path.items():
        said = claim_sentences(texts)
        if path in places and not any(re.search(right, sentence, re.I) for sentence in said):
            found.append(f"{path} no longer says {name!r} the right way")
        found += [f"{path} words {name!r} the wrong way: {sentence[:160]!r}"
                  for sentence in said if re.search(wrong, sentence, re.I)]
    return found


@pytest.mark.parametrize("claim", CLAIMS, ids=[claim[0] for claim in CLAIMS])
def test_every_place_states_the_claim_alike(claim):
    problems_found = claim_problems(claim, {path: prose(path) for path in CLAIM_SOURCES})
    assert not problems_found, "\n".join(problems_found)


# Real text of each place, changed back to a wording the course once had: each must be caught.
CLAIM_MUTATIONS = [
    ("the unknown tool's code denied again",
     0, "notebooks/05-tools-and-schemas.ipynb",
     "The schema names the code: its [`InvalidParamsError`]",
     "The spec names no code; its example uses `-32602`. Its [`InvalidParamsError`]"),
    ("a listed place that drops the claim",
     2, "notebooks/03-streamable-http-by-hand.ipynb",
     "with `400` when it answers with JSON, as it did in this lesson;",
     "with `400`;"),
    ("the 400 promised for every -32602",
     2, "notebooks/07-resources-prompts-completion.ipynb",
     "The 400 is SDK 2.3.0's mapping for a reply it sends as JSON, as here: 400 with a `-32602`",
     "The 400 is SDK 2.3.0's mapping: it sends 400 with every `-32602`"),
    ("explain() promising 400 for every other cause",
     2, "mcpwire/codes.py",
     "the spec sets none and SDK 2.3.0 answers 400 in a JSON reply, 200 once it has opened an SSE stream",
     "the spec sets none and SDK 2.3.0 answers 400"),
    ("every exception but ToolError said to be hidden",
     3, "notebooks/05-tools-and-schemas.ipynb",
     "an unexpected exception (a `ValueError`, say) reaches the client with its text hidden, but a `ToolError`'s or a "
     "`ResourceError`'s text reaches it after the SDK's prefix",
     "an exception other than `ToolError` reaches the client with its text hidden."),
    ("the SDK's -32000 told as a new implementation ignoring the SHOULD NOT",
     4, "notebooks/01-json-rpc-over-stdio.ipynb",
     "SDK 2.3.0 writes its own `-32000` \"Connection closed\" onto the wire, as above. That use is older than the policy",
     "SDK 2.3.0 is a new implementation and still writes its own `-32000` \"Connection closed\" onto the wire, as above. "
     "That use is older than the policy"),
    ("a bad argument's isError told as the spec's one answer",
     1, "notebooks/05-tools-and-schemas.ipynb",
     "(the tools page's reading; the schema's is `-32602`)",
     "(as the spec asks)"),
]


@pytest.mark.parametrize("claim_index, path, old, new", [case[1:] for case in CLAIM_MUTATIONS],
                         ids=[case[0] for case in CLAIM_MUTATIONS])
def test_a_place_that_breaks_the_agreement_fails(claim_index, path, old, new):
    claim = CLAIMS[claim_index]
    texts = prose(path)
    assert sum(text.count(old) for text in texts) == 1, f"the text to mutate is no longer in {path}: {old!r}"
    assert not claim_problems(claim, {path: texts}), "the place itself must agree before its mutant can show anything"
    assert claim_problems(claim, {path: [text.replace(old, new) for text in texts]})
