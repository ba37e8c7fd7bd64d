"""Checks for exercise 20: drive a task of the io.modelcontextprotocol/tasks extension to its end.

Each check starts lab servers of its own with `--tasks` (two processes on one notes folder where a
task must outlive its client) and hands the learner's function a wire that records every frame it
writes, with the time and, over HTTP, the headers. The verdict comes from what went on the wire:
how fast the polls came, which keys were answered, how the task was cancelled, whether Mcp-Name
named the task.
"""

import copy
import json
import random
import tempfile
import time
import traceback
from contextlib import ExitStack, contextmanager, nullcontext
from pathlib import Path

from mcpwire import frames, tasks
from mcpwire.reply import Reply
from mcpwire.stdio import StdioWire
from mcpwire.streamable_http import HttpWire
from .attempt import attempt, missing
from .servers import STARTUP_WAIT_S
from .verdict import failed, not_done, passed, short, shown

FORM = {"elicitation": {"form": {}}}
TERMINAL = ("completed", "failed", "cancelled")
PACE_SLACK_S = 0.05  # a poll this much early is the clock's jitter, not a client in a hurry
AT_ONCE_S = 0.25  # a poll this soon after a tasks/update is one made at once, to see the answer taken
GUARD_S = 40
SCORE_POLL_MS = 1000  # score_night's pollIntervalMs in the lab
SILENCE_SLACK_S = 1.0  # a poll may come this much after pollIntervalMs on a busy machine and still count as on time
OLD_PACE_S = 0.15  # a gap this close to an interval asked earlier is a loop that kept that interval
ENDED_GUARD_S = 8  # a task that has already failed: a right answer returns after one poll
INVALID_ANSWER = {"epoch-7": {"action": "accept", "content": {"stage": "N4"}}}  # the lab fails review_night on it
CANCEL_SLACK_S = 0.5  # a cancel this much after the deadline is a busy machine, not a loop that slept past it
POLLS_AFTER_DEADLINE = 1  # the one poll that finds the deadline passed
ANSWERS = {"epoch-7": "REM", "epoch-14": "W"}
# The lab never changes a task's pollIntervalMs, always sends it and gives every task a ttlMs; a server may change
# the interval ("MAY change over the lifetime of a task"), leave it out (`pollIntervalMs?: number`) and send ttlMs
# null (unlimited). So the check's wires serve, at each poll, a pollIntervalMs drawn for this run from two levels
# further apart than PACE_SLACK_S + SILENCE_SLACK_S: no fixed sleep fits both, and a schedule written in by wire and
# poll count from one run's messages misses the next run's draw, at one poll or another. The paces that decide it go
# on quiet results (no question left to answer), whose next gap is always judged: after a result that asks, a loop
# may poll at once. The first quiet result on each wire leaves the field out. A review would end after one or two
# quiet results, too few to tell a schedule apart, so the wire shows an ended task still working until every quiet
# pace has been served, as a slower server would.
SHORT_MS, LONG_MS = (100, 200), (1300, 1400)
LEFT_OUT = "left out"  # a pace that leaves pollIntervalMs out of the result
OWN_WAIT_S = 0.1  # after a result without pollIntervalMs, the least pause of the learner's own the check takes
FOLLOW_DRAWN = 3  # Task 1: quiet paces drawn freely, after a short and a long one in a drawn order
RESUME_DRAWN = 3  # Task 4: the same, without the result that leaves the field out
UNLIMITED_FROM = 2  # the poll from which Task 1's wires serve ttlMs null
# Task 3, a fixed geometry (the check's tests name it): score_night's 1000 ms becomes 1500 after the first poll on
# stdio, against a 2.8 s deadline; over HTTP the first poll already asks for 1750 ms and the later ones for 900, against
# 2.1 s. A run draws its own (draw_deadlines).
DEADLINES = {"stdio": (2.8, (None, 1500)), "http": (2.1, (1750, 900))}
# Task 3's drawn geometry, per wire: a short and a long pace in opposite orders on the two wires (no fixed sleep keeps
# both: after the short one a sleep over SILENCE_SLACK_S is silence, after the long one a shorter sleep polls too soon,
# and on the wire where the short comes first a sleep long enough to cancel at once cancels long before), then short
# paces up to the deadline, which falls DEADLINE_FRACTION into a whole second past 2 s. Rounded or cut to a whole
# second, the deadline moves by 0.36 s or more: cut, the loop cancels at a poll whose next one was due at least 0.18 s
# before the deadline (refused, whatever the machine's load, as a right loop cancels only when its next poll would
# come after it). On one wire, drawn, the paces stay short past the deadline: a deadline rounded up polls at least
# twice past it, where a right loop polls at most once. On the other, the poll whose short pace would pass the
# deadline, or come within CROSS_LEAD_S of it, asks for a long one (StandIn.cross): a loop that sleeps it before it
# looks at the clock cancels more than CANCEL_SLACK_S late, and one that sleeps only up to the deadline and polls there
# polls sooner than it asked (CROSS_LEAD_S keeps that last sleep well over a loop's own "close enough" threshold).
DEADLINE_FRACTION = (0.36, 0.45)
DEADLINE_SHORT_MS = (100, 130)
CROSS_LEAD_S = 0.15


def draw_deadlines(rng=None):
    """Task 3's deadlines and paces for a run: {transport: (deadline_s, paces, cross_ms)}, as check_deadline takes
    them (cross_ms None: the paces stay short past the deadline)."""
    rng = rng or random.Random()
    short_first, crossing = rng.choice(("stdio", "http")), rng.choice(("stdio", "http"))
    drawn = {}
    for transport in ("stdio", "http"):
        short, long_ = _pace(rng, DEADLINE_SHORT_MS), _pace(rng, LONG_MS)
        first = (short, long_) if transport == short_first else (long_, short)
        deadline = round(2 + rng.uniform(*DEADLINE_FRACTION), 2)
        cross = _pace(rng, LONG_MS) if transport == crossing else None
        drawn[transport] = (deadline, (*first, _pace(rng, DEADLINE_SHORT_MS)), cross)
    return drawn


SCORE_PAUSE_MS = 400  # Task 3's score_night scores 20 epochs at this pace: 8 s, well past either deadline
# The lab never has two questions open at once; a server may ("all outstanding requests"), so in Task 1 the check's
# wire shows a second question beside the lab's first one and keeps the task input_required until it is answered.
FIRST_KEY, SECOND_KEY = "epoch-7", "epoch-8"
# The lab's scorer rereads an answered epoch for recheck_ms (a lab knob) before it moves on; Task 1 sets the least,
# and the check's wire shows every key a tasks/update answered once more on the next tasks/get instead (the
# acknowledgement is eventually consistent), so a loop that answers a key again meets it whatever its pace; and once
# more on the third poll after the update, past a poll that did not show it (a replica that lags behind a load
# balancer), so a loop that remembers only the previous poll's keys meets it too.
ECHO_AT = (1, 3)
REVIEW = {"night": "P07", "pause_ms": 10, "recheck_ms": 100}


