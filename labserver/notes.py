"""The notes folder: Markdown files with a small front matter, read and written safely.

A note id names exactly one file, `<id>.md`, directly inside the folder. Ids are
checked before any path is built, symlinks are never followed, and every write
goes to a temporary file that replaces the note in one atomic rename.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import threading
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, Field

NOTE_ID_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*", re.ASCII)
MAX_ID_LENGTH = 64
RESERVED_IDS = frozenset({"index", "attachments"})  # would clash with the fixed notes:// resources
SAMPLE_NOTES = "sample_notes"


class NoteError(Exception):
    """A note operation that cannot be done; the message is written for the model."""


class InvalidNoteId(NoteError):
    pass


class NoteNotFound(NoteError):
    pass


class NoteExists(NoteError):
    pass


class Note(BaseModel):
    id: str = Field(description="The note id, also its file name without .md.")
    title: str = Field(description="The note title.")
    tags: list[str] = Field(default=[], description="Tags, lowercase words joined by hyphens.")
    date: str = Field(default="", description="Date written, YYYY-MM-DD.")
    body: str = Field(default="", description="The note text in Markdown, without the front matter.")

    def to_markdown(self) -> str:
        front = f"---\nid: {self.id}\ntitle: {self.title}\ntags: [{', '.join(self.tags)}]\ndate: {self.date}\n---\n"
        return front + self.body.rstrip("\n") + "\n"


class SearchHit(BaseModel):
    id: str = Field(description="Note id, for read_note.")
    title: str = Field(description="Note title.")
    score: int = Field(description="Title words count 3, tag words 2, body words 1; higher is better.")
    snippet: str = Field(description="The first line of the note that mentions a search word.")


def check_note_id(note_id: str) -> str:
    """Return note_id if it is a safe slug, else raise InvalidNoteId."""
    if not isinstance(note_id, str) or len(note_id) > MAX_ID_LENGTH or not NOTE_ID_PATTERN.fullmatch(note_id):
        raise InvalidNoteId(
            f"{note_id!r} is not a valid note id. Ids are lowercase letters, digits and single hyphens "
            f"(like 'spindle-density'), at most {MAX_ID_LENGTH} characters."
        )
    return note_id


def slugify(title: str) -> str:
    """Turn a title into a note id: 'Spindle density, v2!' -> 'spindle-density-v2'."""
    words = re.findall(r"[a-z0-9]+", title.lower(), re.ASCII)
    return "-".join(words)[:MAX_ID_LENGTH].rstrip("-")


def parse_note(note_id: str, text: str) -> Note:
    """Parse front matter (id, title, tags, date) and body; the file name is the id."""
    note = Note(id=note_id, title=note_id, body=text)
    match = re.match(r"---\n(.*?)\n---\n?", text, re.DOTALL)
    if not match:
        return note
    note.body = text[match.end() :].strip("\n")
    for line in match.group(1).splitlines():
        key, _, value = line.partition(":")
        value = value.strip()
        if key == "title":
            note.title = value
        elif key == "date":
            note.date = value
        elif key == "tags":
            note.tags = [tag.strip() for tag in value.strip("[]").split(",") if tag.strip()]
    return note


def words_of(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def score_note(note: Note, terms: list[str]) -> int:
    """Title words count 3, tag words 2, body words 1 per occurrence."""
    title_words = words_of(note.title)
    tag_words = words_of(" ".join(note.tags))
    body_words = words_of(note.body)
    return sum(3 * title_words.count(t) + 2 * tag_words.count(t) + body_words.count(t) for t in terms)


def snippet_for(note: Note, terms: list[str], width: int = 120) -> str:
    """The first body line that mentions a term (else the first line), shortened."""
    lines = [line.strip() for line in note.body.splitlines() if line.strip()]
    chosen = next((line for line in lines if set(words_of(line)) & set(terms)), lines[0] if lines else "")
    return chosen if len(chosen) <= width else chosen[: width - 1] + "…"


class NoteStore:
    """All notes of one folder. Thread-safe for the writes a server does."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder).resolve()
        self._write_lock = threading.Lock()

    def path_for(self, note_id: str) -> Path:
        """The file of a note, refusing anything that could leave the folder."""
        path = self.folder / f"{check_note_id(note_id)}.md"
        if path.is_symlink():
            raise InvalidNoteId(f"Note {note_id!r} is a symbolic link; the lab server never follows links.")
        if path.resolve().parent != self.folder:
            raise InvalidNoteId(f"Note {note_id!r} would be outside the notes folder.")
        return path

    def ids(self) -> list[str]:
        found = []
        for entry in os.scandir(self.folder):
            note_id = entry.name.removesuffix(".md")
            if (
                entry.name.endswith(".md")
                and entry.is_file(follow_symlinks=False)
                and NOTE_ID_PATTERN.fullmatch(note_id)
                and len(note_id) <= MAX_ID_LENGTH
            ):
                found.append(note_id)
        return sorted(found)

    def read_text(self, note_id: str) -> str:
        path = self.path_for(note_id)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            raise NoteNotFound(f"No note with id {note_id!r}. Use search_notes to find ids.") from None
        except OSError:
            raise NoteNotFound(f"Note {note_id!r} cannot be read.") from None
        with os.fdopen(fd, encoding="utf-8", errors="replace") as file:
            return file.read()

    def get(self, note_id: str) -> Note:
        return parse_note(note_id, self.read_text(note_id))

    def all(self) -> list[Note]:
        notes = []
        for note_id in self.ids():
            try:
                notes.append(self.get(note_id))
            except NoteError:
                continue  # vanished or unreadable between listing and reading
        return notes

    def tags(self) -> list[str]:
        return sorted({tag for note in self.all() for tag in note.tags})

    def search(self, query: str, limit: int = 5) -> list[SearchHit]:
        terms = words_of(query)
        if not terms:
            return []
        scored = [(score_note(note, terms), note) for note in self.all()]
        ranked = sorted((pair for pair in scored if pair[0] > 0), key=lambda pair: (-pair[0], pair[1].id))
        return [
            SearchHit(id=note.id, title=note.title, score=score, snippet=snippet_for(note, terms))
            for score, note in ranked[:limit]
        ]

    def create(self, title: str, body: str, tags: list[str], date: str) -> Note:
        # The title is one front-matter line: a line break in it could forge the tags or cut the body.
        title = " ".join(title.split())
        note_id = slugify(title)
        if not note_id:
            raise InvalidNoteId("The title needs at least one letter or digit to make a note id from it.")
        if note_id in RESERVED_IDS:
            raise InvalidNoteId(f"{note_id!r} is reserved by the server; choose another title.")
        note = Note(id=note_id, title=title, tags=[check_tag(tag) for tag in tags], date=date, body=body)
        with self._write_lock:
            path = self.path_for(note_id)
            if path.exists() or path.is_symlink():
                raise NoteExists(f"A note with id {note_id!r} already exists. Pick another title or read that note.")
            self._write_atomic(path, note.to_markdown())
        return note

    def add_tag(self, note_id: str, tag: str) -> Note:
        tag = check_tag(tag)
        with self._write_lock:
            note = self.get(note_id)
            if tag not in note.tags:
                note.tags.append(tag)
                self._write_atomic(self.path_for(note_id), note.to_markdown())
        return note

    def delete(self, note_id: str) -> None:
        with self._write_lock:
            path = self.path_for(note_id)
            try:
                path.unlink()
            except FileNotFoundError:
                raise NoteNotFound(f"No note with id {note_id!r}. Use search_notes to find ids.") from None

    def _write_atomic(self, path: Path, text: str) -> None:
        """Write a sibling temp file, fsync it, then rename it over the note."""
        fd, temp_name = tempfile.mkstemp(dir=self.folder, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temp_name, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp_name)
            raise
        self._fsync_folder()

    def _fsync_folder(self) -> None:
        try:
            fd = os.open(self.folder, os.O_RDONLY)
        except OSError:
            return
        # Some filesystems cannot fsync a directory; the rename is atomic all the same.
        with contextlib.suppress(OSError):
            os.fsync(fd)
        os.close(fd)


def check_tag(tag: str) -> str:
    tag = tag.strip().lower()
    if len(tag) > MAX_ID_LENGTH or not NOTE_ID_PATTERN.fullmatch(tag):
        raise InvalidNoteId(f"{tag!r} is not a valid tag. Tags look like note ids: lowercase words joined by hyphens.")
    return tag


def bundled_samples() -> Path:
    """The folder of sample notes shipped inside the package."""
    return Path(str(resources.files("labserver") / SAMPLE_NOTES))


def seed_folder(folder: Path) -> None:
    """Copy the bundled sample notes into folder when it holds no notes yet."""
    folder.mkdir(parents=True, exist_ok=True)
    if any(folder.glob("*.md")):
        return
    for sample in sorted(bundled_samples().glob("*.md")):
        shutil.copyfile(sample, folder / sample.name)
