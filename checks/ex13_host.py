"""Checks for exercise 13: a host that routes by namespaced tool name, asks before risky calls, keeps servers apart.

Each check starts two lab servers of its own, `lab` (the sample notes) and `personal` (two notes
written for the check), builds the learner's host on them, and reads both servers' transcripts
to see which calls reached which server.
"""

import copy
import json
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

from mcpwire.stdio import StdioWire
from .attempt import attempt, missing
from .servers import STARTUP_WAIT_S
from .verdict import failed, not_done, passed, short

PERSONAL_NOTES = {
    "dentist": "---\nid: dentist\ntitle: Dentist\ntags: [health]\ndate: 2026-02-18\n---\n"
               "Check-up on Thursday at 8:30. Bring the insurance card.\n",
    "reading-plan": "---\nid: reading-plan\ntitle: Reading plan\ntags: [reading]\ndate: 2026-02-01\n---\n"
                    "Finish the spindle review before the lab meeting.\n",
}
# A server may list its tools with no annotations; the lab annotates every tool, so the checks strip the personal
# server's in the host's table (HostSkeleton's self.tools), as such a server would list them. Not read-only by
# default: ask. Both servers list tools of the same names, so a host that reads the lab's definition of a personal
# tool asks too little, and a route that gives it is seen.
UNANNOTATED = "personal"
# Any wording of a refusal by the user will do; what it must not read as is a result or an error.
# A negation may stand a word or two before its verb ("did not give permission", "chose not to allow").
DENIED_WORDS = re.compile(r"den(y|ies|ied|ial)|declin|refus|reject|disallow|cancel|forb[ia]d|veto|block|stopp|"
                          r"withh[eo]ld|permission|(say|says|said|answered|replied) no\b|"
                          r"(not|n't|never)\W+(\w+\W+){0,2}?(allow|approv|permit|consent|run|sen[dt]|give|grant|"
                          r"agree|confirm|accept|execut|call|ok)", re.I)
CLAIMS_A_RESULT = re.compile(r"^\W*(tool )?error\b|\bsucce(ss|eded)", re.I)
# A name route refuses is refused before anyone is asked: its text must not say the user refused.
NAMES_THE_USER = re.compile(r"\buser\b", re.I)
NOT_ASKED = re.compile(r"(not|n't|never|without)\W+(\w+\W+){0,2}?ask", re.I)


@contextmanager
def two_servers():
    """A `lab` and a `personal` lab server over stdio, each on its own temporary notes folder."""
    folders = {"lab": Path(tempfile.mkdtemp(prefix="check-lab-")),
               "personal": Path(tempfile.mkdtemp(prefix="check-personal-"))}
    for note_id, text in PERSONAL_NOTES.items():
        (folders["personal"] / f"{note_id}.md").write_text(text, encoding="utf-8")
    clients = {}
    try:
        for name, folder in folders.items():
            clients[name] = StdioWire.labserver("--notes", str(folder), timeout=STARTUP_WAIT_S)
            # the first request fixes the era (modern); its reply also waits for the server to start
            clients[name].request("server/discover", id="check-discover", timeout=STARTUP_WAIT_S)
        yield clients
    finally:
        for client in clients.values():
            client.close()
        for folder in folders.values():
            shutil.rmtree(folder, ignore_errors=True)


class RecordingUser:
    """The user a check plays: says no to deleting and creating notes, yes to everything else, and remembers."""

    def __init__(self):
        self.asked = []  # (server, tool_name, arguments) as the host passed them

    def __call__(self, server, tool_name, arguments):
        self.asked.append((server, tool_name, copy.deepcopy(arguments)))
        return tool_name not in ("delete_note", "create_note")


def _frames_sent(client, start):
    """The frames a server received since transcript entry `start`, parsed (lines that are not JSON left out)."""
    frames = []
    for exchange in client.transcript.exchanges[start:]:
        for payload in exchange.up_payloads:
            try:
                frame = json.loads(payload)
            except ValueError:
                continue
            if isinstance(frame, dict):
                frames.append(frame)
    return frames


def _tool_calls(client, start):
    """The params of the tools/call requests a server received since transcript entry `start`."""
    return [frame.get("params") or {} for frame in _frames_sent(client, start) if frame.get("method") == "tools/call"]


def _names(calls):
    return [str(params.get("name")) for params in calls]


def _requests_sent(clients, before):
    """'tools/list to personal'-style lines for what the host sent since the transcript lengths in `before`."""
    return [f"{frame.get('method')} to {name}" for name, client in clients.items()
            for frame in _frames_sent(client, before[name])]


