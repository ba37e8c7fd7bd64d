"""Checks for exercise 00: start the lab server, write one frame, send it and read one reply."""

import io
import json
import subprocess

from mcpwire import frames
from mcpwire.validate import validate
from . import input_schema
from .attempt import attempt, missing
from .servers import REPLY_WAIT_S, STARTUP_WAIT_S, recorded_lab, say_lab_did_not_start, stdio_lab, stop
from .verdict import failed, not_done, passed, server_said, short

DISCOVER = frames.request("server/discover", id=1)
LOG_PREFIX = "notes-lab: "  # how the lab's log lines on stderr start
REQUEST_MEMBERS = ("jsonrpc", "id", "method", "params")
EXIT_WAIT_S = 0.3


def write_line(proc, text):
    """Write one line to a Popen's stdin, whether it was opened in text or in bytes mode."""
    line = text + "\n"
    proc.stdin.write(line if isinstance(proc.stdin, io.TextIOBase) else line.encode("utf-8"))
    proc.stdin.flush()


def check_start_server(start_lab_server):
    """start_lab_server() must return a running `python -m labserver` with stdin and stdout piped."""
    if missing(start_lab_server):
        not_done("define start_lab_server() first.")
        return
    outcome = attempt(start_lab_server)
    if outcome.not_done:
        not_done("start_lab_server() still raises NotImplementedError. Start the server with "
                 "subprocess.Popen and return what Popen gives you.")
        return
    if isinstance(outcome.error, subprocess.TimeoutExpired):
        failed(f"start_lab_server() raised TimeoutExpired: it waited {outcome.error.timeout:g} s for the server to "
               "exit, and a server runs until its stdin closes.",
               hint="Return the Popen as soon as it is started: the server reads frames from then on, and stopping "
                    "it is the caller's job.")
        return
    if outcome.error:
        failed(f"start_lab_server() raised {outcome.error_text}",
               hint="Popen takes the command as a list: [sys.executable, '-m', 'labserver'].")
        return
    proc = outcome.value
    if not isinstance(proc, subprocess.Popen):
        failed(f"start_lab_server() returned {type(proc).__name__}, not a subprocess.Popen.",
               hint="Return the object subprocess.Popen(...) gives you: the check talks to it.")
        return
    try:
        _judge_running_server(proc)
    finally:
        stop(proc)


def _judge_running_server(proc):
    if proc.stdin is None or proc.stdout is None:
        pipe = "stdin" if proc.stdin is None else "stdout"
        failed(f"proc.{pipe} is None: the server's {pipe} is not connected to you, so you cannot "
               f"{'send it frames' if pipe == 'stdin' else 'read its replies'}.",
               hint="Pass stdin=subprocess.PIPE and stdout=subprocess.PIPE to Popen.")
        return
    if proc.stdin.closed or proc.stdout.closed:
        pipe = "stdin" if proc.stdin.closed else "stdout"
        failed(f"start_lab_server() closed proc.{pipe} before returning the process: "
               + ("the server reads no frame, and it ends when its stdin closes." if pipe == "stdin" else
                  "no reply of the server can be read."),
               hint="Return the Popen with both pipes open: the caller writes frames to its stdin and reads replies "
                    "from its stdout.")
        return
    try:
        write_line(proc, frames.dumps(DISCOVER))
    except (OSError, ValueError):
        _say_exited(proc, "before it could read a frame")
        return
    read = attempt(proc.stdout.readline, guard=STARTUP_WAIT_S, unblock=lambda: stop(proc))
    line = read.value if not read.hung else None
    if read.hung:
        failed(f"The server did not answer a server/discover frame within {STARTUP_WAIT_S} seconds.",
               hint="Start the stdio server, [sys.executable, '-m', 'labserver'], without --http.")
        return
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else (line or "")
    if not text:
        _say_exited(proc, "without answering")
        return
    try:
        reply = json.loads(text)
    except ValueError:
        if text.startswith("http://"):
            failed("The server printed its HTTP address on stdout instead of answering: it was started with --http.",
                   hint="This task needs the stdio server: [sys.executable, '-m', 'labserver'].")
        elif text.startswith(LOG_PREFIX):
            failed(f"The first line on stdout is the server's log line, not a reply: {short(text.strip())}. The "
                   "server writes its log on stderr; with stderr=subprocess.STDOUT it lands among the messages.",
                   hint="stdout carries only JSON-RPC messages: give stderr a place of its own, or drop it.")
        else:
            failed(f"The first line on stdout is not JSON: {short(text.strip())}",
                   hint="Is the command [sys.executable, '-m', 'labserver']?")
        return
    info = ((reply.get("result") or {}).get("_meta") or {}).get("io.modelcontextprotocol/serverInfo") or {}
    if isinstance(reply, dict) and reply.get("id") != DISCOVER["id"]:
        failed(f"The first line on stdout answers id {reply.get('id')!r}, not the check's server/discover (id "
               f"{DISCOVER['id']}): start_lab_server() sent the server a frame of its own.",
               server=server_said(reply),
               hint="Return the process without writing to it: the caller sends the first frame.")
        return
    if not info:
        failed("The process answered, but not with a server/discover result.", server=server_said(reply))
        return
    passed(f"The lab server runs on stdio: it answered server/discover as {info.get('name')} {info.get('version')}.")