class StandIn:
    """What the check's wires change in the tasks/get results the learner reads, as another server may answer.

    With `paces` set, the n-th quiet result of a task (one that leaves no question unanswered) shows pollIntervalMs
    paces[n - 1] (the last one from then on; None keeps the lab's, LEFT_OUT drops the field), and each result that
    asks shows `asking_pace` (None keeps the lab's); with `hold_end` set, an ended task shows working until every
    pace has been served. From its `unlimited_from`-th tasks/get on, ttlMs is null. With `second_question` set,
    SECOND_KEY is asked beside the lab's FIRST_KEY and stays open until a tasks/update answers it (the lab ignores the
    unknown key, as the extension says a server should), and the keys a tasks/update answers show once more on the
    next tasks/get and on the third (ECHO_AT). `served` keeps the pollIntervalMs, `statuses` the
    status and `shown` the inputRequests of each result the learner read, by request id.
    """

    paces = None
    asking_pace = None
    hold_end = False
    second_question = False
    cross = None  # Task 3: (deadline as a time.monotonic() value, ms) served once the quiet pace would pass it
    unlimited_from = None  # the rank of the first result to show ttlMs null

    def _start_watching(self):
        self.served, self.shown, self.statuses, self.polls, self.quiet = {}, {}, {}, {}, {}
        self.answered_keys, self.second_request, self.echo = set(), None, {}  # echo: poll rank -> keys to show again
        self.results = {}  # request id -> the tasks/get result the learner read

    def serve(self, *, paces=None, asking_pace=None, hold_end=False, second_question=False, unlimited_from=None):
        """Start a case: what this wire changes in the results from now on, and nothing remembered from earlier cases
        (a lab pair may serve several, see `check_follow`'s `labs`)."""
        self._start_watching()
        self.paces, self.asking_pace, self.hold_end = paces, asking_pace, hold_end
        self.second_question, self.unlimited_from = second_question, unlimited_from
        self.cross = None

    def _stand_in(self, frame, reply):
        if not isinstance(frame, dict):
            return
        if frame.get("method") == "tasks/update":
            keys = _object(_object(frame.get("params")).get("inputResponses"))
            self.answered_keys.update(keys)
            asked = {}
            for shown in self.shown.values():
                asked.update(shown)
            rank = self.polls.get(_object(frame.get("params")).get("taskId"), 0)
            for later in ECHO_AT:
                self.echo.setdefault(rank + later, {}).update({key: asked[key] for key in keys if key in asked})
            return
        result = _object(_object(reply.message).get("result")) if isinstance(reply, Reply) else {}
        if frame.get("method") != "tasks/get" or "status" not in result:
            return
        task_id = _object(frame.get("params")).get("taskId")
        rank = self.polls[task_id] = self.polls.get(task_id, 0) + 1
        if self.second_question:
            self._ask_second(result, rank)
        if self.unlimited_from is not None and rank >= self.unlimited_from:
            result["ttlMs"] = None
        if set(_object(result.get("inputRequests"))) - self.answered_keys:
            pace = self.asking_pace
        elif self.paces is None:
            pace = None
        else:
            quiet = self.quiet[task_id] = self.quiet.get(task_id, 0) + 1
            pace = self.paces[min(quiet, len(self.paces)) - 1]
            if self.cross is not None and time.monotonic() + (pace or SCORE_POLL_MS) / 1000 + CROSS_LEAD_S >= self.cross[0]:
                pace = self.cross[1]
            if self.hold_end and quiet < len(self.paces) and result["status"] in TERMINAL:
                for ended in ("result", "error", "statusMessage"):
                    result.pop(ended, None)
                result["status"] = "working"
        if pace == LEFT_OUT:
            result.pop("pollIntervalMs", None)
        elif pace is not None:
            result["pollIntervalMs"] = pace
        self.served[frame.get("id")] = result.get("pollIntervalMs")
        self.statuses[frame.get("id")] = result["status"]
        self.shown[frame.get("id")] = copy.deepcopy(_object(result.get("inputRequests")))
        self.results[frame.get("id")] = copy.deepcopy(result)

    def _ask_second(self, result, rank):
        echo = self.echo.pop(rank, {})
        if result["status"] in TERMINAL:
            return
        asked = _object(result.get("inputRequests"))
        if SECOND_KEY not in self.answered_keys:
            if self.second_request is None and isinstance(asked.get(FIRST_KEY), dict):
                self.second_request = _next_epoch_question(asked[FIRST_KEY])
            if self.second_request is not None:
                asked = {**asked, SECOND_KEY: copy.deepcopy(self.second_request)}
        asked = {**copy.deepcopy(echo), **asked}
        if asked:
            result["status"] = "input_required"
            result["inputRequests"] = asked


def _pace(rng, level):
    return rng.randint(*level)


def _drawn_paces(rng, drawn):
    """A short and a long pace in a drawn order, then `drawn` paces of drawn levels."""
    levels = [*rng.sample((SHORT_MS, LONG_MS), 2), *(rng.choice((SHORT_MS, LONG_MS)) for _ in range(drawn))]
    return tuple(_pace(rng, level) for level in levels)


def draw_follow_paces(rng=None):
    """Task 1's paces for a run: per wire, what a result that asks shows (`asking`) and what the quiet ones show, the
    first without pollIntervalMs (`quiet`)."""
    rng = rng or random.Random()
    return {transport: {"asking": _pace(rng, rng.choice((SHORT_MS, LONG_MS))),
                        "quiet": (LEFT_OUT, *_drawn_paces(rng, FOLLOW_DRAWN))} for transport in ("stdio", "http")}


def draw_resume_paces(rng=None):
    """Task 4's paces for a run (every result is quiet: score_night asks nothing)."""
    return _drawn_paces(rng or random.Random(), RESUME_DRAWN)


def _next_epoch_question(request):
    """The lab's question about epoch 7, asked about epoch 8."""
    question = copy.deepcopy(request)
    params = _object(question.get("params"))
    if isinstance(params.get("message"), str):
        params["message"] = params["message"].replace("Epoch 7 ", "Epoch 8 ", 1)
    return question


class WatchedStdio(StandIn, StdioWire):
    """A StdioWire that records each frame written, with the time, whether it goes out by send() or write()."""

    def __init__(self, *args, **kwargs):
        self.written = []
        self._start_watching()
        self._in_send = False  # send() records its frame itself: StdioWire.send may or may not go through write()
        super().__init__(*args, **kwargs)

    def write(self, frame):
        if not self._in_send:
            self.written.append((time.monotonic(), copy.deepcopy(frame), {}))
        super().write(frame)

    def send(self, frame, *args, **kwargs):
        self.written.append((time.monotonic(), copy.deepcopy(frame), {}))
        self._in_send = True
        try:
            reply = super().send(frame, *args, **kwargs)
        finally:
            self._in_send = False
        self._stand_in(frame, reply)
        return reply


class WatchedHttp(StandIn, HttpWire):
    """An HttpWire that records each frame posted, with the time and the headers that went with it."""

    def __init__(self, *args, **kwargs):
        self.written = []
        self.replies = {}  # request id -> the reply's message
        self.file_then = []
        self._start_watching()
        super().__init__(*args, **kwargs)

    watched_file = None  # Task 4: a path whose text is kept, in `file_then`, as it was when each frame went out

    def send(self, frame, headers=None, **kwargs):
        sent = self.headers_for(frame, kwargs.get("tool"), headers)
        if self.watched_file is not None and isinstance(frame, dict):
            path = Path(self.watched_file)
            self.file_then.append((frame.get("method"), path.read_text(errors="replace") if path.exists() else ""))
        self.written.append((time.monotonic(), copy.deepcopy(frame), {k.lower(): v for k, v in sent.items()}))
        reply = super().send(frame, headers, **kwargs)
        self.replies[frame.get("id")] = reply.message
        self._stand_in(frame, reply)
        return reply


@contextmanager
def stdio_tasks_lab():
    """One watched stdio lab with --tasks on a fresh notes folder, stopped afterwards."""
    with tempfile.TemporaryDirectory(prefix="ex20-") as notes, \
            WatchedStdio.labserver("--tasks", "--notes", notes, timeout=STARTUP_WAIT_S) as stdio:
        stdio.request("server/discover")
        yield stdio


@contextmanager
def lab_pair():
    """A stdio lab and an HTTP lab with --tasks on one fresh notes folder, watched; both stopped afterwards."""
    with tempfile.TemporaryDirectory(prefix="ex20-") as notes, ExitStack() as stack:
        stdio = stack.enter_context(WatchedStdio.labserver("--tasks", "--notes", notes, timeout=STARTUP_WAIT_S))
        # Answered, the stdio lab has set up the task store: two labs creating it at once can find it locked.
        stdio.request("server/discover")
        http = stack.enter_context(WatchedHttp.labserver("--tasks", "--notes", notes, timeout=STARTUP_WAIT_S))
        yield stdio, http, notes


@contextmanager
def given_or_own(labs):
    """The lab pair a caller lends (stdio, HTTP, notes folder: what lab_pair yields), left running; else a fresh pair,
    stopped afterwards. A lent pair may serve many checks in turn, each on tasks of its own: every case starts with
    StandIn.serve, and reads only what it wrote after its own start."""
    if labs is not None:
        yield labs
        return
    with lab_pair() as pair:
        yield pair


def start(wire, name, arguments):
    reply = wire.request("tools/call", {"name": name, "arguments": arguments}, meta=tasks.declare(FORM))
    return reply.result["taskId"]


def finish(wire, task_id, limit_s=30):
    """The check's own poll (not the learner's): the task once it ends."""
    ends = time.monotonic() + limit_s
    while True:
        task = tasks.get(wire, task_id).result
        if task["status"] in TERMINAL or time.monotonic() > ends:
            return task
        time.sleep(0.1)


def the_user(key, request):
    """The check plays the user: an answer for each question review_night asks (N1 for a key it does not know), and
    a decline for the second question the check's wire adds, so that an answer rewritten on its way to tasks/update
    (wrapped in an accept, given a content) differs from what answer returned."""
    if key == SECOND_KEY:
        return {"action": "decline"}
    return {"action": "accept", "content": {"stage": ANSWERS.get(key, "N1") if isinstance(key, str) else "N1"}}


def as_task(value):
    """What a learner returned, if it is a task dict (a tasks/get result); None otherwise."""
    return value if isinstance(value, dict) and "status" in value else None


