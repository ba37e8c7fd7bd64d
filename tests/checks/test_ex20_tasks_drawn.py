"""Exercise 20 (drive a task to its end), task 3 (stop_at_deadline), on the deadlines and paces a run draws
(draw_deadlines): right answers pass and the wrong ones blind learners wrote against the fixed geometry of earlier runs
(a rounded deadline, deadlines or sleeps written in, a fixed sleep, a clock looked at after the sleep) are refused on
every draw. Most of the time is the drawn deadlines, 2.36-2.45 s on each wire, spent waiting."""

import math
import random
import re
import time

import pytest

import checks
from checks.ex20_tasks import draw_deadlines, lab_pair
from ex20_answers import lent, task_request


# Scheduled among the first files (tests/conftest.py), as the other files whose rows wait out whole deadlines.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def labs():
    """One lab pair for every row: each check runs on tasks of its own, and no answer here hangs or closes a wire."""
    with lab_pair() as pair:
        yield pair


# --- on a drawn geometry (issue s11-20): the deadlines and paces a run draws, here seed 0's -----------------------------
# stdio: 1333 ms, then 101, then 115 ms against 2.45 s; HTTP: 112, then 1400, then 111 ms, and 1361 ms at the poll
# whose 111 ms would pass 2.43 s.
DRAWN = draw_deadlines(random.Random(0))


def drawn(labs):
    return lent(checks.check_deadline, labs, deadlines=DRAWN)


def cancel_when_the_next_poll_passes(deadline=lambda wire, given: given, pause=None, sleep_to_it=False):
    """The reference loop (a blind learner's), with the deadline it measures, its pause or its cancel changed."""
    def stop_at_deadline(wire, task_id, deadline_s):
        end = time.monotonic() + deadline(wire, deadline_s)
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            if task["status"] in ("completed", "failed", "cancelled"):
                return task["status"]
            wait_s = task.get("pollIntervalMs", 1000) / 1000 if pause is None else pause
            if time.monotonic() + wait_s >= end:
                if sleep_to_it:
                    time.sleep(max(0, end - time.monotonic()))
                task_request(wire, "tasks/cancel", {"taskId": task_id})
                return "cancelled"
            time.sleep(wait_s)
    return stop_at_deadline


def test_deadline_right_on_a_drawn_geometry(verdict, labs):
    out = verdict(drawn(labs), cancel_when_the_next_poll_passes(sleep_to_it=True))
    assert out.startswith("✓ stop_at_deadline slept the pollIntervalMs of the latest reply between polls") and \
        "with no poll still due before it" in out, out


# The rows below run on the deadlines and paces the check draws for the run, as a learner's run does: each verdict
# holds on every draw (see draw_deadlines).
EARLY = r"✗ stop_at_deadline cancelled \d\.\d\d s after it started, before the 2\.\d+ s deadline: its last tasks/get"
PAST = r"✗ stop_at_deadline sent [2-9] tasks/get after the 2\.\d+ s deadline had passed"


@pytest.mark.parametrize("sleep_to_it", [False, True])
def test_deadline_rounded_on_a_drawn_geometry(verdict, labs, sleep_to_it):
    # Blind learner runs (s11): round(deadline_s) passed on the fixed 2.8 and 2.1 s, where rounding crossed no poll.
    out = verdict(lent(checks.check_deadline, labs),
                  cancel_when_the_next_poll_passes(lambda wire, given: round(given), sleep_to_it=sleep_to_it))
    assert re.match(EARLY, out) and "not rounded or cut to whole seconds" in out, out


def test_deadline_rounded_up_on_a_drawn_geometry(verdict, labs):
    # Caught where the paces stay short past the deadline.
    out = verdict(lent(checks.check_deadline, labs),
                  cancel_when_the_next_poll_passes(lambda wire, given: math.ceil(given)))
    assert re.match(PAST, out), out