def _say_exited(proc, when):
    """The process ended before it answered: killed by a signal (the learner's code stopped it) or exited on its own."""
    code = proc.wait()
    if code < 0:
        failed(f"The process was stopped by signal {-code} {when}: start_lab_server() returned a server that had been "
               "killed or terminated.",
               hint="Return the process still running: the check, like any caller, stops it when it is done.")
    else:
        failed(f"The process exited (code {code}) {when}.",
               hint="Run [sys.executable, '-m', 'labserver']: sys.executable is the Python of this notebook, "
                    "the one that has the labserver package.")


def check_first_frame(first_frame, lab=None):
    """first_frame() must return a tools/call request for search_notes about 'spindle' that the server runs."""
    if missing(first_frame):
        not_done("define first_frame() first.")
        return
    outcome = attempt(first_frame)
    if outcome.not_done:
        not_done("first_frame() still raises NotImplementedError. Return the tools/call frame as a dict.")
        return
    if outcome.error:
        failed(f"first_frame() raised {outcome.error_text}")
        return
    frame = outcome.value
    if isinstance(frame, (str, bytes)):
        failed("first_frame() returned text; return the frame as a dict.",
               hint="The check turns the dict into one compact JSON line when it sends it, as a client does.")
        return
    if not isinstance(frame, dict):
        failed(f"first_frame() returned {type(frame).__name__}; a frame is a dict (a JSON object).")
        return
    try:
        line = frames.dumps(frame)
    except (TypeError, ValueError) as error:
        failed(f"Your frame cannot be written as JSON: {error}.")
        return
    extra = [key for key in frame if key not in REQUEST_MEMBERS]
    if extra:
        members = " and ".join(f"{'an' if key[:1] in 'aeiou' else 'a'} {key} member" for key in extra)
        failed(f"Your frame has {members} beside "
               f"{', '.join(REQUEST_MEMBERS)}: {short(frame)}",
               hint=_extra_members_hint(extra))
        return
    with stdio_lab(lab) as wire:
        reply = wire.send_raw(line, timeout=REPLY_WAIT_S)
        schema = _input_schema(wire, "search_notes")
    if reply is None:
        hint = ("A frame without an id is a notification, and nobody answers a notification. Add \"id\": 1."
                if "id" not in frame else "Check the frame against the one in the lesson.")
        failed(f"The server sent nothing back within {REPLY_WAIT_S} seconds.", hint=hint)
        return
    said = server_said(reply.message)
    if reply.error:
        failed(_what_is_wrong(frame, "The server refused your frame."), server=said,
               hint=_hint_for(reply.code, reply.error.get("message", "")))
        return
    if frame.get("method") != "tools/call":
        failed(f"The server answered your {frame.get('method')!r} request, but this task asks for \"tools/call\".",
               server=said)
        return
    if reply.is_tool_error:
        failed(_what_is_wrong(frame, "The server ran the tool, but the tool reported an error."), server=said,
               hint="params is {\"name\": \"search_notes\", \"arguments\": {\"query\": \"spindle\"}, \"_meta\": {...}}.")
        return
    params = frame.get("params") or {}
    query = (params.get("arguments") or {}).get("query")
    if params.get("name") != "search_notes" or query != "spindle":
        failed(f"The server answered, but this task asks for search_notes about 'spindle', with the query 'spindle' "
               f"(you called {params.get('name')!r} with {short(params.get('arguments'))}).")
        return
    off_schema = _schema_problem(schema, params.get("arguments"))
    if off_schema:
        failed(f"The server ran your call, but your arguments do not match search_notes's inputSchema: {off_schema}. "
               "The SDK behind the lab converted the value and ran the tool anyway; a server that validates "
               "strictly refuses it.", server=said,
               hint="In JSON a number is written without quotes: each argument has the type its inputSchema gives.")
        return
    hits = ((reply.result or {}).get("structuredContent") or {}).get("hits") or []
    best = f"; the best is {hits[0].get('id')!r}" if hits else ""
    passed(f"The server ran your tools/call (id {reply.id!r}) and found {len(hits)} notes{best}.")