def wrapped_problem(value, function_name):
    """failed() arguments when the learner returned the task inside its Reply or its JSON-RPC message; else None."""
    if isinstance(value, Reply) or hasattr(value, "result") and hasattr(value, "message"):
        return dict(problem=f"{function_name} returned a {type(value).__name__} object, the whole exchange; the task "
                            "asks for the last tasks/get result, the task dict.",
                    hint="Return reply.result: the dict whose status is completed, failed or cancelled, which "
                         "Task 2's outcome(task) reads.")
    if isinstance(value, dict) and "jsonrpc" in value and isinstance(value.get("result"), dict):
        return dict(problem=f"{function_name} returned the whole JSON-RPC message; the task asks for the last "
                            "tasks/get result, the task dict.",
                    hint="Return message[\"result\"]: the dict whose status is completed, failed or cancelled, "
                         "which Task 2's outcome(task) reads.")
    return None


def since(wire, mark):
    """The frames written after `mark` (only JSON objects: anything else never reached the server as a frame)."""
    return [(at, frame, headers) for at, frame, headers in wire.written if at >= mark and isinstance(frame, dict)]


def _object(value):
    return value if isinstance(value, dict) else {}


def closed_problem(wire, function_name):
    """failed() arguments when the learner's function closed the wire the check still needs; None otherwise."""
    if not wire.closed:
        return None
    return dict(problem=f"{function_name} closed the wire it was given.",
                hint="Leave the wire open: the check reads the task afterwards, and stops the server itself.")


# --- what went on the wire ----------------------------------------------------------------------

def wire_problem(wire, written, task_id):
    """The first thing wrong with the frames a learner wrote about a task, as failed() arguments; None if none."""
    for _, frame, headers in written:
        method = frame.get("method")
        if method == "notifications/cancelled":
            return dict(problem="You sent notifications/cancelled. That notification cancels a request in progress; "
                                "the tools/call that made the task ended when it returned the handle.",
                        hint="A task is cancelled with a tasks/cancel request naming its taskId.")
        if not isinstance(method, str) or not method.startswith("tasks/"):
            continue
        params = _object(frame.get("params"))
        declared = _object(_object(_object(params.get("_meta")).get(frames.CLIENT_CAPABILITIES_KEY)).get("extensions"))
        if tasks.EXTENSION not in declared:
            return dict(problem=f"Your {method} did not declare the tasks extension in its _meta.",
                        server="error -32021 Client did not declare required extension",
                        hint="Every request stands alone in 2026-07-28: declare the extension on each tasks/* "
                             "request too, not only on the tools/call.")
        if wire.transport == "http" and headers.get("mcp-name") != params.get("taskId"):
            got = headers.get("mcp-name")
            return dict(problem=f"Your {method} over HTTP went {'without Mcp-Name' if got is None else f'with Mcp-Name {got!r}'}.",
                        server="HTTP 400, error -32020 mcp-name header does not match the request body's 'taskId'",
                        hint="Over Streamable HTTP, tasks/get, tasks/update and tasks/cancel repeat params.taskId in "
                             "the Mcp-Name header, as tools/call repeats the tool name.",
                        more="wire.send(frame, {\"Mcp-Name\": task_id}), or wire.request(..., headers=...) on an HttpWire.")
        if method == "tasks/update" and "inputResponses" not in params:
            held = ", ".join(key for key in params if key not in ("taskId", "_meta")) or "nothing but taskId"
            return dict(problem=f"Your tasks/update had no inputResponses (its params held {held}): the "
                                "server never got your answers.",
                        hint="params.inputResponses is an object keyed like inputRequests, each value what answer "
                             "returned: {\"taskId\": ..., \"inputResponses\": {\"epoch-7\": {\"action\": \"accept\", ...}}}.")
    return None


def pace_problem(wire, written, task_id):
    """A tasks/get sent sooner after the previous one than the task's pollIntervalMs asked."""
    polls = [(at, frame) for at, frame, _ in written
             if frame.get("method") == "tasks/get" and _object(frame.get("params")).get("taskId") == task_id]
    intervals = {exchange.id: _poll_interval(exchange) for exchange in wire.transcript if exchange.method == "tasks/get"}
    intervals.update(wire.served)  # what the learner read, where the check's wire changed it
    shown_before = []
    for (before, first), (after, _) in zip(polls, polls[1:]):
        asked = intervals.get(first.get("id"))
        if wire.statuses.get(first.get("id")) in TERMINAL:
            continue  # a poll after the end breaks another rule, which after_end_problem names
        if _answered_between(written, before, after):
            continue  # a poll right after a tasks/update, to see it taken, as the lesson's does: not judged
        if asked is None and wire.served.get(first.get("id"), 0) is None and after - before < OWN_WAIT_S:
            return dict(problem=f"You polled {round((after - before) * 1000)} ms after a tasks/get whose result had "
                                "no pollIntervalMs.",
                        hint="pollIntervalMs is optional: without it the extension names no interval, but the "
                             "interval is there so that clients do not overwhelm the server. Wait one of your own "
                             "(the last one the task gave, or a second): the check takes any pause of "
                             f"{round(OWN_WAIT_S * 1000)} ms or more there.")
        if asked is not None and after - before < asked / 1000 - PACE_SLACK_S:
            changed = next((earlier for earlier in shown_before
                            if earlier != asked and abs(after - before - earlier / 1000) <= OLD_PACE_S), None)
            why = (f" Its previous replies asked for {changed} ms: the server raised pollIntervalMs, as a busy "
                   "server may, and your loop kept the old pace." if changed is not None else "")
            return dict(problem=f"You polled {round((after - before) * 1000)} ms after the previous tasks/get; "
                                f"the task asked for {asked} ms (pollIntervalMs).{why}",
                        hint="Sleep pollIntervalMs between polls, read from the latest tasks/get reply (it may "
                             "change); a server may rate-limit a client that polls faster.")
        if asked is not None:
            shown_before.append(asked)
    return None


def _answered_between(written, before, after):
    """Whether the poll at `after` came right after a tasks/update, sent since the poll at `before`, that answered a
    key no earlier tasks/update had answered."""
    answered_before, fresh = set(), False
    for at, frame, _ in written:
        if frame.get("method") != "tasks/update" or at > after:
            continue
        keys = set(_object(_object(frame.get("params")).get("inputResponses")))
        if at >= before and after - at <= AT_ONCE_S and keys - answered_before:
            fresh = True
        answered_before |= keys
    return fresh


def after_end_problem(wire, written, task_id, function_name):
    """failed() arguments when the learner polled again after a tasks/get result showed a terminal status."""
    polls = [frame for _, frame, _ in written
             if frame.get("method") == "tasks/get" and _object(frame.get("params")).get("taskId") == task_id]
    for number, frame in enumerate(polls):
        status = wire.statuses.get(frame.get("id"))
        if status in TERMINAL and number + 1 < len(polls):
            more = len(polls) - number - 1
            return dict(problem=f"{function_name} polled {more} more time{'s' if more > 1 else ''} after a tasks/get "
                                f"result showed {status}.",
                        hint="completed, failed and cancelled are ends: a task never leaves them. Return the "
                             "tasks/get result that showed one, without polling again.")
    return None


def sent_answer_problem(returned, written):
    """failed() arguments when a tasks/update sent, for a key, anything but what answer(key, request) returned."""
    for _, frame, _ in written:
        if frame.get("method") != "tasks/update":
            continue
        for key, sent in _object(_object(frame.get("params")).get("inputResponses")).items():
            if key not in returned:
                return dict(problem=f"follow_task sent {shown(sent)} for {key!r} with tasks/update, but never called "
                                    f"answer({key!r}, request).",
                            hint="The answers are the user's: call answer(key, request) for each question and send "
                                 "what it returns, never an answer of your own.")
            if sent != returned[key]:
                return dict(problem=f"follow_task sent {shown(sent)} for {key!r} with tasks/update; answer returned "
                                    f"{shown(returned[key])}.",
                            hint="Send what answer(key, request) returns as the value for its key, unchanged: it is "
                                 "the user's answer, already an ElicitResult ({\"action\": \"accept\", "
                                 "\"content\": {...}}, or a decline or cancel, which has no content).")
    return None


def slow_poll_problem(wire, written, task_id):
    """A tasks/get sent long after the previous one asked (a fixed sleep longer than pollIntervalMs)."""
    polls = [(at, frame) for at, frame, _ in written
             if frame.get("method") == "tasks/get" and _object(frame.get("params")).get("taskId") == task_id]
    for (before, first), (after, _) in zip(polls, polls[1:]):
        asked = wire.served.get(first.get("id"))
        if wire.statuses.get(first.get("id")) in TERMINAL:
            continue  # a poll after the end breaks another rule, which after_end_problem names
        if asked is not None and after - before > asked / 1000 + SILENCE_SLACK_S:
            return dict(problem=f"You polled {after - before:.1f} s after a tasks/get that asked for {asked} ms "
                                "(pollIntervalMs).",
                        hint="Sleep the pollIntervalMs of the latest reply, not a fixed time: a longer sleep sees the "
                             "task's questions and its end late, a shorter one may get you rate-limited.")
    return None


