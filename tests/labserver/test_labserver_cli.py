"""The command line: where notes live, what is kept, and what is cleaned up at exit."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from lab_harness import HttpLab, check_result, request, sample_note_ids, stdio_lab, tool_call

# These tests watch the lab's own process (its pid, memory, signals, children): start it cold.
LAB_STARTS_COLD = True


def notes_folder_from(stderr_lines: list[str]) -> Path:
    """The folder the server announces on stderr at start (after its imports: a cold start, so allow for load)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for line in stderr_lines:
            if match := re.match(r"notes-lab: notes folder (.+) \(", line):
                return Path(match.group(1))
        time.sleep(0.05)
    raise AssertionError(f"no notes folder announced: {stderr_lines}")


def create(server, request_id: int, title: str) -> dict:
    return check_result("tools/call", server.call(tool_call(request_id, "create_note", {"title": title, "body": "kept?"})))


def test_notes_dir_is_seeded_when_empty_and_keeps_writes(tmp_path):
    folder = tmp_path / "my-notes"
    with stdio_lab("--notes", str(folder)) as server:
        assert create(server, 1, "Kept after exit")["isError"] is False
        assert server.close() == 0
    assert sorted(path.stem for path in folder.glob("*.md")) == sorted([*sample_note_ids(), "kept-after-exit"])
    with stdio_lab("--notes", str(folder)) as server:
        result = check_result("tools/call", server.call(tool_call(2, "read_note", {"note_id": "kept-after-exit"})))
        assert result["structuredContent"]["body"] == "kept?"


def test_notes_dir_env_variable_works_like_the_option(tmp_path):
    with stdio_lab(env={**os.environ, "NOTES_DIR": str(tmp_path)}) as server:
        create(server, 1, "From the environment")
        assert server.close() == 0
    assert (tmp_path / "from-the-environment.md").exists()


def test_a_folder_with_notes_is_not_reseeded(tmp_path):
    (tmp_path / "only-mine.md").write_text("---\nid: only-mine\ntitle: Only mine\ntags: []\ndate: 2026-03-01\n---\nhi\n")
    with stdio_lab("--notes", str(tmp_path)) as server:
        result = check_result("resources/read", server.call(request(1, "resources/read", {"uri": "notes://index"})))
        assert result["contents"][0]["text"] == "only-mine — Only mine"


def test_the_default_temporary_copy_is_removed_at_eof(tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "NOTES_DIR"}
    with stdio_lab(env=env) as server:
        folder = notes_folder_from(server.stderr)
        create(server, 1, "Gone after exit")
        assert (folder / "gone-after-exit.md").exists()
        assert server.close() == 0
    assert not folder.exists()
    assert not (Path(__file__).resolve().parents[2] / "labserver" / "sample_notes" / "gone-after-exit.md").exists()


def test_the_http_server_removes_its_temporary_copy_on_sigterm():
    server = HttpLab(stderr=subprocess.PIPE)
    try:
        check_result("server/discover", server.call(request(1, "server/discover"))[1])
        folder = Path(re.search(r"notes folder (\S+)", server.process.stderr.readline().decode()).group(1))
        assert folder.exists()
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=10) == 128 + signal.SIGTERM
        assert not folder.exists()
    finally:
        server.stop()


def test_the_stdio_server_removes_its_temporary_copy_on_sigterm():
    env = {key: value for key, value in os.environ.items() if key != "NOTES_DIR"}
    with stdio_lab(env=env) as server:
        folder = notes_folder_from(server.stderr)
        check_result("server/discover", server.call(request(1, "server/discover")))
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=10) == 128 + signal.SIGTERM
    assert not folder.exists()


def test_the_http_server_started_on_a_pipe_stops_when_its_parent_goes_away():
    # A notebook kernel that dies or restarts closes the pipe; its HTTP lab server must not live on.
    server = subprocess.Popen(
        [sys.executable, "-m", "labserver", "--http", "--until-stdin-closes"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert server.stdout.readline().decode().startswith("http://127.0.0.1:")
        folder = notes_folder_from([server.stderr.readline().decode()])
        server.stdin.close()
        assert server.wait(timeout=15) == 0
        assert not folder.exists()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
