"""Check for exercise 10, Task 3: opt one call into log lines with io.modelcontextprotocol/logLevel.

The check asks the learner's function for a check_notes frame at two levels, sends each on
stdio, reads every log line that comes before the response, and explains what went wrong:
the level in the wrong place, under the wrong name, or spelled as no level the spec defines.
"""

import copy

from mcpwire import frames
from mcpwire.validate import validate
from .attempt import attempt, missing
from .servers import REPLY_WAIT_S, stdio_lab
from .verdict import failed, not_done, passed, server_said, short

LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
ASKED = ["warning", "debug"]


def check_log_opt_in(log_request, lab=None):
    """log_request(level) must return a check_notes tools/call frame that asks for log lines at `level` and above."""
    if missing(log_request):
        not_done("define log_request(level) first.")
        return
    with stdio_lab(lab) as wire:
        for number, level in enumerate(ASKED, start=1):
            outcome = attempt(log_request, level)
            if outcome.not_done:
                not_done("log_request still raises NotImplementedError. Build a tools/call for check_notes and put "
                         "the level in the request's _meta.")
                return
            told = f"The check called log_request({level!r})."
            if outcome.error:
                failed(f"{told} Your function raised {outcome.error_text}")
                return
            frame = outcome.value
            if not (isinstance(frame, dict) and frame.get("method") == "tools/call"
                    and isinstance(frame.get("params"), dict) and frame["params"].get("name") == "check_notes"):
                failed(f"{told} It returned {short(frame)}, not a tools/call frame for check_notes.",
                       hint="Start from frames.request(\"tools/call\", {\"name\": \"check_notes\", \"arguments\": {}}).")
                return
            if not _has_request_id(told, frame):
                return
            sent = copy.deepcopy(frame)
            sent["id"] = f"log-check-{number}"  # a fresh id of the check's own, once the learner's is known good
            if not _judge(told, level, sent, wire):
                return
    passed("Both calls were opted into logs in _meta: at \"warning\" only the warning came, at \"debug\" every "
           "level did, and each log line arrived before its response.")


def _has_request_id(told, frame):
    request_id = frame.get("id")
    if "id" not in frame:
        failed(f"{told} Your frame has no id, which makes it a notification: nobody answers it, and no log line "
               "would come for it.",
               hint="A call that wants an answer is a request: it carries an id of its own.")
        return False
    if request_id is None or isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        shown = "null" if request_id is None else short(request_id)
        failed(f"{told} Your frame's id is {shown}: a request id is a string or an integer, never null.",
               hint="Leave the id to frames.request, or give a string or an integer of your own.")
        return False
    return True


def _drain(wire):
    while wire.read(timeout=0.2) is not None:
        pass


def _judge(told, level, frame, wire):
    _drain(wire)  # lines left over from earlier cells are not this call's
    try:
        reply = wire.send_raw(frames.dumps(frame), timeout=REPLY_WAIT_S)
    except (TypeError, ValueError) as error:
        failed(f"{told} The frame cannot be written as JSON ({error}).")
        return False
    logs = []
    while (line := wire.read(timeout=0.5)) is not None:
        if isinstance(line.message, dict) and line.message.get("method") == "notifications/message":
            logs.append(line.message["params"])
    message = reply.message if reply is not None else None
    said = server_said(message) if message is not None else f"nothing within {REPLY_WAIT_S} seconds"
    params = frame["params"]
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    if LOG_LEVEL_KEY not in meta:
        where = _misplaced(params, meta)
        failed(f"{told} Its _meta has no {LOG_LEVEL_KEY!r}{where}, so the server sent no log line.",
               server=f"{said}, and {len(logs)} log lines",
               hint="The opt-in is a key of params[\"_meta\"], next to the protocol version, spelled in full.")
        return False
    if meta[LOG_LEVEL_KEY] != level:
        wanted = f"{level!r}" if meta[LOG_LEVEL_KEY] not in LEVELS else f"{level!r}, not {meta[LOG_LEVEL_KEY]!r}"
        failed(f"{told} Your frame asks for the level {_shown(meta[LOG_LEVEL_KEY])}; the call wanted {wanted}.",
               server=said,
               hint="The eight levels are lowercase words: " + ", ".join(LEVELS) + ". Pass the level you were given.")
        return False
    if validate(frame):
        failed(f"{told} Your frame is not a valid request: {'; '.join(validate(frame))}.", server=said,
               hint="Keep the whole envelope: frames.request(..., meta={...}) merges your key into it.")
        return False
    floor = LEVELS.index(level)
    below = [log for log in logs if log.get("level") not in LEVELS[floor:]]
    if not logs or below or not (isinstance(message, dict) and "result" in message):
        failed(f"{told} The call did not log as expected at {level!r}: {len(logs)} lines, {len(below)} below it.",
               server=said, hint="Compare your frame with the lesson's warn_frame.")
        return False
    return True


def _misplaced(params, meta):
    arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
    if any("logLevel" in str(key) for key in arguments):
        return " (you put it in arguments, where the tool sees an argument it does not have)"
    if any("logLevel" in str(key) for key in params if key != "_meta"):
        return " (you put it in params, next to _meta)"
    if any("logLevel" in str(key) for key in meta):
        return f" (your key is {_shown(next(key for key in meta if 'logLevel' in str(key)))}, not the full name)"
    return ""


def _shown(value):
    """A string in quotes, anything else as compact JSON: the way a learner wrote it."""
    return repr(value) if isinstance(value, str) else short(value)
