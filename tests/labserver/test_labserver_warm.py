"""Warm starts (labserver.warm): a lab forked from a warm starter behaves as a cold `python -m labserver`."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from labserver.warm import WARM, warm_starter
from lab_harness import labs_of
from mcpwire import frames

# Each test runs its own starter, or none, to compare the two kinds of start.
LAB_STARTS_COLD = True
DISCOVER = (frames.dumps(frames.request("server/discover", id=1)) + "\n").encode()


def lab(*args, sigint=signal.SIG_DFL):
    # A pytest-xdist worker ignores SIGINT, and its children would inherit that: say what the lab gets.
    return subprocess.Popen([sys.executable, "-m", "labserver", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, sigint))


def one_answer():
    process = lab()
    out, err = process.communicate(DISCOVER, timeout=60)
    return process.returncode, out, err.decode()




def test_a_warm_lab_answers_byte_for_byte_as_a_cold_one():
    cold = one_answer()
    with warm_starter() as path:
        process = lab()
        process.stdin.write(DISCOVER)
        process.stdin.flush()
        first_line = process.stdout.readline()
        forked = labs_of(path)  # the lab that answered is the starter's child, not a fresh interpreter
        out, err = process.communicate(timeout=30)
    assert len(forked) == 1 and process.returncode == cold[0] == 0
    assert first_line + out == cold[1] and json.loads(first_line)["result"]["resultType"] == "complete"
    assert err.decode().startswith("notes-lab: notes folder ") and cold[2].startswith("notes-lab: notes folder ")


def test_exit_codes_and_errors_come_back_as_from_a_cold_start():
    with warm_starter():
        refused = lab("--page-size", "0")
        _, err = refused.communicate(timeout=30)
        assert refused.returncode == 2 and b"--page-size: must be 1 or more" in err
        served = lab("--http")
        assert served.stdout.readline().startswith(b"http://127.0.0.1:")
        served.send_signal(signal.SIGTERM)
        assert served.wait(timeout=30) == 128 + signal.SIGTERM
        served.stdout.close()
        served.stderr.close()


def test_a_stand_in_killed_outright_takes_its_lab_with_it():
    with warm_starter() as path:
        stand_in = lab()
        stand_in.stdin.write(DISCOVER)
        stand_in.stdin.flush()
        assert stand_in.stdout.readline().startswith(b'{"jsonrpc":"2.0","id":1,"result"')
        (forked,) = labs_of(path)
        stand_in.kill()
        stand_in.wait(timeout=10)
        forked.wait(timeout=10)  # psutil.TimeoutExpired if it outlives its stand-in
        assert not forked.is_running()
        for stream in (stand_in.stdin, stand_in.stdout, stand_in.stderr):
            stream.close()


def test_a_lab_killed_outright_ends_its_stand_in_the_same_way():
    with warm_starter() as path:
        stand_in = lab()
        stand_in.stdin.write(DISCOVER)
        stand_in.stdin.flush()
        stand_in.stdout.readline()
        (forked,) = labs_of(path)
        forked.kill()  # as the kernel's out-of-memory killer would
        # A cold lab killed this way exits -9 to whoever started it; so must the stand-in.
        assert stand_in.wait(timeout=10) == -signal.SIGKILL
        for stream in (stand_in.stdin, stand_in.stdout, stand_in.stderr):
            stream.close()


def test_closing_stdin_ends_the_lab_and_its_stand_in():
    with warm_starter() as path:
        stand_in = lab()
        _, _ = stand_in.communicate(b"", timeout=30)
        assert stand_in.returncode == 0
        assert labs_of(path) == []


def test_without_a_starter_the_lab_starts_cold(tmp_path):
    os.environ[WARM] = str(tmp_path / "nobody-listens-here")
    try:
        code, out, _ = one_answer()
    finally:
        os.environ.pop(WARM)
    assert code == 0 and b'"resultType":"complete"' in out


def answered_once(sigint=signal.SIG_DFL):
    process = lab(sigint=sigint)
    process.stdin.write(DISCOVER)
    process.stdin.flush()
    process.stdout.readline()
    return process


def finish(process):
    with contextlib.suppress(BrokenPipeError):
        process.stdin.close()
    code = process.wait(timeout=30)
    for stream in (process.stdout, process.stderr):
        stream.close()
    return code


def ended_by(signum):
    """Exit code of a lab that answered once, then got `signum` while its stdin was still open."""
    process = answered_once()
    process.send_signal(signum)
    # No EOF is sent before it ends: only the signal can end it (TimeoutExpired if it did not).
    process.wait(timeout=30)
    return finish(process)


def outlived_sigint(sigint):
    """(exit code, answered again?) of a lab that answered once, got SIGINT, was asked again, then saw EOF."""
    process = answered_once(sigint)
    process.send_signal(signal.SIGINT)
    time.sleep(0.5)  # time to act on the signal, were it not ignored
    with contextlib.suppress(BrokenPipeError):
        process.stdin.write(DISCOVER)
        process.stdin.flush()
    answered_again = process.stdout.readline().startswith(b'{"jsonrpc":"2.0","id":1,"result"')
    return finish(process), answered_again


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_the_stand_in_reaches_the_lab(signum):
    cold = ended_by(signum)
    with warm_starter():
        warm = ended_by(signum)
    # The lab's own answers: SIGINT ends it quietly (0), SIGTERM exits 128 + 15 after cleaning up.
    assert warm == cold == (0 if signum == signal.SIGINT else 128 + signal.SIGTERM)


@contextlib.contextmanager
def sigint_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_starter_that_ignores_sigint_does_not_hand_that_on_to_its_labs():
    # A starter run from a background job ignores SIGINT; a lab whose stand-in does not must still end on it.
    with sigint_ignored(), warm_starter():
        assert ended_by(signal.SIGINT) == 0


def test_a_signal_the_stand_in_ignores_is_ignored_by_the_lab_too():
    cold = outlived_sigint(signal.SIG_IGN)
    with warm_starter():
        warm = outlived_sigint(signal.SIG_IGN)
    assert warm == cold == (0, True)  # it outlived the SIGINT, answered again and ended at EOF