def _extra_members_hint(extra):
    """Why a member beside the four is wrong, by what it is: most belong inside params."""
    if "_meta" in extra:
        return "The envelope goes inside params, as params._meta, not next to it."
    if "name" in extra or "arguments" in extra:
        return "The tool's name and arguments go inside params: params.name and params.arguments."
    if set(extra) <= {"result", "error"}:
        return "A request has four members; result and error belong to the response that answers it."
    return "A request has four members; everything else the method needs goes inside params."


def _input_schema(wire, tool_name):
    """The tool's inputSchema as the server lists it, or None if the server does not list it."""
    try:
        listed = wire.request("tools/list", {}, timeout=REPLY_WAIT_S)
    except Exception:  # a wire the learner closed: judge the call without the schema rather than raise
        return None
    tools = ((listed.result or {}).get("tools") or []) if listed.ok else []
    return next((tool.get("inputSchema") for tool in tools if tool.get("name") == tool_name), None)


def _schema_problem(schema, arguments):
    """The first way `arguments` break the tool's inputSchema, in a few words, or None."""
    return input_schema.best_problem(schema, arguments) if schema else None


def _what_is_wrong(frame, otherwise):
    # Validated only here: the schema's models cost a kernel 0.7 s of CPU to import, and a frame the server ran
    # is judged by what the server did with it.
    problems = validate(frame)
    return "Your frame: " + "; ".join(problems) + "." if problems else otherwise


def _hint_for(code, message):
    if code == -32602 and "_meta" in message:
        return ("Every 2026-07-28 request carries params._meta with io.modelcontextprotocol/protocolVersion "
                "\"2026-07-28\" and io.modelcontextprotocol/clientCapabilities {}.")
    if code == -32600:
        return "A request has \"jsonrpc\": \"2.0\", an integer or string \"id\", a string \"method\" and object \"params\"."
    if code == -32601:
        return "The method is \"tools/call\"; the tool's name goes in params.name."
    if code == -32022:
        return "Name the version \"2026-07-28\" in params._meta."
    return "Compare your frame with the tools/call frame in the lesson, key by key."


