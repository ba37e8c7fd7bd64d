"""Check for exercise 22: a report on a server no one here wrote (its era, hints, error style and list cost).

The check runs the learner's report(command) against seven servers: the lab, the reference time and git servers (SDK
2.3.0), the legacy time server (SDK 1.30.0, in .venv-legacy/) and three of the check's own bakery (ex22_bakery,
2025-11-25, built to tell apart what the four real servers answer alike): one answers the probe with an empty result,
one with -32600 and one not at all, the three legacy answers a probe keyed to codes gets wrong; the first leaves
isError out of a result that did not fail, the second writes it as false.
It compares each report with what the check itself reads from the same servers (once per kernel: nothing a report
does changes them). Each server runs behind ex22_recorder, which keeps what the report sent and what came back: the
check reads the probe each server got first, the envelope each 2026-07-28 request carried, the handshake and bare
requests a 2025-11-25 server got, the bakery's call without arguments, which the returned dict alone cannot show, and
the tools/list reply to the report's own request (its id is the report's, so its size is too). Every command is the
recorder and a folder of a random name, so only the probe tells a report the era. The reference servers start warm
(ex22_warm: forked from a process that imported their SDK once), so that a report's probe waits for an answer, not
for an import that takes more than 10 s on a busy machine; starts="cold" starts them as a host would.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from labserver.warm import WARM
from mcpwire import frames
from mcpwire.costs import count_tokens
from mcpwire.errors import WireTimeout
from mcpwire.stdio import StdioWire
from . import ex22_bakery as bakery
from . import ex22_recorder as recorder
from . import ex22_warm as warm
from .attempt import attempt, missing
from .verdict import failed, not_done, passed, short, shown

MODERN, LEGACY = frames.PROTOCOL_VERSION, frames.LEGACY_PROTOCOL_VERSION
MODERN_ERRORS = {-32020, -32021, -32022}
# The spec's defaults for a hint a tool does not declare: the worst case.
DEFAULTS = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}
KEYS = ("era", "hints", "unknown_tool", "bad_arguments", "tools_list")
# `make legacy-server` builds .venv-legacy/ beside checks/ (the grader's copy links it); Binder and a hub build
# it outside the learner's home folder, where the kit is an installed package, and name it in MCP_LEGACY_PYTHON.
LEGACY_PYTHON = Path(os.environ.get("MCP_LEGACY_PYTHON") or Path(__file__).resolve().parents[1] / ".venv-legacy" / "bin" / "python")
REPORT_GUARD_S = 120  # servers may start cold on a busy machine (starts="cold"); a report that takes longer is stuck
ZONE = ["--local-timezone", "Etc/UTC"]
BAKERY, STRICT_BAKERY, QUIET_BAKERY = "bakery", "strict bakery", "quiet bakery"
# A real server answers the probe once it has started, which takes seconds on a busy machine even warm (minutes cold,
# at a load of 25): the wait runs out only for a server that is broken. The bakeries are legacy whatever they answer
# to the probe, and the quiet one answers nothing: any wait reads them right, and this one is the quiet bakery's cost.
PROBE_WAIT_S = {"lab": 120, "time": 120, "git": 120, "legacy time": 120, BAKERY: 2, STRICT_BAKERY: 2, QUIET_BAKERY: 2}
REPLY_WAIT_S = 60  # a reply from a server that has started
BAKERY_OPTIONS = {BAKERY: [], STRICT_BAKERY: ["--before-initialize", "refuse", "--false-is-error", "write"],
                  QUIET_BAKERY: ["--before-initialize", "ignore"]}
ENVELOPE_KEYS = (frames.PROTOCOL_VERSION_KEY, frames.CLIENT_INFO_KEY, frames.CLIENT_CAPABILITIES_KEY)


@lru_cache(maxsize=None)
def warm_starters():
    """Python -> its warm starter, started once per kernel, the two at once: SDK 2.3.0's reference servers in the
    kit's Python (and the lab, for a kernel without a starter of its own), SDK 1.30.0's in .venv-legacy/."""
    lab = [] if WARM in os.environ else ["labserver.cli"]
    return {sys.executable: warm.Starter(sys.executable, ["mcp_server_time", "mcp_server_git", *lab]),
            str(LEGACY_PYTHON): warm.Starter(LEGACY_PYTHON, ["mcp_server_time"])}


def server_start(name, repo, starts):
    """How the recorder starts one of the seven servers: {"command": ...}, and "warm": ... to fork it from a starter.
    The reference servers fork from the check's own starters unless starts is "cold" (or their starter failed). The
    lab forks from the kernel's starter (labserver.warm) as `python -m labserver` would, when the kernel names one;
    from the check's own when it names none (LABSERVER_WARM unset); and starts cold when it is empty, as there."""
    def reference(python, module, *args):
        cold = {"command": [str(python), "-m", module, *args]}
        starter = warm_starters()[str(python)] if starts == "warm" else None
        return {**cold, "warm": starter.warm(module, *args)} if starter and starter.ready() else cold

    if name == "lab":
        if os.environ.get(WARM):
            return {"command": [sys.executable, "-m", "labserver"], "warm": {"socket": os.environ[WARM], "argv": []}}
        return reference(sys.executable, "labserver") if WARM not in os.environ else {"command": [sys.executable, "-m", "labserver"]}
    if name == "time":
        return reference(sys.executable, "mcp_server_time", *ZONE)
    if name == "git":
        return reference(sys.executable, "mcp_server_git", "--repository", str(repo))
    if name == "legacy time":
        return reference(LEGACY_PYTHON, "mcp_server_time", *ZONE)
    return {"command": [sys.executable, bakery.__file__, *BAKERY_OPTIONS[name]]}