def answer_problem(calls, wire):
    """failed() arguments when follow_task called answer(key, request) with anything but a key and its entry."""
    entries = {}
    for asked in wire.shown.values():
        entries.update(asked)
    for key, request in calls:
        if not isinstance(key, str) or key not in entries:
            return dict(problem=f"follow_task called answer with {shown(key)} as the key; no inputRequests held it.",
                        hint="Call answer(key, request) with a key of inputRequests first and its entry second.")
        entry = entries[key]
        if request == entry:
            continue
        if request is None:
            given = "None"
        elif request == _object(entry).get("params"):
            given = "request[\"params\"], the params alone"
        elif isinstance(request, dict) and key in request:
            given = "the whole inputRequests object"
        elif isinstance(request, dict) and "inputRequests" in request:
            given = "the whole tasks/get result"
        else:
            given = shown(request)
        return dict(problem=f"follow_task called answer({key!r}, request) with {given} as the request; the task "
                            "asks for that key's inputRequests entry, {\"method\": \"elicitation/create\", "
                            "\"params\": {...}}.",
                    hint="Pass task[\"inputRequests\"][key] unchanged: its method says what kind of request it is "
                         "(elicitation/create, sampling/createMessage, roots/list), and an answer function reads "
                         "params.requestedSchema from it, as the lesson's answer_with_second_stage does.")
    return None


def round_problem(wire, written, task_id):
    """A tasks/get result showed questions not answered yet, and some were still unanswered at the next poll."""
    answered, open_keys = set(), []
    for _, frame, _ in written:
        params = _object(frame.get("params"))
        if frame.get("method") == "tasks/update":
            answered.update(_object(params.get("inputResponses")))
        if frame.get("method") != "tasks/get" or params.get("taskId") != task_id:
            continue
        left = [key for key in open_keys if key not in answered]
        if left:
            done = [key for key in open_keys if key in answered]
            said = ("none of them" if not done else
                    "only " + " and ".join(repr(key) for key in done))
            count = f"{len(open_keys)} question{'s' if len(open_keys) > 1 else ''}"
            return dict(problem=f"A tasks/get result showed {count} you had not answered, "
                                f"{' and '.join(repr(key) for key in open_keys)}; before your next poll you answered "
                                f"{said}.",
                        hint="inputRequests holds every outstanding question, and the task stays input_required "
                             "until each one is answered: call answer for every key you have not answered yet, not "
                             "only the first, and send them before you poll again.")
        open_keys = [key for key in wire.shown.get(frame.get("id"), {}) if key not in answered]
    return None


def _poll_interval(exchange):
    for payload in exchange.down_payloads:
        try:
            result = json.loads(payload).get("result") or {}
        except (ValueError, AttributeError):
            continue
        if isinstance(result, dict):
            return result.get("pollIntervalMs")
    return None


def repeat_problem(written):
    """A key answered twice with tasks/update."""
    answered = []
    for _, frame, _ in written:
        if frame.get("method") == "tasks/update":
            for key in _object(_object(frame.get("params")).get("inputResponses")):
                if key in answered:
                    return dict(problem=f"You answered {key!r} twice with tasks/update.",
                                hint="A task keeps showing a question in inputRequests until it has taken the answer, "
                                     "so the same key comes back on the next poll. Remember the keys you answered and "
                                     "answer each once (the spec asks clients to deduplicate keys across polls).")
                answered.append(key)
    return None


# --- task 1: follow a task to its end -----------------------------------------------------------

def check_follow(follow_task, paces=None, *, labs=None, guard_s=GUARD_S, ended_guard_s=ENDED_GUARD_S):
    """follow_task(wire, task_id, answer) must poll at pollIntervalMs, answer each question once, return the end.

    `paces` ({transport: {"asking": ms, "quiet": (ms, ...)}}, see StandIn) are the pollIntervalMs the wires serve;
    drawn for the run when None. `labs`, a pair from lab_pair() that the caller keeps, is used instead of a fresh
    one (the check's tests share one across rows whose answers neither hang nor close a wire). `guard_s` is how long
    follow_task may run before it counts as hung, `ended_guard_s` the same on a task that has failed already.
    """
    if missing(follow_task):
        not_done("define follow_task(wire, task_id, answer) first.")
        return
    paces = draw_follow_paces() if paces is None else paces
    with given_or_own(labs) as (stdio, http, _):
        for wire in (stdio, http):
            if not _follow_on(follow_task, wire, paces[wire.transport], guard_s):
                return
        if not _follow_failed_on(follow_task, stdio, ended_guard_s):
            return
    passed("follow_task drove review_night to completed on stdio and over HTTP: it slept the pollIntervalMs of the "
           "latest reply between polls (the check's wires served another one, drawn for this run, at each poll, "
           "left it out of one reply on each wire and sent ttlMs null), called answer once for each question with "
           "its inputRequests entry and sent what answer returned, answered both of the two open at once before the "
           "next poll, sent Mcp-Name on every HTTP tasks/* request and stopped at the terminal status; and it "
           "returned a task that had failed already after one poll.")


def failed_task(wire):
    """A review_night that has failed already: the check answered its first question with a stage the lab rejects."""
    task_id = start(wire, "review_night", {"night": "P07", "pause_ms": 10})
    _wait_for(wire, task_id, "input_required")
    tasks.update(wire, task_id, dict(INVALID_ANSWER))
    finish(wire, task_id)
    return task_id


def _follow_failed_on(follow_task, wire, guard_s):
    wire.serve()
    task_id = failed_task(wire)
    mark = time.monotonic()
    outcome = attempt(follow_task, wire, task_id, the_user, guard=guard_s)
    task = as_task(outcome.value)
    given = ("given a review_night that had failed already (the check answered its first question with a stage the "
             "lab refuses, so the task's error names that answer, not yours)")
    if outcome.hung:
        failed(f"follow_task, {given}, was still polling {guard_s:g} s later; expected the failed task.",
               hint="Stop at any of the three ends, completed, failed or cancelled, and return that tasks/get "
                    "result: a loop that waits for completed alone never returns from a task that failed.")
        return False
    if outcome.error is not None:
        failed(f"follow_task, {given}, raised {outcome.error_text}; expected the failed task.",
               hint="failed is an end like completed: return its tasks/get result, whose error says why, and let "
                    "the caller decide (Task 2's outcome reads it); do not raise.")
        return False
    if task is None or task.get("status") != "failed":
        failed(f"follow_task, {given}, returned {shown(outcome.value)}; expected the failed task.",
               hint="Return the tasks/get result that showed failed, as you return the one that shows completed.")
        return False
    again = after_end_problem(wire, since(wire, mark), task_id, "follow_task, given a task that had failed already,")
    if again:
        failed(again.pop("problem"), **again)
        return False
    return True