def _build(host_class, clients, user):
    outcome = attempt(host_class, clients, user)
    if outcome.error:
        failed(f"Making your host raised {outcome.error_text}",
               hint="Keep HostSkeleton.__init__ as it is; add only the methods the task asks for.")
        return None
    return outcome.value


# --- task 1 · route by namespaced name ------------------------------------------------------------

KNOWN = [("lab__search_notes", "lab", "search_notes"), ("personal__read_note", "personal", "read_note"),
         ("personal__delete_note", "personal", "delete_note")]
UNKNOWN = [("drive__search_notes", "there is no server called drive"),
           ("lab__format_disk", "the lab server has no tool called format_disk"),
           ("search_notes", "the name says no server"),
           ("lab_search_notes", "one underscore is not the separator")]


@contextmanager
def _servers(clients):
    if clients is not None:
        yield clients
        return
    with two_servers() as started:
        yield started


def check_host_routing(host_class, clients=None):
    """host.route(name) must give (server, tool definition) for a known name and raise for any other.

    `clients` is a {"lab": ..., "personal": ...} pair from `two_servers()`; by default the check starts its own.
    """
    if missing(host_class):
        not_done("define the RoutingHost class first.")
        return
    with _servers(clients) as clients:
        host = _build(host_class, clients, RecordingUser())
        if host is None:
            return
        _strip_annotations(host, UNANNOTATED)
        before = {name: len(client.transcript) for name, client in clients.items()}
        for name, server, tool_name in KNOWN:
            asked = {key: len(client.transcript) for key, client in clients.items()}
            outcome = attempt(host.route, name)
            if outcome.not_done:
                not_done("route still raises NotImplementedError. Split the name at the separator and look it "
                         "up in self.tools.")
                return
            if outcome.error:
                failed(f"route({name!r}) raised {outcome.error_text}, but the {server} server has that tool.",
                       hint=f"Split at SEPARATOR once: name.partition(SEPARATOR) gives ({server!r}, '__', "
                            f"{tool_name!r}); self.tools is keyed by the whole namespaced name.")
                return
            sent = _requests_sent(clients, asked)
            if sent:
                # Checked before the definition: a live tools/list gives a definition that is not self.tools' own.
                failed(f"route({name!r}) sent a request ({', '.join(sent[:3])}); routing only reads the table "
                       "self.tools.",
                       hint="HostSkeleton.__init__ listed every server's tools once, into self.tools, keyed by "
                            "namespaced name: look the name up there, without asking any server.")
                return
            if not _right_route(host, name, server, tool_name, outcome.value):
                return
        for name, why in UNKNOWN:
            outcome = attempt(host.route, name)
            if outcome.error is None:
                failed(f"route({name!r}) returned {short(_printable(outcome.value))}; {why}.",
                       hint="Raise Refused for a name you cannot route: a call that is not routed is never sent, "
                            "to any server.")
                return
            if "Refused" not in (kind.__name__ for kind in type(outcome.error).__mro__):
                failed(f"route({name!r}) raised {outcome.error_text}, not Refused; {why}.",
                       hint="call catches Refused to tell the model why nothing was sent; any other exception "
                            "escapes it.",
                       more="Check the name before you take it apart, and raise Refused with the reason.")
                return
        sent = {name: len(client.transcript) - before[name] for name, client in clients.items()}
        if any(sent.values()):
            failed(f"route sent requests to the servers ({sent}); routing only reads the table self.tools.")
            return
    passed("route found lab__search_notes, personal__read_note and personal__delete_note on their own servers, "
           "refused drive__search_notes, lab__format_disk, search_notes and lab_search_notes, and sent nothing.")