def check_send_one(send_one):
    """send_one(proc, frame) must write the frame as one line, read one line back and return it parsed."""
    if missing(send_one):
        not_done("define send_one(proc, frame) first.")
        return
    with recorded_lab() as lab:
        if lab is None:
            say_lab_did_not_start()
            return
        outcome = attempt(send_one, lab.proc, dict(DISCOVER), guard=REPLY_WAIT_S, unblock=lab.stop)
        received = lab.received()
        stdin_closed, stdout_closed = lab.proc.stdin.closed, lab.proc.stdout.closed
        exit_code = None if outcome.hung else _exit_code(lab.proc)
    if outcome.not_done:
        not_done("send_one still raises NotImplementedError. Write one line, flush, read one line, parse it.")
        return
    if outcome.hung:
        _report_hung(received)
        return
    if isinstance(outcome.error, subprocess.TimeoutExpired):
        failed(f"send_one raised TimeoutExpired: it waited {outcome.error.timeout:g} s for the server to exit, and "
               "the server runs until its stdin closes.",
               hint="send_one sends one frame and reads its reply; the server keeps running for the next frame, and "
                    "stopping it is the caller's job.")
        return
    if outcome.error:
        failed(f"send_one raised {outcome.error_text}", hint=_hint_for_error(outcome.error))
        return
    if not _judge_written(received):
        return
    reply = outcome.value
    if isinstance(reply, (bytes, str)):
        failed("send_one returned the raw line; return the parsed reply, json.loads(line).")
        return
    if not isinstance(reply, dict):
        failed(f"send_one returned {type(reply).__name__}; return the reply as a dict (json.loads of the line).")
        return
    if reply.get("id") != DISCOVER["id"] or "result" not in reply:
        hint = more = None
        if reply.get("error", {}).get("code") == -32700 and received.lstrip().startswith(b"{'"):
            hint = ("The server received Python, not JSON: str() of a dict writes single quotes (and True, None), "
                    "which no JSON parser reads.")
            more = "Write the frame with json.dumps, which writes JSON: double quotes, true, null."
        elif reply.get("error", {}).get("code") == -32700:
            hint = ("The server reads every line as one message, so a frame split over several lines "
                    "is several broken messages.")
            more = "Write compact JSON, with no indent: json.dumps's separators argument makes it compact."
        failed(f"The check sent server/discover with id {DISCOVER['id']}; the reply you returned is not its result.",
               server=server_said(reply), hint=hint, more=more)
        return
    if b"\n" not in received:
        # The relay logs each byte before the server sees it, so a reply with nothing logged came from elsewhere.
        failed("send_one returned a server/discover result, but the server the check gave you received nothing: "
               "the reply came from another server your function started or reached.",
               hint="Talk to the server through the proc your function gets: its caller started it and reads "
                    "what it answers.")
        return
    if stdin_closed:
        failed("send_one got the reply, but it closed the server's stdin, which ends the server: no second frame "
               "can follow, and a bare SDK server answers a request still running at that moment with -32000 "
               "\"Connection closed\", or not at all (lesson 01). This lab server answers it anyway.",
               hint="Flushing sends the bytes without closing anything: keep stdin open for the next frame.")
        return
    if exit_code is not None:
        failed(f"send_one got the reply, but then it stopped the server (exit code {exit_code}): no second frame "
               "can follow.",
               hint="send_one sends one frame and reads its reply; starting and stopping the server is the "
                    "caller's job.")
        return
    if stdout_closed:
        failed("send_one got the reply, but it closed proc.stdout: the server's next reply can never be read.",
               hint="A client keeps both pipes open for as long as it talks to the server.")
        return
    if not _judge_compact(received):
        return
    passed(f"send_one wrote one line and read one back: the result for id {reply['id']}, from "
           f"{reply['result']['_meta']['io.modelcontextprotocol/serverInfo']['name']}.")


def _exit_code(proc):
    """The exit code of a process that ended or is ending (a signal takes a moment to land), else None."""
    try:
        return proc.wait(timeout=EXIT_WAIT_S)
    except subprocess.TimeoutExpired:
        return None


