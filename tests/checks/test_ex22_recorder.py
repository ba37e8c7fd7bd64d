"""Exercise 22's recorder sits between a report and the server it starts: the report must not notice it, and the check
reads from its two files what the report sent and the very lines that came back."""

import json
import subprocess
import sys
from pathlib import Path

from checks import ex22_recorder as recorder
from checks.ex22_warm import Starter

ECHO = [sys.executable, "-c", "import sys\nfor line in sys.stdin.buffer: sys.stdout.buffer.write(line); sys.stdout.buffer.flush()"]


def recorded(folder, command, sent, **kwargs):
    return subprocess.run([sys.executable, recorder.__file__, str(folder), *command], input=sent, capture_output=True,
                          timeout=30, **kwargs)


def test_bytes_pass_both_ways_unchanged_and_are_kept(tmp_path):
    # Not only JSON: a broken line and bytes that are not UTF-8 reach the server and come back as they were.
    sent = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"broken\n\xff\xfe caf\xc3\xa9\n'
    done = recorded(tmp_path, ECHO, sent)
    assert done.returncode == 0 and done.stdout == sent
    [log] = tmp_path.glob("*.jsonl")
    assert log.read_bytes() == sent and Path(recorder.replies_path(log)).read_bytes() == sent


def test_each_process_gets_files_of_its_own(tmp_path):
    # A report may start a server more than once (a fresh process for the handshake): each run is a session.
    for line in (b"first\n", b"second\n"):
        recorded(tmp_path, ECHO, line)
    logs = sorted(tmp_path.glob("*.jsonl"))
    assert sorted(log.read_bytes() for log in logs) == [b"first\n", b"second\n"]
    assert all(Path(recorder.replies_path(log)).exists() for log in logs)


def test_the_servers_exit_code_and_stderr_are_the_recorders_own(tmp_path):
    done = recorded(tmp_path, [sys.executable, "-c", "import sys; sys.stderr.write('starting\\n'); sys.exit(3)"], b"")
    assert done.returncode == 3 and done.stderr == b"starting\n" and done.stdout == b""


def test_a_server_that_ends_early_does_not_hang_the_report(tmp_path):
    # The server reads nothing and stops; the report still writes, and the recorder ends instead of blocking.
    done = recorded(tmp_path, [sys.executable, "-c", "print('bye', flush=True)"], b"x" * 200_000)
    assert done.returncode == 0 and done.stdout == b"bye\n"


def test_the_replies_file_is_named_after_the_sent_one():
    assert recorder.replies_path("/tmp/received-3/tmpab12.jsonl") == "/tmp/received-3/tmpab12.replies"


def named(folder, server):
    Path(recorder.command_path(folder)).write_text(json.dumps(server), encoding="utf-8")
    return [sys.executable, "-I", "-S", recorder.__file__, str(folder)]


def test_a_folder_alone_runs_the_command_named_inside(tmp_path):
    # The check's commands all look alike: the server is named in the folder, not on the command line.
    done = subprocess.run(named(tmp_path, {"command": ECHO}), input=b"one\n", capture_output=True, timeout=30)
    assert done.returncode == 0 and done.stdout == b"one\n"
    [log] = tmp_path.glob("*.jsonl")
    assert log.read_bytes() == b"one\n"


def test_a_warm_server_forks_from_its_starter_and_a_cold_one_runs_without(tmp_path):
    # json.tool stands in for a server module; the command says "cold" so that the output shows which one ran.
    starter = Starter(sys.executable, ["json.tool"])
    try:
        assert starter.ready()
        server = {"command": [sys.executable, "-c", "print('cold')"],
                  "warm": starter.warm("json.tool", "--json-lines", "--compact")}
        done = subprocess.run(named(tmp_path, server), input=b'{"id": 1}\n{"id": 2}\n', capture_output=True, timeout=30)
        assert done.returncode == 0 and done.stdout == b'{"id":1}\n{"id":2}\n'
        # The server's exit code comes back from the starter: 2, from json.tool's argparse, for a file that is not there.
        server["warm"] = starter.warm("json.tool", str(tmp_path / "missing.json"))
        done = subprocess.run(named(tmp_path, server), input=b"", capture_output=True, timeout=30)
        assert done.returncode == 2 and b"missing.json" in done.stderr
    finally:
        starter.stop()
    done = subprocess.run(named(tmp_path, server), input=b"", capture_output=True, timeout=30)
    assert done.returncode == 0 and done.stdout == b"cold\n"