def _right_route(host, name, server, tool_name, value):
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        failed(f"route({name!r}) returned {short(_printable(value))}; return a pair (server name, tool definition).")
        return False
    got_server, tool = value
    if got_server != server:
        failed(f"route({name!r}) gave the server {got_server!r}, not {server!r}.",
               hint="The part before the separator names the server.")
        return False
    if not isinstance(tool, dict) or tool.get("name") != tool_name:
        failed(f"route({name!r}) gave {short(_printable(tool))} as the tool; give its definition from "
               f"self.tools (a dict whose name is {tool_name!r}).",
               hint="call needs the definition: its annotations say whether to ask the user.")
        return False
    tools = getattr(host, "tools", None)
    listed = tools.get(name) if isinstance(tools, dict) else None
    # A part of the named server's own entry is a definition built from it, whichever other entry it may equal.
    part = isinstance(listed, dict) and all(key in listed and listed[key] == value for key, value in tool.items())
    owner = None if part else _owner(host, name, tool)
    if owner is None and tool != listed:
        lacks = [key for key in listed if key not in tool] if part else []
        failed(f"route({name!r}) gave {short(_printable(tool))} as the definition of {tool_name}, not the entry "
               f"self.tools holds for {name!r}" + (f": it lacks {', '.join(lacks)}." if lacks else "."),
               hint="Return the definition from self.tools as it is, not one you build: call reads its annotations "
                    "to decide whether to ask the user.")
        return False
    if owner not in (None, server):
        unannotated = f": the {server} server lists its tools with no annotations at all" if server == UNANNOTATED else ""
        failed(f"route({name!r}) gave the {owner} server's definition of {tool_name}, not the one the {server} "
               f"server listed in self.tools{unannotated}.",
               hint="Two servers may have tools of the same name, defined differently: the definition must be the "
                    "one the named server listed.",
               more="self.tools is keyed by the whole namespaced name: look the name up there as it is.")
        return False
    return True


def _owner(host, name, tool):
    """The server whose entry in the host's table `tool` is, as far as the definitions tell them apart."""
    tools = getattr(host, "tools", None)
    if not isinstance(tools, dict) or tool == tools.get(name):
        return name.partition("__")[0]
    tool_name = name.partition("__")[2]
    return next((key.partition("__")[0] for key, entry in tools.items()
                 if key.partition("__")[2] == tool_name and entry == tool), None)


def _printable(value):
    return value if isinstance(value, (str, int, float, bool, type(None), dict, list)) else repr(value)


# --- task 2 · consent and isolation ---------------------------------------------------------------

# name, arguments, where it must arrive (None: nowhere), whether the user must be asked, what the user says
SCRIPT = [
    # the personal server annotates nothing (see UNANNOTATED): even its searches need consent
    ("personal__search_notes", {"query": "dentist"}, "personal", True, True),
    ("personal__read_note", "<the first hit>", "personal", True, True),
    ("lab__search_notes", {"query": "spindle density", "limit": 1}, "lab", False, None),
    ("lab__delete_note", {"note_id": "welcome"}, None, True, False),
    # the user can only judge a sync by the remote it goes to: ask_user gets the arguments
    ("lab__sync_notes", {"remote": "https://git.example.org/lab/notes.git"}, "lab", True, True),
    # not read-only, yet not destructive either: consent still comes first
    ("lab__create_note", {"title": "Consent check", "body": "Never created: the user says no."}, None, True, False),
    ("personal__delete_note", {"note_id": "dentist"}, None, True, False),
    ("drive__search_notes", {"query": "dentist"}, None, False, None),
]


def check_host(host_class, clients=None):
    """A scripted model drives host.call; both servers' transcripts must show consent and isolation."""
    if missing(host_class):
        not_done("define the Host class first.")
        return
    user = RecordingUser()
    with _servers(clients) as clients:
        start = {server: len(client.transcript) for server, client in clients.items()}
        host = _build(host_class, clients, user)
        if host is None:
            return
        _strip_annotations(host, UNANNOTATED)
        told = []
        for name, arguments, lands, ask, approve in SCRIPT:
            if arguments == "<the first hit>":
                arguments = _first_hit(told[-1])
                if arguments is None:
                    failed(f"The model could not read the search result it was given: {short(told[-1])}",
                           hint="Return the text forward() gives back: the model reads the hits in it.")
                    return
            before = {server: len(client.transcript) for server, client in clients.items()}
            asked_before = len(user.asked)
            outcome = attempt(host.call, name, copy.deepcopy(arguments))
            if outcome.not_done:
                not_done("call still raises NotImplementedError. Route the name, ask the user unless the tool "
                         "is read-only, then forward.")
                return
            if outcome.error:
                _report_error(name, outcome)
                return
            calls = {server: _tool_calls(client, before[server]) for server, client in clients.items()}
            step = (name, arguments, lands, ask, approve)
            if not _judge_step(host, step, outcome.value, calls, user.asked[asked_before:]):
                return
            told.append(outcome.value)
        lab, personal = (_names(_tool_calls(clients[server], start[server])) for server in ("lab", "personal"))
    asks = sum(1 for step in SCRIPT if step[3])
    denied = sum(1 for step in SCRIPT if step[3] and not step[4])
    passed(f"Over {len(SCRIPT)} proposals your host sent each call only to its own server (lab: {', '.join(lab)}; "
           f"personal: {', '.join(personal)}), asked the user before the {asks} calls that are not read-only, with "
           f"their arguments, and for no other (the {UNANNOTATED} server's, listed with no annotations at all, "
           f"among them), forwarded the arguments as proposed, kept the {denied} denied ones off the wire and told "
           "the model, and refused drive__search_notes, saying why.")