def _follow_on(follow_task, wire, paces, guard_s):
    wire.serve()
    task_id = start(wire, "review_night", dict(REVIEW))
    wire.serve(paces=paces["quiet"], asking_pace=paces["asking"], second_question=True, unlimited_from=UNLIMITED_FROM,
               hold_end=True)
    mark = time.monotonic()
    calls, returned = [], {}

    def answer(key, request):
        try:
            calls.append((key, copy.deepcopy(request)))
        except Exception:  # a learner's object that cannot be copied is judged as it is
            calls.append((key, request))
        response = the_user(key, request)
        if isinstance(key, str):
            returned.setdefault(key, copy.deepcopy(response))
        return response

    outcome = attempt(follow_task, wire, task_id, answer, guard=guard_s)
    if outcome.not_done:
        not_done("follow_task still raises NotImplementedError.")
        return False
    written = since(wire, mark)
    for problem in (wire_problem(wire, written, task_id), repeat_problem(written),
                    pace_problem(wire, written, task_id), slow_poll_problem(wire, written, task_id),
                    closed_problem(wire, "follow_task"), answer_problem(calls, wire)):
        if problem:
            failed(problem.pop("problem"), **problem)
            return False
    asked = [key for key, _ in calls]
    repeats = [key for key in dict.fromkeys(asked) if asked.count(key) > 1]
    if repeats:
        failed(f"follow_task called answer for {repeats[0]!r} {asked.count(repeats[0])} times; the user would be "
               "asked the same question on every poll.",
               hint="Call answer(key, request) once for each key you have not answered yet, before you build the "
                    "tasks/update: keep a set of the keys you answered.")
        return False
    for problem in (sent_answer_problem(returned, written),
                    after_end_problem(wire, written, task_id, "follow_task")):
        if problem:
            failed(problem.pop("problem"), **problem)
            return False
    rejected = _rejected(wire, "tasks/update", written)
    if rejected:
        failed(f"The lab answered your tasks/update with error {rejected}.",
               hint="params.inputResponses is an object keyed like inputRequests, each value what answer returned: "
                    "{\"taskId\": ..., \"inputResponses\": {\"epoch-7\": {\"action\": \"accept\", ...}}}.")
        return False
    unanswered = round_problem(wire, written, task_id)
    if unanswered:
        failed(unanswered.pop("problem"), **unanswered)
        return False
    if outcome.hung:
        failed(f"follow_task was still running after {guard_s:g} seconds on {wire.transport}.",
               hint="Stop polling at a terminal status: completed, failed or cancelled.")
        return False
    if outcome.error is not None:
        last = next((frame.get("id") for _, frame, _ in reversed(written) if frame.get("method") == "tasks/get"), None)
        raised = optional_fields_problem(outcome, "follow_task", f" on {wire.transport}", wire.results.get(last))
        failed(raised.pop("problem"), **raised)
        return False
    wrapped = wrapped_problem(outcome.value, "follow_task")
    if wrapped:
        failed(wrapped.pop("problem"), **wrapped)
        return False
    task = as_task(outcome.value)
    if task is None or task.get("status") not in tasks.STATUSES:
        failed(f"follow_task returned {shown(outcome.value)}; expected the last tasks/get result, a task dict.")
        return False
    if task["status"] == "input_required":
        failed("follow_task returned while the task was input_required.",
               hint="input_required is not an end: answer the questions in inputRequests with tasks/update, then "
                    "keep polling until completed, failed or cancelled.")
        return False
    if task["status"] not in TERMINAL:
        failed(f"follow_task returned a task that is still {task['status']}.",
               hint="Keep polling until the status is completed, failed or cancelled.")
        return False
    changed = _changed_result(wire, written, task)
    if changed:
        failed(f"follow_task returned the last tasks/get result changed: {changed}.",
               hint="Return the tasks/get result as it came, unchanged: Task 2's outcome reads it, and a field you "
                    "drop (_meta, statusMessage) or alter is one the caller never sees.")
        return False
    if not asked:
        failed("follow_task never called answer(key, request), yet the task asked three questions.",
               hint="When the status is input_required, each entry of inputRequests is a question for the user: "
                    "pass its key and request to answer, and send what it returns with tasks/update.")
        return False
    final = finish(wire, task_id)
    if final["status"] == "failed":
        failed(f"review_night ended failed: {_object(final.get('error')).get('message')}.",
               hint="Send what answer(key, request) returns as the value for its key, unchanged: it is already an "
                    "ElicitResult ({\"action\": \"accept\", \"content\": {...}}).")
        return False
    if task["status"] != final["status"] or final["status"] != "completed":
        failed(f"follow_task returned a {task['status']} task; the task ended {final['status']}.",
               hint="Return the tasks/get result that showed the terminal status.")
        return False
    return True


def _changed_result(wire, written, task):
    """What differs between the task a learner returned and the last tasks/get result it read; None if nothing."""
    last = next((frame.get("id") for _, frame, _ in reversed(written) if frame.get("method") == "tasks/get"), None)
    served = wire.results.get(last)
    if served is None or task == served:
        return None
    missing_keys = [key for key in served if key not in task]
    if missing_keys:
        return f"{', '.join(missing_keys)} left out"
    added = [key for key in task if key not in served]
    if added:
        return f"{', '.join(map(str, added))} added"
    altered = [key for key in served if task[key] != served[key]]
    return f"{', '.join(altered)} not as served"


def _failing_line(error):
    """The source line the learner's code raised at (the last frame of the traceback), or ""."""
    frames_ = traceback.extract_tb(error.__traceback__) if error is not None else []
    return (frames_[-1].line or "") if frames_ else ""


def optional_fields_problem(outcome, function_name, where="", last=None):
    """failed() arguments when a learner's function raised: the field a task may leave out or set to null that broke
    it, when that is the cause, with the hint. `last` is the last tasks/get result it read: where the line that raised
    names neither field, a None met in arithmetic is the one that result lacked."""
    text, line = outcome.error_text, _failing_line(outcome.error)
    problem = f"{function_name} raised {text}{where}"
    key_error = isinstance(outcome.error, KeyError) and outcome.error.args[:1] == ("pollIntervalMs",)
    none_error = isinstance(outcome.error, TypeError) and "NoneType" in text
    if none_error and "pollIntervalMs" not in line and "ttlMs" not in line and last is not None:
        line = "pollIntervalMs" if "pollIntervalMs" not in last else "ttlMs" if last.get("ttlMs", 0) is None else ""
    if key_error or none_error and "pollIntervalMs" in line and "ttlMs" not in line:
        return dict(problem=f"{problem}: the check's wire left pollIntervalMs out of that reply, as a server may.",
                    hint="pollIntervalMs is optional in a task (pollIntervalMs?: number), and the check's wire left it "
                         "out of one reply, as a server may: read it with .get(), and when it is missing wait an "
                         "interval of your own (the last one the task gave, or a second).")
    if "ttlMs" in text or none_error and "ttlMs" in line:
        return dict(problem=f"{problem}: ttlMs was null in that reply, as a server may send it.",
                    hint="ttlMs may be null, which means unlimited: the task does not expire (the check's wire "
                         "served null, as a server may). Use ttlMs only when it is a number; and pollIntervalMs may "
                         "be missing altogether.")
    if none_error:
        return dict(problem=f"{problem}.",
                    hint="ttlMs may be null, which means unlimited: the task does not expire (the check's wire "
                         "served null, as a server may). Use ttlMs only when it is a number; and pollIntervalMs may "
                         "be missing altogether.")
    return dict(problem=f"{problem}.")


# --- task 2: what a finished task means ---------------------------------------------------------

def outcome_cases(labs=None):
    """(task, what it means) for a task in each status the lab can show, made on a fresh lab (or on the stdio lab of
    `labs`, a pair the caller keeps)."""
    with stdio_tasks_lab() if labs is None else nullcontext(labs[0]) as stdio:
        stdio.serve()
        done = finish(stdio, start(stdio, "score_night", {"night": "P07", "epochs": 1, "pause_ms": 0}))
        tool_error = finish(stdio, start(stdio, "score_night", {"night": "P99"}))
        cancelled_id = start(stdio, "score_night", {"night": "P08", "pause_ms": 300})
        tasks.cancel(stdio, cancelled_id)
        review = start(stdio, "review_night", {"night": "P07", "pause_ms": 10})
        waiting = _wait_for(stdio, review, "input_required")
        tasks.update(stdio, review, {"epoch-7": {"action": "accept", "content": {"stage": "N4"}}})
        failed_task = finish(stdio, review)
        working = tasks.get(stdio, start(stdio, "score_night", {"night": "P07", "pause_ms": 500})).result
        cancelled = finish(stdio, cancelled_id)
    return [(done, "done"), (tool_error, "tool error"), (failed_task, "failed"), (cancelled, "cancelled"),
            (waiting, "not finished"), (working, "not finished"), *other_servers_results(done, tool_error)]


QUIET_MESSAGE = "Finished."  # a statusMessage that says nothing of an error
NO_ERRORS_MESSAGE = "Finished: no errors in the recording."  # one that talks of errors about a plain result


def other_servers_results(done, tool_error):
    """Four completed tasks another server may send, made from the lab's: isError left out (the schema: "If not set,
    this is assumed to be false"), a plain result whose text talks of errors, and two whose statusMessage (free text:
    "human-readable message describing the current task state") reads otherwise than the result: a tool error that says only that it finished, and a
    plain result that speaks of errors."""
    silent = copy.deepcopy(done)
    silent["result"].pop("isError", None)
    wordy = copy.deepcopy(done)
    wordy["result"]["content"] = [{"type": "text", "text": "No errors in the recording. " + _text(done["result"])}]
    quiet_error = {**copy.deepcopy(tool_error), "statusMessage": QUIET_MESSAGE}
    no_errors = {**copy.deepcopy(done), "statusMessage": NO_ERRORS_MESSAGE}
    return [(silent, "done"), (wordy, "done"), (quiet_error, "tool error"), (no_errors, "done")]


def _text(result):
    return " ".join(block.get("text", "") for block in result.get("content", []) if isinstance(block, dict))


def _wait_for(wire, task_id, status):
    for _ in range(200):
        task = tasks.get(wire, task_id).result
        if task["status"] == status:
            return task
        time.sleep(0.05)
    return task


def check_outcome(outcome, cases=None):
    """outcome(task) must say what a tasks/get result means: done, tool error, failed, cancelled or not finished."""
    if missing(outcome):
        not_done("define outcome(task) first.")
        return
    cases = outcome_cases() if cases is None else cases
    for task, expected in cases:
        got = attempt(outcome, copy.deepcopy(task))
        if got.not_done:
            not_done("outcome still raises NotImplementedError.")
            return
        if got.error is not None:
            failed(f"outcome raised {got.error_text} for a {task['status']} task: {short(task)}",
                   hint="isError is optional in a CallToolResult, and missing means false: read it with "
                        ".get(\"isError\", False)." if "isError" in got.error_text else
                   "Read status first; result, error and inputRequests exist only in their own status.")
            return
        if got.value != expected:
            failed(f"outcome gave {shown(got.value)} for {short(task)}; expected {expected!r}.",
                   **_outcome_hint(task, got.value, outcome, expected))
            return
    passed(f"outcome read all {len(cases)} tasks right: a tool error is a completed task, input_required and working are not "
           "finished, failed carries a JSON-RPC error.")