def git_repository(folder):
    """An empty repository in folder, for the git server."""
    repo = Path(folder) / "repo"
    subprocess.run(["git", "init", "--quiet", str(repo)], check=True, capture_output=True)
    return repo


def recorded(folder, start):
    """The command that starts a server behind the recorder, which keeps what it receives in a new folder in folder.
    Its name is random and the server's own command is written inside: nothing in the command tells one server
    from another, so a report learns the era from the probe alone."""
    received = tempfile.mkdtemp(dir=folder)
    Path(recorder.command_path(received)).write_text(json.dumps(start), encoding="utf-8")
    return [sys.executable, "-I", "-S", recorder.__file__, received]


@contextmanager
def field_trip_servers(starts="warm"):
    """name -> command of the seven servers, each behind the recorder; the git server's repository and what each
    server received are kept in a throwaway folder, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="field-trip-") as folder:
        repo = git_repository(folder)
        yield {name: recorded(folder, server_start(name, repo, starts)) for name in PROBE_WAIT_S}


@dataclass
class Session:
    """One server process a report started: the messages it sent, and the replies that came back with their lines."""
    sent: list
    replies: list  # (message, the line's bytes without its newline)

    def reply_to(self):
        """index in sent -> (reply, line) for each request that got one; replies to a reused id pair up in order."""
        waiting = {}
        for reply, line in self.replies:
            waiting.setdefault(id_key(reply.get("id")), []).append((reply, line))
        return {index: waiting[id_key(message["id"])].pop(0) for index, message in enumerate(self.sent)
                if is_request(message) and waiting.get(id_key(message["id"]))}


def id_key(value):
    return json.dumps(value, sort_keys=True)  # 1 and "1" are different ids


def is_request(message):
    return "id" in message and isinstance(message.get("method"), str)


def json_lines(data):
    """(message, line) for each complete line of data that is a JSON object; other lines show elsewhere."""
    for line in data.split(b"\n")[:-1]:
        try:
            message = json.loads(line)
        except ValueError:  # a line that is not JSON gets -32700; what the report makes of it shows elsewhere
            continue
        if isinstance(message, dict):
            yield message, line


def sessions_received(command):
    """What each process of the server started by command (behind the recorder) received and answered."""
    sessions = []
    for path in sorted(Path(command[-1]).glob("*.jsonl")):
        replies = Path(recorder.replies_path(path))
        answers = json_lines(replies.read_bytes()) if replies.exists() else []
        sessions.append(Session([message for message, _ in json_lines(path.read_bytes())],
                                [(message, line) for message, line in answers if "result" in message or "error" in message]))
    return sessions


def error_style(reply):
    """The JSON-RPC error code, or "isError" for a result the tool marked as failed, or "result"."""
    if reply.error:
        return reply.code
    return "isError" if reply.is_tool_error else "result"


def reference_report(command, probe_wait):
    """What the check reads from the server itself: the right report, and the reply's length in characters (for a hint)."""
    with StdioWire(command, timeout=REPLY_WAIT_S) as wire:
        try:
            discover = wire.request("server/discover", timeout=probe_wait)
        except WireTimeout:  # no reply in time: legacy, as the stdio binding says
            discover = None
        modern = discover is not None and (
            (discover.ok and "resultType" in discover.result) or discover.code in MODERN_ERRORS)
        if not modern:
            wire.send(frames.legacy_initialize(id=wire.next_id))
            wire.send(frames.legacy_initialized())

        def call(method, params=None):
            if modern:
                return wire.request(method, params)
            return wire.send(frames.legacy_request(method, params, id=wire.next_id))

        listing = call("tools/list")
        cost = (wire.transcript[-1].bytes_down, count_tokens(listing.text))
        tools = listing.result["tools"]
        hints = {tool["name"]: {hint: tool.get("annotations", {}).get(hint, default) for hint, default in DEFAULTS.items()}
                 for tool in tools}
        needy = next(tool["name"] for tool in tools if tool["inputSchema"].get("required"))
        unknown = call("tools/call", {"name": "no_such_tool", "arguments": {}})
        bad = call("tools/call", {"name": needy, "arguments": {}})
    return {"era": MODERN if modern else LEGACY, "hints": hints, "unknown_tool": error_style(unknown),
            "bad_arguments": error_style(bad), "tools_list": cost, "characters": len(listing.text) + 1}