def _judge_written(received):
    """Report a blank line, or a line that is not the frame send_one was given; False if so.

    Lines that are not JSON are left to the reply's -32700, which says what the server made of them.
    """
    lines = received.split(b"\n")[:-1]
    if any(not line.strip() for line in lines):
        failed(f"The server received a blank line beside your frame: {short(received.decode('utf-8', 'replace'))}. "
               "It reads every line as a message, so it answers the blank one with -32700, a reply that is waiting "
               "on stdout for whoever reads next.",
               hint="End the frame with one newline: a function that adds its own newline (print does) needs no "
                    "second one.")
        return False
    messages = [_parsed(line) for line in lines]
    wrong = next((message for message in messages if message is not None and message != DISCOVER), None)
    if wrong is not None:
        failed(f"send_one wrote {short(wrong)}, not the frame it was given: {frames.dumps(DISCOVER)}",
               hint="Write the frame your function gets as its argument: a caller sends many different frames "
                    "through it.")
        return False
    if len(lines) > 1 and all(message == DISCOVER for message in messages):
        failed(f"send_one wrote the frame {len(lines)} times: the server ran the request {len(lines)} times, and "
               "its second reply is waiting on stdout for whoever reads next.",
               hint="Write the frame once, then read its reply.")
        return False
    return True


def _judge_compact(received):
    """Report a line with whitespace outside the JSON's strings; False if so. A line may end in \r\n."""
    loose = next((line for line in received.split(b"\n")[:-1]
                  if (message := _parsed(line)) is not None and line.removesuffix(b"\r") not in _compact(message)),
                 None)
    if loose is None:
        return True
    failed(f"send_one wrote {short(loose.decode('utf-8', 'replace'))}: the server accepts it, but the task asks for "
           "compact JSON, with no spaces after , and : (the protocol forbids only a newline inside a message).",
           hint="json.dumps(frame, separators=(\",\", \":\")) writes compact JSON: the spaces are bytes on every "
                "message.")
    return False


def _compact(message):
    """The message as compact JSON in its own key order, non-ASCII written as it is or escaped: both are compact."""
    return [json.dumps(message, separators=(",", ":"), ensure_ascii=escape).encode() for escape in (False, True)]


def _parsed(line):
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _report_hung(received):
    """send_one waited for ever: say what the server had received by then."""
    waited = f"send_one was still waiting for a reply after {REPLY_WAIT_S} seconds"
    # A frame changed on its way (its id dropped, say) may get no reply at all: that, not the reading, is the cause.
    wrong = next((message for message in map(_parsed, received.split(b"\n")[:-1])
                  if isinstance(message, dict) and message != DISCOVER), None)
    if not received:
        failed(f"{waited}, and the server had received nothing: not one byte of your frame reached it.",
               hint="Writing to proc.stdin fills a buffer inside your process; the bytes leave it only when the "
                    "buffer is flushed or closed.",
               more="Flush proc.stdin after writing the line, before you read.")
    elif b"\n" not in received:
        failed(f"{waited}. The server had received {len(received)} bytes with no newline in them, so it was still "
               "waiting for the end of the line.",
               hint="On stdio a frame is one line: the server reads up to the newline, and only then parses.",
               more="Write the JSON text followed by \"\\n\".")
    elif wrong is not None:
        failed(f"{waited}. The server had received {short(wrong)}, not the frame send_one was given: "
               f"{frames.dumps(DISCOVER)}",
               hint=("A frame without an id is a notification, and nobody answers a notification: write the frame "
                     "your function gets, as it is." if "id" not in wrong else
                     "Write the frame your function gets as its argument, as it is."))
    else:
        failed(f"{waited}. The server had received your line: {short(received.decode('utf-8', 'replace'))}",
               hint="Read one line of proc.stdout: the reply is one line too. A send_one that waits for the server "
                    "to exit (proc.wait(), communicate()) waits for ever: the server runs until its stdin closes.")


def _hint_for_error(error):
    if isinstance(error, TypeError) and "bytes" in str(error):
        return "proc.stdin takes bytes: write (line + \"\\n\").encode()."
    if isinstance(error, ValueError):
        return "Parse the one line you read with json.loads; do not read before you have written and flushed."
    return None