def test_deadline_looking_at_the_clock_after_the_sleep_on_a_drawn_geometry(verdict, labs):
    # Blind learners' d_W04 and d_W17 (s11), caught on the fixed geometry, would pass where every pace past the deadline
    # is short: on one wire the poll whose next one would pass it asks for a long pace.
    def sleep_then_look(wire, task_id, deadline_s):
        end = time.monotonic() + deadline_s
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            if task["status"] in ("completed", "failed", "cancelled"):
                return task["status"]
            time.sleep(task["pollIntervalMs"] / 1000)
            if time.monotonic() >= end:
                task_request(wire, "tasks/cancel", {"taskId": task_id})
                return "cancelled"
    out = verdict(lent(checks.check_deadline, labs), sleep_then_look)
    assert re.match(r"✗ stop_at_deadline cancelled \d\.\d s after it started, \d\.\d s after the 2\.\d+ s deadline: "
                    r"it slept past the deadline", out), out


def test_deadline_polling_at_the_deadline_on_a_drawn_geometry(verdict, labs):
    # A blind learner's d_W05 (s11): min(pollIntervalMs, time left), caught on the fixed geometry, passed once every pace
    # near the deadline was short; on the wire whose pace turns long there, its last sleep is cut short.
    def shortened(wire, task_id, deadline_s):
        end = time.monotonic() + deadline_s
        while True:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            if task["status"] in ("completed", "failed", "cancelled"):
                return task["status"]
            if time.monotonic() >= end - 0.01:
                task_request(wire, "tasks/cancel", {"taskId": task_id})
                return "cancelled"
            time.sleep(min(task["pollIntervalMs"] / 1000, max(0, end - time.monotonic())))
    out = verdict(lent(checks.check_deadline, labs), shortened)
    assert out.startswith("✗ You polled ") and "Your last poll came at the deadline" in out and "old pace" not in out, out


def test_deadline_written_in_by_wire(verdict, labs):
    # A blind learner run (s11): the deadlines of a ✓ message, written in, passed while every run had the same ones.
    out = verdict(lent(checks.check_deadline, labs), cancel_when_the_next_poll_passes(
        lambda wire, given: 2.8 if wire.transport == "stdio" else 2.1))
    assert re.match(PAST, out) or re.match(EARLY, out), out


@pytest.mark.parametrize("pause", [1.75, 1.9])
def test_deadline_at_a_fixed_pace_on_a_drawn_geometry(verdict, labs, pause):
    # Blind learner runs (s11): a fixed 1.75 or 1.9 s sleep fitted the fixed paces. Where the short pace comes first the
    # sleep is silence; where the long one does, the loop cancels with a poll still due.
    out = verdict(lent(checks.check_deadline, labs), cancel_when_the_next_poll_passes(pause=pause))
    assert re.match(EARLY, out) or re.match(r"✗ stop_at_deadline waited 1\.\d s between two requests", out), out


def test_deadline_on_a_schedule_written_in_by_wire(verdict, labs):
    # A blind learner run (s11): sleeps written in by wire and poll count, from the fixed paces' ✓ message.
    schedule = {"stdio": [1.0, 1.5, 1.5, 1.5, 1.5], "http": [1.75, 0.9, 0.9, 0.9, 0.9]}

    def by_poll_count(wire, task_id, deadline_s):
        end = time.monotonic() + deadline_s
        for pause in schedule[wire.transport]:
            task = task_request(wire, "tasks/get", {"taskId": task_id}).result
            if task["status"] in ("completed", "failed", "cancelled"):
                return task["status"]
            if time.monotonic() + pause >= end:
                break
            time.sleep(pause)
        task_request(wire, "tasks/cancel", {"taskId": task_id})
        return "cancelled"
    out = verdict(lent(checks.check_deadline, labs), by_poll_count)
    assert re.match(EARLY, out) or re.match(r"✗ stop_at_deadline waited \d\.\d s between two requests", out) or \
        re.match(r"✗ You polled \d+ ms after the previous tasks/get; the task asked for 13\d\d ms", out), out
