"""SIGKILL in the middle of note writes, 50 times, on one notes folder.

Each round starts the real server on the folder (so each round also checks that it
starts again after the last kill), asks tag_note for five notes (the MRTR question),
then pipelines the five answered retries and ten create_note calls with 50 kB bodies,
and kills the server with SIGKILL once a random number of them (0 to all) were
answered. Afterwards every note file holds either its old or its new content, never
a partial one; every acknowledged write is on disk; temporary files never show up
as notes.

The fifty labs are forked from a warm starter of the test's own (labserver.warm), which
imported the lab once: fifty cold starts cost more CPU than everything else here. The
kill still lands on the lab's own process, the one writing the notes, from outside.
"""

from __future__ import annotations

import json
import random
import re
import signal

import pytest

from lab_harness import FORM_ELICITATION, TAG_KEY, StdioLab, check_result, request, retry_with, tool_call
from lab_harness import labs_of

from labserver.notes import Note, parse_note, seed_folder
from labserver.warm import warm_starter

# The test runs a starter of its own, so the one lab its starter has forked is the one to kill.
LAB_STARTS_COLD = True

ROUNDS = 50
TAGGED_PER_ROUND = 5
CREATED_PER_ROUND = 10
BODY = "Spindles, slow oscillations and a great deal of careful note-taking. " * 730  # about 50 kB


def md_files(folder) -> dict[str, str]:
    return {path.stem: path.read_text() for path in sorted(folder.glob("*.md")) if not path.is_symlink()}


def tagged(note_id: str, old_text: str, tag: str) -> str:
    """The file add_tag writes: the old note with one more tag."""
    note = parse_note(note_id, old_text)
    note.tags.append(tag)
    return note.to_markdown()


def created(note_id: str, title: str, file_text: str) -> str:
    """The file create_note writes, dated as the file says (the date is the server's today)."""
    date = re.search(r"^date: (\d{4}-\d{2}-\d{2})$", file_text, re.MULTILINE)
    return Note(id=note_id, title=title, tags=["crash"], date=date.group(1) if date else "?", body=BODY).to_markdown()


def one_round(folder, number: int, rng: random.Random, starter: str) -> dict:
    before = md_files(folder)
    targets = sorted(before)[number % len(before) :][:TAGGED_PER_ROUND] or sorted(before)[:TAGGED_PER_ROUND]
    tag = f"round-{number}"
    server = StdioLab("--notes", str(folder))
    try:
        asks = {note_id: tool_call(f"ask-{note_id}", "tag_note", {"note_id": note_id}, capabilities=FORM_ELICITATION) for note_id in targets}
        writes = {}  # request id -> (kind, note id, title)
        burst = []
        for note_id, ask in asks.items():
            state = check_result("tools/call", server.call(ask))["requestState"]  # the server started again
            answer = {TAG_KEY: {"action": "accept", "content": {"tag": tag}}}
            burst.append(retry_with(ask, f"tag-{note_id}", answer, state))
            writes[f"tag-{note_id}"] = ("tag", note_id, None)
        for index in range(CREATED_PER_ROUND):
            title = f"Crash {number} {index}"
            burst.append(tool_call(f"create-{index}", "create_note", {"title": title, "body": BODY, "tags": ["crash"]}))
            writes[f"create-{index}"] = ("create", f"crash-{number}-{index}", title)
        rng.shuffle(burst)
        server.send_raw(b"".join(json.dumps(frame).encode() + b"\n" for frame in burst))
        acknowledged = set()
        for _ in range(rng.randrange(len(burst) + 1)):
            reply = server.next_message()
            assert check_result("tools/call", reply)["isError"] is False, reply
            acknowledged.add(reply["id"])
        (lab,) = labs_of(starter)  # the process writing the notes; server.process is its stand-in
        lab.send_signal(signal.SIGKILL)
        lab.wait(timeout=10)
        assert server.process.wait(timeout=10) == -signal.SIGKILL  # the stand-in reports how its lab ended
    finally:
        server.stop()

    after = md_files(folder)
    landed = 0
    for request_id, (kind, note_id, title) in writes.items():
        old = before.get(note_id)
        new = tagged(note_id, old, tag) if kind == "tag" else created(note_id, title, after.get(note_id, ""))
        assert after.get(note_id) in (old, new), f"round {number}: {note_id} is neither old nor new (partial?)"
        if request_id in acknowledged:
            assert after[note_id] == new, f"round {number}: acknowledged {kind} of {note_id} is not on disk"
        landed += after.get(note_id) == new
    untouched = set(before) - set(targets)
    assert {note_id: after[note_id] for note_id in untouched} == {note_id: before[note_id] for note_id in untouched}
    return {"acknowledged": len(acknowledged), "landed": landed, "writes": len(writes)}


# Fifty server starts, forked: about 20 s alone on two cores.
@pytest.mark.timeout(360)
@pytest.mark.slow
def test_sigkill_mid_write_leaves_old_or_new_notes_and_the_server_starts_again(tmp_path):
    folder = tmp_path / "notes"
    seed_folder(folder)
    rng = random.Random(20260728)
    with warm_starter() as starter:
        rounds = [one_round(folder, number, rng, starter) for number in range(ROUNDS)]

    cut_short = sum(r["acknowledged"] < r["writes"] for r in rounds)
    unacknowledged_but_landed = sum(r["landed"] - r["acknowledged"] for r in rounds)
    leftovers = sorted(path.name for path in folder.iterdir() if path.name.endswith(".tmp"))
    print(
        f"{ROUNDS} kills; {cut_short} cut a burst short; {unacknowledged_but_landed} writes landed unacknowledged; "
        f"{len(leftovers)} temporary files left behind"
    )
    assert cut_short >= ROUNDS // 2  # most kills did land in the middle of the writes

    notes = md_files(folder)
    server = StdioLab("--notes", str(folder))
    try:
        index = check_result("resources/read", server.call(request("index", "resources/read", {"uri": "notes://index"})))
        listed = [line.split(" — ")[0] for line in index["contents"][0]["text"].splitlines()]
        assert listed == sorted(notes)  # every note, and no temporary file posing as one
        for note_id in notes:
            read = check_result("tools/call", server.call(tool_call(f"read-{note_id}", "read_note", {"note_id": note_id})))
            assert read["isError"] is False
    finally:
        server.stop()