@lru_cache(maxsize=1)
def reference_reading():
    """name -> a future of the right report, read by the check itself once per kernel (nothing a report does changes
    the servers), on a thread beside the report's own runs, one server at a time in the check's order: seven starts at
    once kept the report's own first servers from the cores (a right report's 5 s probe ran out once in ten gradings
    at a load of 7)."""
    warm_starters()  # here, not first on the pool's thread
    folder = tempfile.mkdtemp(prefix="field-trip-reference-")
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="field-trip-reference")
    repo = git_repository(folder)
    futures = {name: pool.submit(lambda name: reference_report(recorded(folder, server_start(name, repo, "warm")),
                                                               PROBE_WAIT_S[name]), name)
               for name in PROBE_WAIT_S}
    pool.shutdown(wait=False)
    threading.Thread(target=lambda: (wait(futures.values()), shutil.rmtree(folder, ignore_errors=True)), daemon=True).start()
    return futures


def reference_of(name):
    """The right report for one server; a read that failed is tried again on the next check, not kept."""
    try:
        return reference_reading()[name].result()
    except Exception:
        reference_reading.cache_clear()
        raise


def reference_reports():
    """name -> the right report of each of the seven servers."""
    return {name: reference_of(name) for name in PROBE_WAIT_S}


def check_server_report(report, *, starts="warm"):
    """report(command) must describe each of the seven servers as the check reads it, and speak each one's era.
    The reference servers start warm (checks/ex22_warm.py), or with starts="cold" as a learner's host starts them."""
    if missing(report):
        not_done("define report(command) first.")
        return
    if not LEGACY_PYTHON.exists():
        failed("the legacy time server is not installed, so the check cannot run it.",
               hint="Run `make legacy-server` in the kit's folder (make lab and make test do it for you).")
        return
    with tempfile.TemporaryDirectory(prefix="field-trip-") as folder:
        repo = git_repository(folder)
        for name in PROBE_WAIT_S:  # each server's command made when its turn comes: a stub starts one server
            for start in ("first", "again"):
                command = recorded(folder, server_start(name, repo, starts))
                outcome = attempt(report, command, guard=REPORT_GUARD_S)
                if outcome.not_done:
                    not_done("report still raises NotImplementedError.")
                    return
                reference_reading()  # from the first report on, beside the report's own runs
                if outcome.hung:
                    failed(f"report did not return within {REPORT_GUARD_S} s for the {name} server.",
                           hint="Read with a timeout: a server may stay silent. StdioWire's requests raise WireTimeout "
                                "when no reply comes in time; on the probe that means legacy, so catch it there.")
                    return
                try:
                    right = reference_of(name)
                except Exception as error:  # the check's own read: a server broken, or a machine too busy for its waits
                    failed(f"the check could not read the {name} server itself ({type(error).__name__}: {error}), so "
                           "it cannot judge your report there.",
                           hint="Run the check again: on a very busy machine a server may take longer than the check "
                                "waits. If it fails the same way, that server is broken (`make legacy-server` "
                                "rebuilds the legacy one).")
                    return
                if start == "again" or not gave_up_on_a_modern_answer(right, sessions_received(command)):
                    break
            if outcome.error:
                crashed(name, outcome.error_text, right, sessions_received(command))
                return
            if not judge(name, outcome.value, right, sessions_received(command)):
                return
    passed("report is right on all seven servers: the era each speaks, every hint declared or left to the spec's "
           "worst-case default, how each answers an unknown tool and bad arguments, and what its tools/list costs; "
           "the 2026-07-28 servers got the envelope on every request, the 2025-11-25 servers the handshake and bare "
           "requests after it, whatever they answered to the probe (an error, an empty result or nothing), and the "
           "bakery a call without arguments.")


