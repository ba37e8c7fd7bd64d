"""Call the learner's code so that nothing it does can crash or hang the check.

An exception comes back as a value. With a guard, the call runs on a daemon thread;
if it is still running when the guard expires, `unblock()` is called (it stops the
server the code is waiting on, so a blocked read returns) and the attempt is marked hung.
"""

import copy
import threading
from dataclasses import dataclass

from mcpwire import frames
from .verdict import short

PLACEHOLDERS = (None, Ellipsis)


@dataclass
class Attempt:
    value: object = None
    error: BaseException | None = None
    hung: bool = False

    @property
    def not_done(self):
        return isinstance(self.error, NotImplementedError)

    @property
    def error_text(self):
        return f"{type(self.error).__name__}: {self.error}" if self.error is not None else ""


def attempt(function, *args, guard=None, unblock=None):
    """Call function(*args) and return an Attempt; never raises for the learner's mistakes."""
    if guard is None:
        try:
            return Attempt(value=function(*args))
        except Exception as error:  # the learner's bug is what the check reports
            return Attempt(error=error)
    outcome = Attempt()

    def run():
        try:
            outcome.value = function(*args)
        except Exception as error:
            outcome.error = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(guard)
    if thread.is_alive():
        if unblock is not None:
            unblock()
        thread.join(2)
        return Attempt(hung=True)
    return outcome


def missing(value):
    """True for what a learner has not filled in yet: a stub function, None or `...`."""
    return any(value is placeholder for placeholder in PLACEHOLDERS)


class TooManySends(Exception):
    """The learner's code kept sending: a loop that never stops."""


class _Recording:
    """What every recording sender shares: a cap on how much the learner's code may send."""

    def __init__(self, wire, limit):
        self.wire = wire
        self.limit = limit
        self.count = 0

    def _one_more(self):
        if self.count >= self.limit:
            raise TooManySends(f"more than {self.limit} sends")
        self.count += 1


class RecordingSend(_Recording):
    """The `send(frame)` a learner's function gets: sends the frame as it is, keeps a copy of each frame and reply."""

    def __init__(self, wire, *, max_sends, wait_s):
        super().__init__(wire, max_sends)
        self.wait_s = wait_s
        self.sent = []
        self.replies = []

    def __call__(self, frame):
        self._one_more()
        self.sent.append(copy.deepcopy(frame))
        reply = self.wire.send_raw(frames.dumps(frame), timeout=self.wait_s)
        if reply is None:
            raise TimeoutError(f"no reply to {short(frames.dumps(frame))} within {self.wait_s} seconds")
        self.replies.append(reply.message)
        return copy.deepcopy(reply.message)


class RecordingRequest(_Recording):
    """The `request(method, params)` a learner's function gets: the wire adds id and envelope; each is kept."""

    def __init__(self, wire, *, max_requests):
        super().__init__(wire, max_requests)
        self.sent = []  # (method, params, reply message)

    def __call__(self, method, params=None):
        self._one_more()
        params = copy.deepcopy(params)
        message = self.wire.request(method, params).message
        self.sent.append((method, params, message))
        return copy.deepcopy(message)

    @property
    def methods(self):
        return [method for method, _, _ in self.sent]


class RecordingCall(_Recording):
    """The `call_tool(name, arguments)` a learner's function gets: a real tools/call, kept for the verdict."""

    def __init__(self, wire, *, max_calls):
        super().__init__(wire, max_calls)
        self.calls = []  # (name, arguments, reply message)

    def __call__(self, name, arguments):
        self._one_more()
        sent = copy.deepcopy(arguments)
        message = self.wire.request("tools/call", {"name": name, "arguments": sent}).message
        self.calls.append((name, sent, message))
        return copy.deepcopy(message)
