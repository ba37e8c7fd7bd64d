"""Call the learner's code so that nothing it does can crash or hang the check.

An exception comes back as a value. With a guard, the call runs on a daemon thread;
if it is still running when the guard expires, `unblock()` is called (it stops the
server the code is waiting on, so a blocked read returns) and the attempt is marked hung.
"""

import threading
from dataclasses import dataclass

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