def gave_up_on_a_modern_answer(right, sessions):
    """The report fell back to the handshake on a 2026-07-28 server although the server answered its probe as one:
    either it stopped waiting before the answer came (a server slow to start on a busy machine, which the check
    forgives once, with a second start) or it misread the answer (which the second start shows again)."""
    def modern_answer(session):
        first = next((index for index, message in enumerate(session.sent) if is_request(message)), None)
        reply = session.reply_to().get(first, (None, None))[0] if first is not None else None
        return (session.sent[first].get("method") == "server/discover" and isinstance(reply, dict)
                and isinstance(reply.get("result"), dict) and "resultType" in reply["result"])

    fell_back = any(message.get("method") == "initialize" for session in sessions for message in session.sent)
    return right["era"] == MODERN and fell_back and any(modern_answer(session) for session in sessions)


def crashed(name, error_text, right, sessions):
    """The report raised: a wrong frame it sent before is the likelier cause, so it is named first."""
    fault = frames_fault(name, right["era"], sessions)
    if fault:
        problem, hint = fault
        failed(f"report raised {error_text} for the {name} server, after a wrong frame: {problem}", hint=hint)
    else:
        failed(f"report raised {error_text} for the {name} server.", hint=crash_hint(name, right, sessions))


def frames_fault(name, era, sessions):
    """(problem, hint) for a server never probed, or the first frame that does not speak the server's era, or None."""
    return probe_fault(name, sessions) or (handshake_fault(name, sessions) if era == LEGACY else envelope_fault(name, sessions))


def probe_fault(name, sessions):
    """The era is the probe's to tell: some process of the server gets server/discover before any other request."""
    firsts = [next((message for message in session.sent if is_request(message)), None) for session in sessions]
    if any(first and first.get("method") == "server/discover" for first in firsts):
        return None
    hint = ("Send server/discover first (wire.request adds the envelope) and read the era from its answer: the "
            "check's commands all start the same recorder, so nothing else tells the servers apart.")
    sent = [first.get("method") for first in firsts if first]
    if not sent:
        return (f"report sent no request to the {name} server, so it cannot know its era; the task asks for the "
                "dual-era probe on every server.", hint)
    if any(message.get("method") == "server/discover" for session in sessions for message in session.sent):
        return (f"report sent {shown(sent[0])} to the {name} server before its server/discover; the probe is the first "
                "request, as the task asks: on a dual-era server such as the lab the first request a process reads "
                "fixes its era.", hint)
    return (f"report sent {shown(sent[0])} to the {name} server before any server/discover: it never probed, so what "
            "it says about the era is a guess.", hint)


