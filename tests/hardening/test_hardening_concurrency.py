"""Two HTTP clients creating and tagging notes at once on one server and folder, 200 operations each.

Each client creates its own notes, races the other for twenty shared titles, and
tags (a full MRTR round trip: ask, answer, retry) five shared notes and its own,
sometimes with a tag the note already has. Afterwards every acknowledged write is
on disk, no tag is lost or doubled, and each shared title was created exactly once.
"""

from __future__ import annotations

import random
import threading
from collections import defaultdict

import pytest

from labserver.notes import NoteStore, seed_folder
from mcpwire import HttpWire, frames

OPERATIONS = 200
SHARED_TITLES = 20
SHARED_NOTES = ["welcome", "spindle-density", "reading-list", "ethics-amendment", "hypnogram-scoring"]
ELICITATION = {frames.CLIENT_CAPABILITIES_KEY: {"elicitation": {"form": {}}}}
TAG_KEY = "labserver.tools:ask_tag"


class Client:
    """One thread's wire and the writes the server acknowledged to it."""

    def __init__(self, name: str, url: str) -> None:
        self.name = name
        self.wire = HttpWire(url, timeout=30)
        self.created: dict[str, str] = {}  # note id -> title
        self.refused_titles: list[str] = []
        self.tags: list[tuple[str, str]] = []  # (note id, tag)
        self.failures: list[str] = []

    def create(self, title: str) -> None:
        reply = self.wire.request("tools/call", {"name": "create_note", "arguments": {"title": title, "body": f"by {self.name}", "tags": [self.name]}})
        if not reply.ok:
            self.failures.append(reply.text[:200])
        elif reply.is_tool_error:
            self.refused_titles.append(title)
        else:
            self.created[reply.result["structuredContent"]["id"]] = title

    def tag(self, note_id: str, tag: str) -> None:
        params = {"name": "tag_note", "arguments": {"note_id": note_id}}
        asked = self.wire.request("tools/call", params, meta=ELICITATION)
        if asked.result_type != "input_required":
            self.failures.append(asked.text[:200])
            return
        answer = {TAG_KEY: {"action": "accept", "content": {"tag": tag}}}
        retry = {**params, "inputResponses": answer, "requestState": asked.result["requestState"]}
        done = self.wire.request("tools/call", retry, meta=ELICITATION)
        if done.ok and not done.is_tool_error and tag in done.result["content"][0]["text"]:
            self.tags.append((note_id, tag))
        else:
            self.failures.append(done.text[:200])

    def plan(self, rng: random.Random) -> list:
        """200 operations: 60 own creates, 20 shared-title creates, 120 tags; own notes are tagged after they exist."""
        own = [(self.create, f"{self.name} note {i}") for i in range(60)]
        shared = [(self.create, f"Shared {i}") for i in range(SHARED_TITLES)]
        on_shared = [(self.tag, SHARED_NOTES[i % len(SHARED_NOTES)], f"{self.name}-{i // 3}") for i in range(60)]  # each tag thrice
        first = own + shared + on_shared
        rng.shuffle(first)
        on_own = [(self.tag, f"{self.name}-note-{i}", f"{self.name}-own-{i}") for i in range(60)]
        return first + on_own

    def run(self, rng: random.Random, start: threading.Barrier) -> None:
        operations = self.plan(rng)
        assert len(operations) == OPERATIONS
        start.wait()
        for operation, *arguments in operations:
            operation(*arguments)


@pytest.fixture
def server(tmp_path):
    folder = tmp_path / "notes"
    seed_folder(folder)
    with HttpWire.labserver("--notes", str(folder)) as wire:
        wire.folder = folder
        yield wire


def test_two_clients_lose_and_double_nothing(server):
    tags_before = {note.id: set(note.tags) for note in NoteStore(server.folder).all()}
    clients = [Client("alpha", server.url), Client("beta", server.url)]
    start = threading.Barrier(len(clients))
    threads = [threading.Thread(target=client.run, args=(random.Random(n), start)) for n, client in enumerate(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not any(thread.is_alive() for thread in threads)
    for client in clients:
        assert client.failures == [], client.failures[:3]
        client.wire.close()

    store = NoteStore(server.folder)
    notes = {note.id: note for note in store.all()}
    created = {note_id: title for client in clients for note_id, title in client.created.items()}
    assert sum(len(client.created) for client in clients) == len(created)  # no id acknowledged twice
    for note_id, title in created.items():
        assert notes[note_id].title == title
    for i in range(SHARED_TITLES):  # one winner per shared title, the other client was told it exists
        winners = [client.name for client in clients if f"shared-{i}" in client.created]
        losers = [client.name for client in clients if f"Shared {i}" in client.refused_titles]
        assert len(winners) == 1 and len(losers) == 1, (i, winners, losers)
        assert notes[f"shared-{i}"].body == f"by {winners[0]}"

    expected = defaultdict(set)
    for client in clients:
        for note_id, tag in client.tags:
            expected[note_id].add(tag)
    assert sum(len(client.tags) for client in clients) == 2 * 120
    creator = {note_id: client.name for client in clients for note_id in client.created}
    assert set(notes) == set(tags_before) | set(creator)  # nothing lost, nothing extra
    for note_id, note in notes.items():
        assert len(note.tags) == len(set(note.tags)), f"{note_id} has a tag twice: {note.tags}"
        first = tags_before[note_id] if note_id in tags_before else {creator[note_id]}
        assert set(note.tags) == first | expected[note_id], f"{note_id}: tags lost or added"
