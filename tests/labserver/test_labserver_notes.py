"""NoteStore: safe ids, no symlinks, atomic writes, deterministic search, seeding."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from labserver import notes
from labserver.notes import InvalidNoteId, NoteExists, NoteNotFound, NoteStore, check_note_id, seed_folder, slugify

BAD_IDS = [
    "../escape",
    "..",
    "a/b",
    "/etc/passwd",
    "a\\b",
    "note\x00",
    "%2e%2e%2fescape",
    "a%2Fb",
    "a\u2215b",  # division slash
    "a\uff0fb",  # fullwidth solidus
    "\uff41",  # fullwidth a
    "café",
    "Upper",
    "a--b",
    "-a",
    "a-",
    "",
    "a" * 65,
    "note\n",
    "note.md",
    "file:///etc/passwd",
]


@pytest.fixture
def store(tmp_path: Path) -> NoteStore:
    folder = tmp_path / "notes"
    seed_folder(folder)
    return NoteStore(folder)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.mark.parametrize("bad_id", BAD_IDS)
def test_unsafe_ids_are_refused_with_a_clear_message(bad_id):
    with pytest.raises(InvalidNoteId, match="not a valid note id"):
        check_note_id(bad_id)


@pytest.mark.parametrize("good_id", ["a", "spindle-density", "lab-sync-2026-01-12", "a" * 64])
def test_slug_ids_are_accepted(good_id):
    assert check_note_id(good_id) == good_id


@pytest.mark.parametrize("bad_id", BAD_IDS)
def test_refused_ids_touch_no_file(store, tmp_path, bad_id):
    outside = tmp_path / "escape.md"
    outside.write_text("outside")
    before = snapshot(tmp_path)
    for operation in (store.read_text, store.delete, lambda note_id: store.add_tag(note_id, "x")):
        with pytest.raises(InvalidNoteId):
            operation(bad_id)
    assert snapshot(tmp_path) == before


def test_a_symlinked_note_is_never_followed(store, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read or change")
    (store.folder / "leak.md").symlink_to(secret)
    assert "leak" not in store.ids()
    for operation in (store.read_text, store.delete, lambda note_id: store.add_tag(note_id, "x")):
        with pytest.raises(InvalidNoteId, match="symbolic link"):
            operation("leak")
    assert secret.read_text() == "do not read or change"
    assert (store.folder / "leak.md").is_symlink()


def test_create_writes_front_matter_and_reads_back(store):
    note = store.create("Spindles in naps, v2!", "Short naps have spindles too.", ["Naps", "eeg"], "2026-03-01")
    assert note.id == "spindles-in-naps-v2"
    text = (store.folder / "spindles-in-naps-v2.md").read_text()
    assert text.startswith("---\nid: spindles-in-naps-v2\ntitle: Spindles in naps, v2!\ntags: [naps, eeg]\n")
    again = store.get("spindles-in-naps-v2")
    assert (again.title, again.tags, again.date, again.body) == (
        "Spindles in naps, v2!",
        ["naps", "eeg"],
        "2026-03-01",
        "Short naps have spindles too.",
    )


def test_create_refuses_an_existing_id_and_keeps_the_note(store):
    before = (store.folder / "welcome.md").read_bytes()
    with pytest.raises(NoteExists, match="already exists"):
        store.create("Welcome", "overwrite attempt", [], "2026-03-01")
    assert (store.folder / "welcome.md").read_bytes() == before


@pytest.mark.parametrize("title", ["Index", "!!!"])
def test_create_refuses_reserved_or_empty_ids(store, title):
    with pytest.raises(InvalidNoteId):
        store.create(title, "body", [], "2026-03-01")


def test_a_failed_write_leaves_the_old_note_and_no_temp_file(store, monkeypatch):
    before = snapshot(store.folder)

    def broken_replace(source, target):
        raise OSError("disk pulled out")

    monkeypatch.setattr(notes.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk pulled out"):
        store.add_tag("welcome", "broken")
    assert snapshot(store.folder) == before
    assert not [name for name in os.listdir(store.folder) if name.endswith(".tmp")]


def test_writes_fsync_a_sibling_temp_file_before_the_rename(store, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(notes.os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])

    def recording_replace(source, target):
        events.append(("replace", Path(source).parent, Path(target).name))
        real_replace(source, target)

    monkeypatch.setattr(notes.os, "replace", recording_replace)
    store.add_tag("welcome", "onboarding")
    assert events[0] == "fsync"
    assert events[1] == ("replace", store.folder, "welcome.md")
    assert "onboarding" in store.get("welcome").tags


def test_unknown_note_says_how_to_find_ids(store):
    with pytest.raises(NoteNotFound, match="No note with id 'nope'. Use search_notes to find ids."):
        store.get("nope")


def test_delete_removes_only_that_note(store):
    others = set(store.ids()) - {"welcome"}
    store.delete("welcome")
    assert set(store.ids()) == others


def test_search_ranks_title_over_tags_over_body_and_breaks_ties_by_id(store):
    store.create("Alpha zeta", "nothing here", [], "2026-03-01")
    store.create("Beta", "zeta zeta", [], "2026-03-01")
    store.create("Gamma", "other", ["zeta"], "2026-03-01")
    store.create("Delta", "zeta once", ["misc"], "2026-03-01")
    store.create("Aardvark", "zeta once", [], "2026-03-01")
    hits = store.search("Zeta", limit=10)
    assert [(hit.id, hit.score) for hit in hits] == [
        ("alpha-zeta", 3),
        ("beta", 2),
        ("gamma", 2),
        ("aardvark", 1),
        ("delta", 1),
    ]
    assert store.search("zeta", limit=2) == hits[:2]
    assert store.search("   ") == []


def test_search_snippet_is_the_line_that_matches(store):
    hit = store.search("threshold", limit=1)[0]
    assert hit.id == "spindle-density"
    assert "threshold" in hit.snippet.lower()


def test_slugify_makes_ids_from_titles():
    assert slugify("  TMR pilot: cueing (v2)  ") == "tmr-pilot-cueing-v2"
    assert slugify("Ünïcode — only") == "n-code-only"


def test_seed_copies_samples_into_an_empty_folder_only(tmp_path):
    folder = tmp_path / "fresh"
    seed_folder(folder)
    assert "welcome" in NoteStore(folder).ids() and len(NoteStore(folder).ids()) >= 10

    own = tmp_path / "own"
    own.mkdir()
    (own / "mine.md").write_text("---\nid: mine\ntitle: Mine\n---\nhello\n")
    seed_folder(own)
    assert NoteStore(own).ids() == ["mine"]