def _strip_annotations(host, server):
    """List `server`'s tools in the host's table as a server that annotates nothing would; leave a table it cannot find."""
    tools = getattr(host, "tools", None)
    if not isinstance(tools, dict):
        return
    for name, tool in tools.items():
        if name.partition("__")[0] == server and isinstance(tool, dict):
            tools[name] = {key: value for key, value in tool.items() if key != "annotations"}


def _first_hit(text):
    try:
        return {"note_id": json.loads(text)["hits"][0]["id"]}
    except (TypeError, ValueError, KeyError, IndexError):
        return None


def _report_error(name, outcome):
    if isinstance(outcome.error, KeyError) and outcome.error.args[:1] in (("annotations",), ("readOnlyHint",)):
        failed(f"host.call({name!r}, ...) raised {outcome.error_text}: the {name.partition('__')[0]} server lists "
               "its tools with no annotations at all.",
               hint="A tool may come with no annotations, or with only some hints; read them so that a missing one "
                    "gives a default instead of an error.",
               more="An absent readOnlyHint means the worst case: the tool may change things, so ask.")
        return
    failed(f"host.call({name!r}, ...) raised {outcome.error_text}",
           hint="The model must always get a text back: catch Refused and return why the call was not sent.")


def _judge_step(host, step, text, calls, asked):
    name, arguments, lands, ask, approve = step
    reached = {server: _names(params) for server, params in calls.items()}
    proposal = f"{name} {json.dumps(arguments)}"
    server_name, _, tool_name = name.partition("__")
    unannotated = ", a tool your host's table lists with no annotations at all," if server_name == UNANNOTATED else ""
    if asked and lands is None and not ask:
        failed(f"The model proposed {proposal}, a name your host cannot route, and your host asked the user "
               "about it.",
               hint="Route first: a name whose server or tool is unknown is refused before anyone is asked, and "
                    "nothing is sent.")
        return False
    if ask and not asked:
        failed(f"The model proposed {proposal}{unannotated} and your host went on without asking the user."
               + _judged_elsewhere(host, name),
               hint="Only a tool annotated readOnlyHint: true may run unasked; an absent hint means the tool may "
                    "change things.",
               more="Ask the user before every tool that is not annotated readOnlyHint: true, whatever its "
                    "destructiveHint says, reading the definition the named server listed.")
        return False
    if asked and not ask:
        failed(f"The model proposed {proposal}, a read-only tool, and your host asked the user about it.",
               hint="A user asked about every call learns to click yes without reading: ask only where the "
                    "tool may change something (it is not annotated readOnlyHint: true).")
        return False
    if asked and not _asked_right(proposal, (server_name, tool_name, arguments), asked[0]):
        return False
    wrong = {server: calls for server, calls in reached.items() if calls and server != lands}
    if wrong:
        server, calls = next(iter(wrong.items()))
        why = {None: "it should not have been sent at all"}.get(lands, f"it was meant for {lands}")
        if ask and not approve:
            why = "the user denied it, so it must not be sent"
        failed(f"The model proposed {proposal}, and the {server} server received tools/call {calls}; {why}.",
               hint=_hint_for(lands, ask, approve))
        return False
    if lands is not None and reached[lands] != [tool_name]:
        got = reached[lands]
        hint = (f"Forward the tool's own name ({tool_name!r}), not the namespaced one: the server knows nothing "
                "of your namespaces.") if got else _hint_for(lands, ask, approve)
        failed(f"The model proposed {proposal}; the {lands} server received tools/call {got or 'nothing'}.",
               hint=hint)
        return False
    if lands is not None and not _forwarded_as_proposed(proposal, lands, ask, arguments, calls[lands][0]):
        return False
    if not isinstance(text, str) or not text:
        failed(f"After {proposal} your host gave the model {short(text)}; give it a text, always.",
               hint="The model reads what call returns: the result, or why there is none.")
        return False
    if ask and not approve and (not DENIED_WORDS.search(text) or CLAIMS_A_RESULT.search(text)):
        failed(f"The user denied {name}, and your host told the model {short(text)!r}.",
               hint="Say that the user denied it (\"denied: the user did not allow ...\"), so the model does not "
                    "think it ran, or failed, and try it again.")
        return False
    if lands is None and not ask:
        return _refusal_says_why(host, name, text)
    return True