LABELS = ("done", "tool error", "failed", "cancelled", "not finished")


def _outcome_hint(task, said, outcome, expected):
    if said not in LABELS:
        return dict(hint="Return one of the five labels exactly as the task writes them: "
                         + ", ".join(f'"{label}"' for label in LABELS) + "; not the status name.")
    if task["status"] == "completed" and said in ("done", "tool error") and expected != said:
        named = _misread_is_error(task, outcome, expected)
        if named:
            return dict(hint=named)
    if task["status"] == "completed" and task["result"].get("isError") and said == "failed":
        return dict(hint="A tool that reports isError: true has done its job: the task is completed, and the error is "
                         "in result for the model to read. failed is only for a JSON-RPC error, which comes in error.")
    if task["status"] == "completed" and "isError" not in task["result"] and said != "done":
        return dict(hint="This result has no isError. CallToolResult's isError is optional: \"If not set, this is "
                         "assumed to be false (the call was successful)\". Read a missing isError as false.")
    if (task["status"] == "completed" and task["result"].get("isError") is False and said == "tool error"
            and "error" not in _text(task["result"]).lower()):
        return dict(hint="isError is here, and it is false: read its value (result.get(\"isError\", False)), not "
                         "whether the key is present.")
    if task["status"] == "completed" and task["result"].get("isError") is True and said == "done":
        return dict(hint="A completed task whose result has isError: true is a tool error: test "
                         "task[\"result\"].get(\"isError\", False).")
    if task["status"] == "completed" and not task["result"].get("isError") and said != "done":
        return dict(hint="isError is false here, whatever the text says: decide from result.isError, never from the "
                         "words of the content, which are written for the model.")
    if task["status"] == "input_required":
        return dict(hint="input_required is not an end: the task waits for answers and then works on.")
    if task["status"] == "completed":
        return dict(hint="A completed task carries the tool's whole result; look at result.isError to tell a tool "
                         "error from a plain result.")
    return dict(hint="Decide from status, then (for completed) from result.isError.")


def _misread_is_error(task, outcome, expected):
    """Where outcome looked instead of result.isError, found by asking it again about the same task with isError also
    where it looked (or statusMessage saying what result says); None when no such place puts it right."""
    error = expected == "tool error"

    def told(change):
        probe = copy.deepcopy(task)
        change(probe)
        return attempt(outcome, probe).value == expected

    def on_top(probe):
        probe["isError"] = error

    def as_text(probe):
        probe["result"]["isError"] = "true" if error else "false"

    def on_block(probe):
        for block in probe["result"].get("content", []):
            if isinstance(block, dict):
                block["isError"] = error

    def in_message(probe):
        probe["statusMessage"] = "Finished with a tool error." if error else QUIET_MESSAGE

    if told(in_message):
        return ("statusMessage is free text for a person (the extension's Task: an \"optional human-readable message "
                "describing the current task state\"), worded as each server likes: this one's says "
                + shown(task.get("statusMessage")) + ". Decide from task[\"result\"].get(\"isError\", False), never "
                "from the message's words.")
    if error and told(on_top):
        return ("isError sits inside the task's result (task[\"result\"]), the tool's CallToolResult, not on the task "
                "itself: test task[\"result\"].get(\"isError\", False).")
    if error and told(on_block):
        return ("isError belongs to the CallToolResult (task[\"result\"]), not to a block of its content: test "
                "task[\"result\"].get(\"isError\", False).")
    if error and told(as_text):
        return ("isError is the JSON boolean true here (Python True), which no string equals: test "
                "task[\"result\"].get(\"isError\", False) as a boolean.")
    return None


# --- task 3: cancel at a deadline ---------------------------------------------------------------

def check_deadline(stop_at_deadline, deadlines=None, *, pause_ms=SCORE_PAUSE_MS, labs=None, guard_s=GUARD_S):
    """stop_at_deadline(wire, task_id, deadline_s) must poll, and cancel with tasks/cancel once the deadline passes.

    `deadlines` ({transport: (deadline_s, paces[, cross_ms])}, drawn for the run when None, see draw_deadlines) are the
    deadline each wire gives and the pollIntervalMs it serves (see StandIn; None keeps the lab's SCORE_POLL_MS);
    `pause_ms` the pace of the 20 epochs
    of the task it hands over, which must outlast both deadlines. `labs` and `guard_s` as in check_follow.
    """
    if missing(stop_at_deadline):
        not_done("define stop_at_deadline(wire, task_id, deadline_s) first.")
        return
    deadlines = draw_deadlines() if deadlines is None else deadlines
    with given_or_own(labs) as (stdio, http, _):
        for wire in (stdio, http):
            deadline, paces, *cross = deadlines[wire.transport]
            if not _deadline_on(stop_at_deadline, wire, deadline, paces, cross[0] if cross else None, pause_ms,
                                guard_s):
                return
        if not _ended_first_on(stop_at_deadline, stdio, deadlines["stdio"][0], guard_s):
            return
    passed("stop_at_deadline slept the pollIntervalMs of the latest reply between polls (the check's wires served "
           "another one at each poll, drawn for this run with each wire's deadline), cancelled with tasks/cancel by "
           "the deadline it was given, with no poll still due before it, and returned \"cancelled\"; the task ended "
           "cancelled. Given a task that had failed already, it returned \"failed\" after one poll.")


def _ended_first_on(stop_at_deadline, wire, deadline, guard_s):
    """A task that ends before the deadline: one poll, no cancel, its status returned."""
    wire.serve()
    task_id = failed_task(wire)
    mark = time.monotonic()
    outcome = attempt(stop_at_deadline, wire, task_id, deadline, guard=guard_s)
    written = since(wire, mark)
    polls = [frame for _, frame, _ in written if frame.get("method") == "tasks/get"]
    cancelled = any(frame.get("method") == "tasks/cancel" for _, frame, _ in written)
    hint = ("Read status after every poll: completed, failed and cancelled are ends, and when the task has ended "
            "before the deadline you return that status (task[\"status\"]) and send nothing more.")
    if len(polls) > 1 or cancelled:
        did = " and ".join(([f"polled {len(polls) - 1} more time{'s' if len(polls) > 2 else ''}"] if len(polls) > 1
                            else []) + (["sent tasks/cancel"] if cancelled else []))
        failed(f"stop_at_deadline, given a task that had already failed, {did}; its first tasks/get showed failed.",
               hint=hint)
        return False
    if outcome.hung or outcome.error is not None or outcome.value != "failed":
        did = (f"was still running {guard_s:g} s later" if outcome.hung else
               f"raised {outcome.error_text}" if outcome.error is not None else f"returned {shown(outcome.value)}")
        failed(f"stop_at_deadline, given a task that had already failed, {did}; expected \"failed\", the status "
               "it ended with.", hint=hint)
        return False
    return True