def judge(name, said, right, sent):
    """Print the first difference between the learner's report (and the frames it sent) and the right one; True when
    there is none. Frames come before the error styles: a call made wrongly makes its style wrong too."""
    if not isinstance(said, dict) or set(said) != set(KEYS):
        failed(f"report returned {shown(said, 120)} for the {name} server; return a dict with exactly the keys "
               f"{', '.join(KEYS)}.")
        return False
    unprobed = probe_fault(name, sent)
    if unprobed:
        problem, hint = unprobed
        failed(problem, hint=hint)
        return False
    fault = frames_fault(name, right["era"], sent)
    if said["era"] != right["era"] and not (fault and right["era"] == MODERN):  # a bare probe makes the lab legacy
        failed(f"report says the {name} server speaks {shown(said['era'])}; it speaks {right['era']!r}.",
               hint=era_hint(name, right["era"]))
        return False
    if fault:
        problem, hint = fault
        failed(problem, hint=hint)
        return False
    if name == BAKERY and not judge_bad_call(name, sent):
        return False
    return judge_hints(name, said["hints"], right["hints"]) and judge_errors(name, said, right) and \
        judge_cost(name, said["tools_list"], right, sent)


def handshake_fault(name, sessions):
    """Each process of a 2025-11-25 server gets a right initialize, then notifications/initialized, then bare
    requests: (problem, hint) for the first frame that breaks this, or None."""
    for session in sessions:
        initialize_sent = initialized_sent = False
        replies = session.reply_to()
        for index, message in enumerate(session.sent):
            method = message.get("method")
            if method == "initialize":
                initialize_sent = True
                fault = initialize_fault(name, message, replies.get(index, (None, None))[0])
                if fault:
                    return fault
            elif method == "notifications/initialized":
                initialized_sent = initialize_sent
            elif "id" not in message or method == "ping" or (method == "server/discover" and not initialize_sent):
                continue  # another notification, a ping (allowed at any time), or the probe
            elif not initialize_sent:
                if envelope_keys(message) and not any(m.get("method") == "initialize" for s in sessions for m in s.sent):
                    return (f"report sent {shown(method)} with the 2026-07-28 envelope to the {name} server, which "
                            "speaks 2025-11-25, and no handshake at all: what the probe got was read as 2026-07-28.",
                            era_hint(name, LEGACY))
                return (f"report sent {shown(method)} to the {name} server without the handshake; a 2025-11-25 "
                        "server expects initialize, then notifications/initialized, before any other request.",
                        "After the probe falls back, send initialize and notifications/initialized first, on the "
                        "same process (or on each new process you start for this server).")
            elif not initialized_sent:
                return (f"report sent {shown(method)} to the {name} server after initialize but without "
                        "notifications/initialized first; in 2025-11-25 the client MUST send it once initialize "
                        "succeeds (lesson 11, the lifecycle).",
                        "Send frames.legacy_initialized() right after the initialize reply, before tools/list.")
            elif envelope_keys(message):
                return (f"report sent {shown(method)} to the {name} server with the 2026-07-28 envelope "
                        f"({', '.join(envelope_keys(message))} in params._meta) after the 2025-11-25 handshake.",
                        "Speak the era the probe found from then on: after the handshake a request is bare "
                        "(frames.legacy_request), not wire.request, which adds the envelope.")
    return None


def initialize_fault(name, message, reply):
    """(problem, hint) when the initialize asks for another version, lacks a required field or was refused."""
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    answered = ""
    if reply and isinstance(reply.get("error"), dict):
        answered = f" The server answered it with the error {short(reply['error'], 120)}."
    elif reply and isinstance(reply.get("result"), dict) and "protocolVersion" in reply["result"]:
        answered = f" The server answered with protocolVersion {shown(reply['result']['protocolVersion'])}."
    lifecycle = ("frames.legacy_initialize() builds a right one. The 2025-11-25 lifecycle: the client sends a version "
                 "it supports (the latest), a server that supports it answers with the same, and "
                 "notifications/initialized follows a successful initialize.")
    version = params.get("protocolVersion")
    if version != LEGACY:
        return (f"report's initialize to the {name} server asks for protocolVersion {shown(version)}; a report that "
                f"says the server speaks 2025-11-25 asks for '2025-11-25'.{answered}", lifecycle)
    client_info = params.get("clientInfo")
    if not isinstance(params.get("capabilities"), dict) or not (
            isinstance(client_info, dict) and isinstance(client_info.get("name"), str)
            and isinstance(client_info.get("version"), str)):
        return (f"report's initialize to the {name} server has params {short(params, 120)}; a 2025-11-25 initialize "
                "carries protocolVersion, capabilities (an object, {} for none) and clientInfo (its name and "
                f"version), all three required by the schema.{answered}", lifecycle)
    if answered and "error" in reply:
        return f"the {name} server refused report's initialize.{answered}", lifecycle
    return None