def _forwarded_as_proposed(proposal, server, asked, proposed, params):
    """Whether the server got the arguments the model proposed (and the user approved); if not, say so."""
    got = params.get("arguments")
    if got == proposed:
        return True
    if asked:
        failed(f"The user approved {proposal}, and the {server} server received it with the arguments "
               f"{short(got)}: a call the user never saw.",
               hint="Consent covers the call as the user was shown it: forward the arguments you passed ask_user, "
                    "unchanged.",
               more="Pass self.forward the arguments dict call was given, without adding, dropping or rewriting "
                    "a key.")
    else:
        failed(f"The model proposed {proposal}, and the {server} server received it with the arguments {short(got)}.",
               hint="Forward the arguments the model proposed, unchanged: the host routes a call, it does not "
                    "rewrite it.")
    return False


def _refusal_says_why(host, name, text):
    """Whether the text for a name route refuses gives the reason, and does not blame a user nobody asked."""
    if NAMES_THE_USER.search(text) and DENIED_WORDS.search(text) and not NOT_ASKED.search(text):
        failed(f"Your host refused {name}, which it cannot route, and told the model {short(text)!r}: the user "
               "was never asked.",
               hint="Tell the model why route refused (\"refused by the host: there is no server called 'drive'\"); "
                    "a model told the user said no may ask the user again.")
        return False
    route = getattr(host, "route", None)
    outcome = attempt(route, name) if callable(route) else None
    reason = str(outcome.error).strip() if outcome is not None and outcome.error else ""
    if (reason and reason in text) or name.partition("__")[0] in text:
        return True
    failed(f"Your host refused {name}, which it cannot route, and told the model {short(text)!r}: that does not "
           "say why nothing was sent.",
           hint="Return the reason Refused carries: except Refused as refusal: return f\"refused by the host: "
                "{refusal}\".",
           more="Catch Refused only: a broader except also hides your own bugs behind the same text.")
    return False


def _judged_elsewhere(host, name):
    """Why a host that routes to the right server may still have read another server's definition."""
    route = getattr(host, "route", None)
    outcome = attempt(route, name) if callable(route) else None
    if outcome is None or outcome.error or not isinstance(outcome.value, (tuple, list)) or len(outcome.value) != 2:
        return ""
    owner = _owner(host, name, outcome.value[1])
    if owner in (None, name.partition("__")[0]):
        return ""
    return (f" Your route gave it the {owner} server's definition of {name.partition('__')[2]}, annotated there: "
            f"take the one the {name.partition('__')[0]} server listed.")


def _asked_right(proposal, expected, got):
    """Whether the host asked ask_user(server, tool_name, arguments) about the proposed call; if not, say so."""
    if tuple(got[:2]) != expected[:2]:
        failed(f"The model proposed {proposal}; your host asked the user ask_user({short(repr(got[0]))}, "
               f"{short(repr(got[1]))}, ...), not ask_user({expected[0]!r}, {expected[1]!r}, ...).",
               hint="The user is asked ask_user(server, tool_name, arguments): the server's name first, then the "
                    "tool's own name, as the server knows it.")
        return False
    if isinstance(got[2], str) and _as_json(got[2]) == expected[2]:
        failed(f"The model proposed {proposal}; your host passed ask_user the arguments as a str (JSON text) where "
               "it takes the arguments dict.",
               hint="ask_user(server, tool_name, arguments) shows the user the arguments itself: pass the dict the "
                    "model proposed, unchanged.")
        return False
    if got[2] != expected[2]:
        failed(f"The model proposed {proposal}; your host asked the user about {proposal.split()[0]} with the "
               f"arguments {short(got[2])}: the user would approve it without seeing what it does.",
               hint="The user can only judge a call by what it will do: which note it deletes, where a sync sends "
                    "the notes. Show them the arguments.",
               more="Pass ask_user the arguments the model proposed, unchanged.")
        return False
    return True


def _as_json(text):
    try:
        return json.loads(text)
    except ValueError:
        return None


def _hint_for(lands, ask, approve):
    if lands is None and not ask:
        return "Route first: a name whose server or tool is unknown raises Refused, and nothing is sent."
    if ask and not approve:
        return "When ask_user returns False, return a text saying so, without calling forward."
    if ask:
        return "The user said yes to this very call: forward it, whatever they answered before."
    return "Send the call with self.forward(server, tool name, arguments), on the server the name gives."