def _deadline_on(stop_at_deadline, wire, deadline, paces, cross_ms, pause_ms, guard_s):
    wire.serve(paces=paces)
    task_id = start(wire, "score_night", {"night": "P07", "pause_ms": pause_ms})
    mark = time.monotonic()
    if cross_ms is not None:
        wire.cross = (mark + deadline, cross_ms)
    outcome = attempt(stop_at_deadline, wire, task_id, deadline, guard=guard_s)
    if outcome.not_done:
        not_done("stop_at_deadline still raises NotImplementedError.")
        return False
    written = since(wire, mark)
    # Polls after the cancel, to see the task end, are not judged: the task says so.
    cancel_at = next((at for at, frame, _ in written if frame.get("method") == "tasks/cancel"), None)
    before_cancel = written if cancel_at is None else [sent for sent in written if sent[0] < cancel_at]
    for problem in (wire_problem(wire, written, task_id), pace_problem(wire, before_cancel, task_id),
                    closed_problem(wire, "stop_at_deadline")):
        if problem:
            if problem["hint"].startswith("Sleep pollIntervalMs") and _polled_at_deadline(wire, written, task_id,
                                                                                           mark, deadline):
                problem["hint"] = ("Your last poll came at the deadline, sooner than pollIntervalMs after the one "
                                   "before: a poll is too soon even when it is the last. When the next poll would "
                                   "come after the deadline, cancel without it (now, or once the deadline is there); "
                                   "poll after the cancel if you want to see the task end.")
                problem["problem"] = problem["problem"].split(" Its previous replies")[0]  # not an old pace kept
            failed(problem.pop("problem"), **problem)
            return False
    if outcome.error is not None:
        failed(f"stop_at_deadline raised {outcome.error_text} on {wire.transport}.")
        return False
    cancels = [at - mark for at, frame, _ in written if frame.get("method") == "tasks/cancel"]
    if not cancels:
        failed(f"stop_at_deadline sent no tasks/cancel; the task runs for {20 * pause_ms / 1000:g} s and the deadline "
               f"was {deadline:g} s.",
               hint="Once the deadline has passed (time.monotonic() against a start time), send tasks/cancel.")
        return False
    # A right loop cancels when now + the interval it read last comes after the deadline, and the cancel goes out
    # after that now: however slow the machine, the cancel plus that interval is past the deadline.
    last_read = [wire.served.get(frame.get("id")) for at, frame, _ in written
                 if frame.get("method") == "tasks/get" and at < mark + cancels[0]]
    read_ms = next((ms for ms in reversed(last_read) if ms is not None), SCORE_POLL_MS)
    if cancels[0] + read_ms / 1000 < deadline - PACE_SLACK_S:
        failed(f"stop_at_deadline cancelled {cancels[0]:.2f} s after it started, before the {deadline:g} s deadline: "
               f"its last tasks/get asked for {read_ms} ms, so a poll was due at "
               f"{cancels[0] + read_ms / 1000:.2f} s at the latest, still before the deadline.",
               hint="Poll until the deadline, deadline_s as given (a float, not rounded or cut to whole seconds): "
                    "cancel when the next poll would come after it, or once it has passed.")
        return False
    silence = _silence_problem(wire, written, task_id, mark)
    if silence:
        failed(silence.pop("problem"), **silence)
        return False
    late_polls = [at for at, frame, _ in written if frame.get("method") == "tasks/get"
                  and mark + deadline < at < mark + cancels[0]]
    if len(late_polls) > POLLS_AFTER_DEADLINE:
        failed(f"stop_at_deadline sent {len(late_polls)} tasks/get after the {deadline:g} s deadline had passed, "
               f"and cancelled only at {cancels[0]:.1f} s.",
               hint="Compare the time with the deadline after every poll (or before each sleep): the first poll "
                    "that finds the deadline passed is the last one, and the cancel follows it.")
        return False
    if cancels[0] > deadline + CANCEL_SLACK_S:
        failed(f"stop_at_deadline cancelled {cancels[0]:.1f} s after it started, {cancels[0] - deadline:.1f} s "
               f"after the {deadline:g} s deadline: it slept past the deadline before it cancelled.",
               hint="Before each sleep, compare now + pollIntervalMs with the deadline, deadline_s as given (a float, "
                    "not rounded to whole seconds): if the next poll would come after it, cancel now (or sleep only "
                    "until the deadline, then cancel).")
        return False
    final = finish(wire, task_id)
    if final["status"] != "cancelled":
        rejected = _rejected(wire, "tasks/cancel", written)
        failed(f"The task ended {final['status']}, not cancelled"
               + (f": the lab answered your tasks/cancel with error {rejected}." if rejected else "."),
               **(dict(hint="tasks/cancel names the task as params.taskId, as tasks/get does.") if rejected else {}))
        return False
    returned = _deadline_return_problem(outcome.value)
    if returned:
        failed(returned.pop("problem"), **returned)
        return False
    return True


def _polled_at_deadline(wire, written, task_id, mark, deadline):
    """Whether the poll that came too soon is the last tasks/get before the cancel, at the deadline or later (every
    poll before it kept the pace)."""
    cancel_at = next((at for at, frame, _ in written if frame.get("method") == "tasks/cancel"), None)
    if cancel_at is None:
        return False
    polls = [at for at, frame, _ in written if frame.get("method") == "tasks/get" and at < cancel_at]
    if not polls or polls[-1] < mark + deadline - PACE_SLACK_S:
        return False
    return pace_problem(wire, [sent for sent in written if sent[0] < polls[-1]], task_id) is None


def _deadline_return_problem(value):
    """failed() arguments when stop_at_deadline, having cancelled, did not return "cancelled"."""
    if value == "cancelled":
        return None
    if isinstance(value, Reply) or hasattr(value, "result") and hasattr(value, "message"):
        given = f"a {type(value).__name__} object"
    elif isinstance(value, dict) and "status" in value:
        given = f"the task dict (status {shown(value['status'])})"
    else:
        given = shown(value)
    return dict(problem=f"stop_at_deadline cancelled the task, then returned {given}; the task asks for the status "
                        "you leave the task in, the string \"cancelled\".",
                hint="Return \"cancelled\" once you have sent tasks/cancel, or the status the task ended with "
                     "(task[\"status\"]) when it ends before the deadline.")


def _silence_problem(wire, written, task_id, mark):
    """A stretch before the cancel with no poll, longer than the pollIntervalMs last read and a busy machine's delay."""
    cancel_at = next(at for at, frame, _ in written if frame.get("method") == "tasks/cancel")
    # Each moment with the pollIntervalMs the learner had read then: the handle's before the first poll.
    moments = [(mark, SCORE_POLL_MS)] + [
        (at, wire.served.get(frame.get("id"), SCORE_POLL_MS)) for at, frame, _ in written
        if frame.get("method") == "tasks/get" and _object(frame.get("params")).get("taskId") == task_id
        and at < cancel_at]
    moments.append((cancel_at, None))
    polls = len(moments) - 2
    said = "without a single tasks/get" if polls == 0 else f"with {polls} tasks/get"
    for (before, asked_ms), (after, _) in zip(moments, moments[1:]):
        if asked_ms is not None and after - before > asked_ms / 1000 + SILENCE_SLACK_S:
            return dict(problem=f"stop_at_deadline waited {after - before:.1f} s between two requests, {said} before "
                                f"it cancelled; the task asked for a poll every {asked_ms} ms.",
                        hint="Keep polling at pollIntervalMs until the deadline: the task may end, fail or ask for "
                             "input while you wait, and only a poll shows it.")
    return None


def _rejected(wire, method, written):
    """The error a request of `method` among the frames `written` got, as 'code message'; None when every one was
    accepted."""
    ids = {frame.get("id") for _, frame, _ in written if frame.get("method") == method}
    for exchange in wire.transcript:
        if exchange.method != method or exchange.id not in ids:
            continue
        for payload in exchange.down_payloads:
            try:
                error = json.loads(payload).get("error")
            except (ValueError, AttributeError):
                continue
            if isinstance(error, dict):
                return f"{error.get('code')} {error.get('message')}"
    return None


# --- task 4: survive a restart ------------------------------------------------------------------

# Task 4: the nights start_and_save is asked for, in order (the lab has two), each with a file of its own; resume
# follows the RESUMED-th, started between the others, so an id kept in memory (the first started, or the last) is
# another task's.
NIGHTS = ("P08", "P07", "P08")
RESUMED = 1
ORDINALS = ("first", "second", "third")