def envelope_fault(name, sessions):
    """Every request to a 2026-07-28 server carries the envelope naming 2026-07-28, and none is an initialize:
    (problem, hint) for the first that breaks this, or None."""
    for session in sessions:
        for message in session.sent:
            method = message.get("method")
            if method == "initialize":
                return (f"report sent initialize to the {name} server, which speaks 2026-07-28.", era_hint(name, MODERN))
            if not is_request(message):
                continue
            params = message.get("params")
            meta = params.get("_meta") if isinstance(params, dict) else None
            speak = ("Speak the era the probe found from then on: to a 2026-07-28 server every request carries the "
                     "envelope in params._meta (wire.request adds it; frames.legacy_request does not).")
            if method == "server/discover":
                speak = ("The probe is a 2026-07-28 request too: send it with the envelope (wire.request adds it). "
                         "Without it, a dual-era server such as the lab answers as a 2025-11-25 server would.")
            if not envelope_keys(message):
                return (f"report sent {shown(method)} to the {name} server without the 2026-07-28 envelope; this "
                        f"server speaks 2026-07-28, where every request carries {frames.PROTOCOL_VERSION_KEY} and "
                        f"{frames.CLIENT_CAPABILITIES_KEY} in params._meta, and a request without them gets -32602.",
                        speak)
            if meta.get(frames.PROTOCOL_VERSION_KEY) != MODERN:
                return (f"report sent {shown(method)} to the {name} server with {frames.PROTOCOL_VERSION_KEY} = "
                        f"{shown(meta.get(frames.PROTOCOL_VERSION_KEY))} in its envelope; this server speaks "
                        "'2026-07-28' and answers any other version with -32022.",
                        "The envelope names the era you speak, on every request: let wire.request build it "
                        "(frames.envelope()), or write '2026-07-28' there.")
            if not isinstance(meta.get(frames.CLIENT_CAPABILITIES_KEY), dict):
                return (f"report sent {shown(method)} to the {name} server with an envelope without "
                        f"{frames.CLIENT_CAPABILITIES_KEY} as an object; 2026-07-28 requires it on every request "
                        "({} for no optional capabilities), and a request without it gets -32602.", speak)
    return None


def envelope_keys(message):
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return [key for key in ENVELOPE_KEYS if key in meta] if isinstance(meta, dict) else []


def judge_bad_call(name, sessions):
    """The bad-arguments call goes to the first tool with required properties, with no arguments ({} or none)."""
    calls = [message["params"] for session in sessions for message in session.sent
             if message.get("method") == "tools/call" and "id" in message and isinstance(message.get("params"), dict)
             and message["params"].get("name") in bakery.TOOL_NAMES]
    needy = bakery.FIRST_REQUIRING
    if any(call["name"] == needy and call.get("arguments", {}) == {} for call in calls):
        return True
    to_needy = [call for call in calls if call["name"] == needy]
    if to_needy:
        sent = to_needy[0]["arguments"]
        failed(f"report called {needy} on the {name} server with arguments {short(sent, 100)}; the task asks "
               "for a call with no arguments at all.",
               hint=("null is not \"no arguments\": arguments is an object when it is there. " if sent is None else "")
               + "Send \"arguments\": {} (or leave the key out), so the reply shows how the server answers a "
                 "missing required argument.")
        return False
    called = sorted({call["name"] for call in calls})
    first = bakery.TOOL_NAMES[0]
    failed(f"report's call without arguments on the {name} server went to {', '.join(called) or 'none of its tools'}; "
           f"the first tool whose inputSchema has required properties is {needy}.",
           hint=(f"{first} comes first but requires nothing (its required list is empty): " if first in called else
                 f"{', '.join(called)} is not the first one with required properties in tools/list: " if called else
                 "no tools/call named one of its tools: ")
           + "call the first tool, in the list's order, whose inputSchema has a non-empty required list.")
    return False


