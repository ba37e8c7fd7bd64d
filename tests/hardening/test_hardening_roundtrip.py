"""Whatever a learner types as a note, reading it back gives what create_note acknowledged.

Property tests, first on the store (many examples, fast), then through the real
server over stdio (fewer examples). Line endings are the one thing normalised:
a note is a text file, read back with "\\n" line ends.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from lab_harness import check_result, stdio_lab, tool_call

from labserver.notes import NoteError, NoteStore, seed_folder

# Titles and bodies: any text, with line breaks of every kind, front-matter lookalikes and NULs mixed in.
LINE_BREAKS = st.sampled_from(["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029"])
TRICKY = st.sampled_from(["---", "tags: [injected]", "title: other", "date: 1999-01-01", "\x00", ": ", "[", "]"])
TEXT = st.lists(st.one_of(st.text(max_size=20), LINE_BREAKS, TRICKY), max_size=8).map("".join)
TITLE = st.tuples(st.from_regex(r"[A-Za-z0-9]{1,12}", fullmatch=True), TEXT).map("".join)
TAGS = st.lists(st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8})?", fullmatch=True), max_size=4)


def as_read_back(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").strip("\n")


def one_line(title: str) -> str:
    return " ".join(title.split())


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(title=TITLE, body=TEXT, tags=TAGS)
def test_a_created_note_reads_back_as_acknowledged(tmp_path, title, body, tags):
    store = NoteStore(tmp_path)
    try:
        acknowledged = store.create(title, body, tags, "2026-03-01")
    except NoteError:
        assume(False)  # an id made twice, or a reserved one: refused, nothing to read back
    again = store.get(acknowledged.id)
    assert (again.title, again.tags, again.date) == (acknowledged.title, tags, "2026-03-01")
    assert again.title == one_line(title)
    assert again.body == as_read_back(body)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    folder = tmp_path_factory.mktemp("notes")
    seed_folder(folder)
    with stdio_lab("--notes", str(folder)) as server:
        yield server


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(title=TITLE, body=TEXT, tags=TAGS)
def test_create_note_then_read_note_over_the_wire(lab, title, body, tags):
    created = check_result("tools/call", lab.call(tool_call("create", "create_note", {"title": title, "body": body, "tags": tags})))
    assume(not created["isError"])
    acknowledged = created["structuredContent"]
    read = check_result("tools/call", lab.call(tool_call("read", "read_note", {"note_id": acknowledged["id"]})))
    note = read["structuredContent"]
    assert (note["title"], note["tags"], note["body"]) == (acknowledged["title"], tags, as_read_back(body))
    assert note["title"] == one_line(title)