def check_restart(start_and_save, resume, paces=None, *, labs=None, guard_s=GUARD_S):
    """start_and_save(wire, night, path) keeps the task id in a file; resume(wire, path) follows it from a new process.

    `paces` are the pollIntervalMs the restarted client's wire serves; drawn for the run when None. `labs` and
    `guard_s` as in check_follow (the pair's stdio lab is the restarted client's, its HTTP lab the first client's).
    """
    if missing(start_and_save) or missing(resume):
        not_done("define start_and_save(wire, night, path) and resume(wire, path) first.")
        return
    paces = draw_resume_paces() if paces is None else paces
    # The restarted client's lab (stdio) is up before the tasks start, so resume runs while night P07 still works
    # (4 epochs x 300 ms) and has to follow it: a resume that polls once or never sleeps shows it.
    with given_or_own(labs) as (fresh, worker, _), tempfile.TemporaryDirectory(prefix="ex20-ids-") as folder:
        fresh.serve()
        worker.serve()
        paths = [str(Path(folder) / f"{number}-{night}.task") for number, night in enumerate(NIGHTS, 1)]
        ids = []
        for night, path in zip(NIGHTS, paths):
            mark = time.monotonic()
            worker.watched_file, worker.file_then = path, []
            started = attempt(start_and_save, worker, night, path, guard=guard_s)
            worker.watched_file = None
            if started.not_done:
                not_done("start_and_save still raises NotImplementedError.")
                return
            problem = (_start_problem(worker, since(worker, mark), night, started)
                       or closed_problem(worker, "start_and_save"))
            if problem:
                failed(problem.pop("problem"), **problem)
                return
            ids.append(_started_id(worker, night, mark))
            if ids[-1] is None:
                failed(f"start_and_save, asked for night {night}, started no score_night for it; its tools/call named "
                       f"{shown(_called_night(worker, mark))}.",
                       hint="Pass the night argument on as arguments.night: each night is a task of its own.")
                return
            if tasks.get(worker, ids[-1]).result["status"] in TERMINAL:
                failed(f"start_and_save returned only after the task of night {night} had ended.",
                       hint="Write the task id to the file as soon as the CreateTaskResult comes, and return: the id "
                            "is there so that polling can resume after a crash, which may come while the task works.")
                return
            late = _sent_before_saving(worker.file_then, ids[-1])
            if late:
                failed(f"start_and_save sent a {late} for night {night} before it wrote the task id to the file; the "
                       "task asks to write it as soon as the reply comes.",
                       hint="Write the id first and only then do anything else: a crash between the reply and the "
                            "write loses the task, and the id is there so that polling can resume after one.")
                return
        for night, path, task_id in zip(NIGHTS, paths, ids):
            saved = Path(path).read_text(errors="replace") if Path(path).exists() else None
            if saved is None or task_id not in saved:
                failed(f"The file start_and_save wrote for night {night} does not hold its task id "
                       f"({'no file' if saved is None else short(saved)}).",
                       hint="A client that restarts has nothing but what it saved: write the taskId from the "
                            "CreateTaskResult to the file (as text or JSON).")
                return
        # The client restarts: another lab process on the same folder, which asks for another pace from its first
        # reply on; the worker lab keeps running. The saved file (and any file named after it) reaches it under
        # another name, as after a restart nothing but files is left: a resume that looks the path up in memory
        # finds nothing.
        restarted = str(Path(folder) / "restarted.task")
        name = Path(paths[RESUMED]).name
        for saved in Path(folder).glob(f"{name}*"):
            Path(restarted + saved.name[len(name):]).write_bytes(saved.read_bytes())
        fresh.serve(paces=paces, unlimited_from=1, hold_end=True)
        mark = time.monotonic()
        resumed = attempt(resume, fresh, restarted, guard=guard_s)
        written = since(fresh, mark)
        closed = closed_problem(fresh, "resume")  # now: leaving lab_pair closes it anyway
        final = finish(worker, ids[RESUMED])
    if resumed.not_done:
        not_done("resume still raises NotImplementedError.")
        return
    asked = {_object(frame.get("params")).get("taskId") for _, frame, _ in written if frame.get("method") == "tasks/get"}
    if ids[RESUMED] not in asked:
        garbled = next((task_id for task_id in asked if isinstance(task_id, str)
                        and _unwrapped(task_id) == ids[RESUMED]), None)
        if garbled is not None:
            failed(f"resume polled the task id {garbled!r}: the right id, with the file's {_wrapping(garbled)} still "
                   "on it, so the lab knows no such task.",
                   hint="Undo what you wrote: .strip() the text, or json.loads it if you saved it with json.dumps.")
            return
        other = next((number for number, task_id in enumerate(ids) if number != RESUMED and task_id in asked), None)
        wrong = (f"the task started {ORDINALS[other]} (night {NIGHTS[other]})" if other is not None
                 else "no task the file named")
        raised = f"; it raised {resumed.error_text}" if resumed.error is not None else ""
        failed(f"resume polled {wrong}, not the one in the file it was given (night {NIGHTS[RESUMED]}, started "
               f"{ORDINALS[RESUMED]}){raised}.",
               hint="Read the task id back from the path: after a restart nothing in memory is left. Here, where "
                    "the check calls resume in the process that started the tasks, an id kept in a variable is "
                    "whichever task it remembered, and the check resumes a night started between two others.")
        return
    resumed_id = ids[RESUMED]
    for problem in (wire_problem(fresh, written, resumed_id), after_end_problem(fresh, written, resumed_id, "resume"),
                    pace_problem(fresh, written, resumed_id), slow_poll_problem(fresh, written, resumed_id)):
        if problem:
            failed(_in_resume(problem.pop("problem")), **problem)
            return
    if closed:
        failed(closed.pop("problem"), **closed)
        return
    if resumed.hung:
        failed(f"resume was still running after {guard_s:g} seconds.",
               hint="Stop polling at a terminal status: completed, failed or cancelled.")
        return
    if resumed.error is not None:
        raised = optional_fields_problem(resumed, "resume")
        failed(raised.pop("problem"), **raised)
        return
    wrapped = wrapped_problem(resumed.value, "resume")
    if wrapped:
        failed(wrapped.pop("problem"), **wrapped)
        return
    task = as_task(resumed.value)
    if task is not None and task.get("status") in tasks.STATUSES and task["status"] not in TERMINAL:
        failed(f"resume returned a task that is still {task['status']}; the task ended {final['status']} later.",
               hint="Keep polling the saved task, sleeping pollIntervalMs between polls, until it is completed, "
                    "failed or cancelled, and return that last tasks/get result.")
        return
    if task is None or task.get("status") != "completed" or "Night P07" not in str(task.get("result")):
        failed(f"resume returned {shown(resumed.value)}; expected the completed task of night P07.",
               hint="Poll the saved task until it ends and return the last tasks/get result.")
        return
    passed("The task id outlived its client: resume read it from the file and followed night P07 to completed "
           "through another lab process.")


def _sent_before_saving(file_then, task_id):
    """The method of the first frame start_and_save sent after its tools/call while the file did not hold the id."""
    after_call = False
    for method, text in file_then:
        if after_call and task_id not in text:
            return method
        after_call = after_call or method == "tools/call"
    return None


def _unwrapped(text):
    """A task id read back with what a file may add around it: whitespace, JSON quotes."""
    text = text.strip()
    try:
        decoded = json.loads(text)
    except ValueError:
        return text
    return decoded.strip() if isinstance(decoded, str) else text


def _wrapping(text):
    return "quotes" if text.strip().startswith('"') else "newline" if "\n" in text else "whitespace"


def _called_night(wire, mark):
    """The night the first tools/call after `mark` asked for."""
    for _, frame, _ in since(wire, mark):
        if frame.get("method") == "tools/call":
            return _object(_object(frame.get("params")).get("arguments")).get("night")
    return None


def _in_resume(problem):
    """A wire or pace problem, told as resume's (the learner wrote two functions)."""
    return problem.replace("Your ", "resume's ", 1).replace("You polled", "resume polled", 1)


ARGUMENTS = {"epochs": 4, "pause_ms": 300}


def _start_problem(wire, written, night, started):
    """failed() arguments for what start_and_save sent (or raised) for `night`; None if it started the task right."""
    calls = [frame for _, frame, _ in written if frame.get("method") == "tools/call"]
    if not calls:
        if started.error is not None:
            return dict(problem=f"start_and_save raised {started.error_text} before it sent a tools/call.")
        return dict(problem=f"start_and_save sent no tools/call for night {night}.",
                    hint="Start the task with a tools/call of score_night that declares the extension in _meta.")
    params = _object(calls[0].get("params"))
    if params.get("name") != "score_night":
        return dict(problem=f"start_and_save called {params.get('name')!r}; the task asks for score_night.",
                    hint="review_night asks the user questions, which nobody answers across a restart; score_night "
                         "works alone.")
    arguments = _object(params.get("arguments"))
    for name, value in ARGUMENTS.items():
        sent = arguments.get(name)
        if name not in arguments:
            return dict(problem=f"start_and_save left out {name}; the task asks for "
                                f"{', '.join(f'{k}: {v}' for k, v in ARGUMENTS.items())}.",
                        hint=("Without it the lab scores all 20 epochs of the night, six seconds at 300 ms each. "
                              if name == "epochs" else "The lab's default pause_ms is 300 today, but a default is "
                              "the server's to change: send what you mean. ")
                             + "Send both arguments in tools/call's arguments.")
        if type(sent) is not int or sent != value:
            return dict(problem=f"start_and_save sent {name}: {sent!r}; the task asks for {name}: {value} (a JSON "
                                "integer).",
                        hint="score_night's inputSchema says integer. SDK 2.3.0 converts a string such as \"4\", "
                             "but the schema is the contract: another server may answer -32602.")
    reply = wire.replies.get(calls[0].get("id")) or {}
    if _object(reply.get("result")).get("resultType") != "task":
        declared = _object(_object(_object(params.get("_meta")).get(frames.CLIENT_CAPABILITIES_KEY)).get("extensions"))
        if tasks.EXTENSION not in declared:
            return dict(problem="start_and_save's tools/call did not declare the tasks extension, so the lab ran "
                                "score_night as a plain call: no CreateTaskResult, no task id to save.",
                        hint="Declare io.modelcontextprotocol/tasks in the tools/call's _meta "
                             "(io.modelcontextprotocol/clientCapabilities).")
        return dict(problem=f"start_and_save's tools/call got {short(reply)}, not a CreateTaskResult.")
    if started.error is not None:
        return dict(problem=f"start_and_save raised {started.error_text}.")
    return None


def _started_id(wire, night, mark):
    """The task id the lab handed out for a score_night of `night` on this watched HTTP wire since `mark`."""
    for _, frame, _ in since(wire, mark):
        params = _object(frame.get("params"))
        if params and frame.get("method") == "tools/call" and _object(params.get("arguments")).get("night") == night:
            result = (wire.replies.get(frame.get("id")) or {}).get("result") or {}
            if result.get("resultType") == "task":
                return result["taskId"]
    return None