def judge_hints(name, said, right):
    if not isinstance(said, dict) or set(said) != set(right):
        failed(f"report's hints for the {name} server name the tools {shown(sorted(said) if isinstance(said, dict) else said, 200)}; "
               f"its tools/list has {sorted(right)}.", hint="One entry per tool in tools/list, keyed by the tool's name.")
        return False
    for tool, hints in right.items():
        given = said[tool]
        if not isinstance(given, dict) or set(given) != set(DEFAULTS):
            failed(f"the hints of {tool} on the {name} server are {shown(given)}; give the four hints "
                   f"{', '.join(DEFAULTS)}, each true or false.")
            return False
        for hint, value in hints.items():
            if given[hint] is not value:
                failed(f"report says {tool} on the {name} server has {hint} = {shown(given[hint])}; it is {value}.",
                       hint=hint_hint(hint, given[hint]))
                return False
    return True


def judge_errors(name, said, right):
    for key, what in (("unknown_tool", "a call to a tool that does not exist"),
                      ("bad_arguments", "a call without the arguments its inputSchema requires")):
        if said[key] != right[key]:
            failed(f"report says the {name} server answers {what} with {shown(said[key])}; it answers "
                   f"{describe(right[key])}.", hint=error_hint(said[key], right[key]))
            return False
    return True


def listings(sessions):
    """(bytes with the newline, tokens, characters with the newline) of each tools/list reply the report received:
    the reply carries the report's own id, so its size depends on the ids the report chose."""
    for session in sessions:
        for index, (reply, line) in session.reply_to().items():
            if session.sent[index].get("method") == "tools/list" and isinstance(reply.get("result"), dict):
                text = line.decode("utf-8", "replace")
                yield len(line) + 1, count_tokens(text), len(text) + 1


def judge_cost(name, said, right, sessions):
    if not isinstance(said, tuple) or len(said) != 2:
        kind = "a list" if isinstance(said, list) else shown(said)
        failed(f"report's tools_list for the {name} server is {kind}; give a tuple (bytes, tokens) of the reply.")
        return False
    # The reply to the report's own request; the check's own read only if none was recorded.
    received = list(listings(sessions)) or [(*right["tools_list"], right["characters"])]
    if said in [(size, tokens) for size, tokens, _ in received]:
        return True
    given_bytes, given_tokens = said
    right_bytes, right_tokens, characters = next((listing for listing in received if listing[0] == given_bytes),
                                                 received[0])
    if given_bytes != right_bytes:
        failed(f"report says the {name} server's tools/list reply is {shown(given_bytes)} bytes; "
               f"it is {right_bytes} on the wire, newline included.", hint=bytes_hint(given_bytes, right_bytes, characters))
        return False
    if given_tokens != right_tokens:
        failed(f"report says the {name} server's tools/list reply is {shown(given_tokens)} tokens; "
               f"it is {right_tokens} in cl100k_base.",
               hint="Count the reply's own text (reply.text, or the exchange's tokens_down) with count_tokens: "
                    "a copy made with json.dumps has other spaces, so other tokens.")
        return False
    return True


def describe(style):
    if style == "result":
        return "a result not marked isError"
    return "a result marked isError" if style == "isError" else f"the JSON-RPC error {style}"


def crash_hint(name, right, sessions):
    """A hint for a report that raised although every frame it sent was right."""
    if name in (STRICT_BAKERY, QUIET_BAKERY):
        return era_hint(name, LEGACY)
    if name == BAKERY:
        return ("The bakery is not the lab: it speaks only 2025-11-25, its first tool's required list is empty, its "
                "last tool has no annotations and no description, its results leave isError out when it is false "
                "(the schema: \"If not set, this is assumed to be false\"), and it may answer a call with a "
                "JSON-RPC error. Read optional fields with .get().")
    if name == "legacy time":
        return ("The legacy server is not the lab: its results carry no resultType, its tools no annotations "
                "and no outputSchema, and it wants the handshake before tools/list. Read optional fields with .get().")
    for session in sessions:
        replies = session.reply_to()
        requests = [index for index, message in enumerate(session.sent) if is_request(message)]
        last = session.sent[requests[-1]] if requests else {}
        reply = replies.get(requests[-1], (None, None))[0] if requests else None
        if last.get("method") == "tools/call" and reply and "error" in reply:
            unknown = isinstance(last.get("params"), dict) and last["params"].get("name") not in right["hints"]
            return (("An unknown tool" if unknown else "A call without its required arguments")
                    + " may come back as a JSON-RPC error (no result) or as a result: reply.error tells which.")
    return ("Every frame your report sent to this server was right, so the error is in your own code: call report "
            "yourself on this server to see the traceback.")


def era_hint(name, era):
    if name == BAKERY:
        return ("This server answers server/discover with an empty result, as it answers any method it does not "
                "know: a result, but not a DiscoverResult. Every 2026-07-28 result carries resultType; only a result "
                "with it, or -32020, -32021 or -32022, means 2026-07-28.")
    if name == STRICT_BAKERY:
        return ("This server answers server/discover, and every request before initialize, with -32600: a legacy "
                "server may answer with any error, so the fallback MUST NOT be keyed to -32601 or -32602. Only a "
                "result with resultType, or -32020, -32021 or -32022, means 2026-07-28.")
    if name == QUIET_BAKERY:
        return ("This server does not answer server/discover at all, nor any request before initialize: no reply "
                "within your timeout means legacy. wire.request raises WireTimeout (a TimeoutError) then: catch it "
                "on the probe and fall back to the handshake.")
    if era == LEGACY:
        return ("This server answers server/discover with -32602, not -32601: a legacy server may answer with any "
                "error, or not at all. Only a result with resultType, or -32020, -32021 or -32022, means 2026-07-28.")
    return ("A result of server/discover that carries resultType comes from a 2026-07-28 server: no handshake is "
            "needed. If your probe fell back because it stopped waiting, let it wait longer: a server can take "
            "seconds to start on a busy machine (SDK 2.3.0's client waits 10 s).")


def hint_hint(hint, given):
    if given is False and DEFAULTS[hint] is True:
        return (f"This tool does not declare {hint}, and a missing hint is not false: the spec's default for it is "
                "true (the worst case: destructive, open world).")
    if given is None:
        return f"A missing hint takes the spec's default: {hint} defaults to {str(DEFAULTS[hint]).lower()}."
    return "Read the value the tool declares in annotations; take the spec's default only when it declares none."


def error_hint(given, right):
    if right == "result":
        return ("This server answered with a result not marked as failed (isError false, or left out, which means "
                "false): report \"result\". Read the isError value (reply.is_tool_error), not whether the word or the "
                "key is somewhere in the reply.")
    if right == "isError":
        return ("Not every error is a JSON-RPC error: this server answered with a result whose isError is true "
                "(reply.is_tool_error). Report \"isError\" for that.")
    if given == "isError":
        return f"This one is a JSON-RPC error: the reply has no result, and reply.code is {right}."
    return "Report the JSON-RPC error's code (reply.code), or \"isError\" for a failed tool result."


def bytes_hint(given, right_bytes, characters):
    if given == characters and characters != right_bytes:
        return ("That is its length in characters: this reply has letters outside ASCII (ä, ö, €), which take two or "
                "three bytes each in UTF-8. Count bytes (the exchange's bytes_down, or len of the encoded text).")
    if given == right_bytes - 1:
        return "One short: on stdio the newline that ends the line is on the wire too (the exchange's bytes_down has it)."
    return "Measure the reply as it crossed the wire (the last exchange's bytes_down), not a copy made with json.dumps."
