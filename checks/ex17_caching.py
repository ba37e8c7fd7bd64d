"""Checks for exercise 17: a caching client that honors ttlMs and notifications, and what it saves.

The learner's class is built as `CachingClient(send, clock)`: `send(method, params)` makes
one real round trip to the lab server and returns the reply as a dict; `clock()` is a
FakeClock in milliseconds, so minutes pass in an instant and every run is the same.
"""

import copy

from mcpwire import frames
from mcpwire.cache import FakeClock, round_trip_cost
from .attempt import attempt, missing
from .servers import stdio_lab
from .verdict import failed, not_done, passed, server_said, short

MINUTE_MS = 60_000
INDEX = {"uri": "notes://index"}
LISTS = [("tools/list", None), ("prompts/list", None), ("resources/templates/list", None),
         ("resources/list", None), ("resources/read", INDEX)]
LISTEN = {"notifications": {"toolsListChanged": True, "resourcesListChanged": True,
                            "resourceSubscriptions": [INDEX["uri"]]}}
WELCOME = {"uri": "notes://welcome"}
CACHED_BEFORE_THE_NOTE = [("tools/list", None), ("prompts/list", None), ("resources/read", INDEX),
                          ("resources/read", WELCOME), ("resources/list", None), ("resources/templates/list", None)]
# What creating a note makes stale: (method, params, what the client answered, hint, second hint).
STALE_AFTER_THE_NOTE = [
    ("resources/read", INDEX, "resources/read of notes://index, without the new note,",
     "notifications/resources/updated names the changed resource in params.uri: drop the resources/read entry "
     "for that uri.", None),
    ("resources/list", None, "resources/list", "A list_changed notification says which list is stale: the one of its kind.",
     "notifications/resources/list_changed stales every resources/list entry; the spec does not say whether it "
     "covers the template list, and this course drops that too."),
    ("resources/templates/list", None, "resources/templates/list",
     "The spec does not say whether notifications/resources/list_changed covers the template list; this course "
     "drops it too, the safe reading.", None),
]
# What creating a note says nothing about: a cache must still answer these from its store.
KEPT = [("tools/list", None, "tools/list", "no tool changed"), ("prompts/list", None, "prompts/list", "no prompt changed"),
        ("resources/read", WELCOME, "resources/read of notes://welcome", "the server named only notes://index")]
NOTIFICATION_WAIT_S = 10
ABSENT = object()


class _CountingSend:
    """The `send` a learner's client gets: one real request per call, counted with its bytes on the wire."""

    def __init__(self, wire):
        self.wire = wire
        self.calls = 0
        self.bytes = 0
        self.last = None  # the reply the learner's client was given last
        self.ttl_ms = ABSENT  # ABSENT: the server's own ttlMs; None: drop it; a number: put that instead

    def __call__(self, method, params=None):
        # One id for every request: each is answered before the next goes out, so ids never collide,
        # and the byte counts do not depend on how many requests the wire has seen before.
        reply = self.wire.send(frames.request(method, copy.deepcopy(params), id=1))
        self.calls += 1
        self.bytes += round_trip_cost(self.wire, reply)[0]
        self.last = copy.deepcopy(reply.message)
        result = self.last.get("result") if isinstance(self.last, dict) else None
        if self.ttl_ms is not ABSENT and isinstance(result, dict):
            result.pop("ttlMs", None)
            if self.ttl_ms is not None:
                result["ttlMs"] = self.ttl_ms
        return self.last


class _Session:
    """One learner client on a fake clock, and what its requests cost."""

    def __init__(self, client_class, wire):
        self.clock = FakeClock()
        self.send = _CountingSend(wire)
        self.built = attempt(client_class, self.send, self.clock)
        self.client = self.built.value

    def ask(self, at_ms, method, params=None):
        """(sent?, the reply or an Attempt that failed)"""
        self.clock.now_ms = at_ms
        before = self.send.calls
        outcome = attempt(self.client.request, method, copy.deepcopy(params))
        return self.send.calls > before, outcome


def _broken(session, what):
    """Report an unfinished or crashing learner class; True when there was something to report."""
    outcome = session.built if session.built.error else None
    if outcome is None:
        return False
    if outcome.not_done:
        not_done(f"CachingClient({what}) still raises NotImplementedError.")
    else:
        failed(f"CachingClient(send, clock) raised {outcome.error_text}")
    return True


def _failed_call(outcome, method):
    if outcome.not_done:
        not_done("CachingClient.request still raises NotImplementedError. Look the request up in your store; "
                 "send it only when there is no fresh entry.")
    elif isinstance(outcome.error, TypeError) and "unhashable" in str(outcome.error):
        failed(f"request({method!r}) raised {outcome.error_text}: your key holds a dict inside params (a tools/call's "
               "arguments), and a dict cannot be part of a dict key.",
               hint="params can nest: build the key from all of them as one hashable value.",
               more="Text is hashable: write params as JSON, with its keys sorted so that the same params always give "
                    "the same key.")
    else:
        failed(f"request({method!r}) raised {outcome.error_text}",
               hint="An error reply has no \"result\", and a tools/call result has no \"ttlMs\": read with .get().")


def check_cache_rules(client_class, lab=None):
    """Fresh while now < received + ttlMs; keyed by method and params; only cacheable results stored."""
    if missing(client_class):
        not_done("define the CachingClient class first.")
        return
    with stdio_lab(lab) as wire:
        for rule in (_rule_ttl, _rule_key, _rule_not_cacheable, _rule_zero_or_no_ttl):
            session = _Session(client_class, wire)
            if _broken(session, "send, clock") or not rule(session):
                return
    passed("Your cache answered tools/list from its store at 4 minutes, asked again at 5 (its ttlMs), answered from "
           "the reply it got then at 9 and asked again at 10, kept "
           "notes://index and notes://welcome apart and two pages of resources/list too, sent every tools/call and every error through, and did not "
           "reuse a list whose ttlMs was 0 or missing.")


def _rule_ttl(session):
    plan = [(0, True, "at 0 minutes, with nothing stored yet"),
            (4 * MINUTE_MS, False, "at 4 minutes, while the tools/list reply (ttlMs 300000) is fresh"),
            (5 * MINUTE_MS, True, "at exactly 5 minutes, when the entry has gone stale"),
            # Stored at a moment other than 0: its time runs from when it was received, not from 0.
            (9 * MINUTE_MS, False, "at 9 minutes, while the reply received at 5 minutes is fresh"),
            (10 * MINUTE_MS, True, "at exactly 10 minutes, 5 minutes after the reply was received")]
    first = None
    for at_ms, must_send, when in plan:
        sent, outcome = session.ask(at_ms, "tools/list")
        if outcome.error:
            _failed_call(outcome, "tools/list")
            return False
        if sent != must_send:
            if must_send:
                failed(f"Asked for tools/list {when}, your client answered from its store instead of sending.",
                       hint="An entry is fresh only while clock() < received + ttlMs: at received + ttlMs it is stale.")
            else:
                failed(f"Asked for tools/list {when}, your client sent the request again.",
                       hint="Store each cacheable reply with the clock() time you received it, and answer from the "
                            "store while clock() < received + ttlMs.")
            return False
        if sent and outcome.value != session.send.last:
            failed(f"Asked for tools/list {when}, your client returned {short(outcome.value)}, not the reply "
                   "send() gave it.", hint="Return the reply as send() gave it (the whole dict, with its \"result\" "
                                           "or its \"error\"), and store that reply.")
            return False
        if not sent and outcome.value != first:
            failed(f"Asked for tools/list {when}, your client returned {short(outcome.value)}, "
                   "not the reply it stored.")
            return False
        first = outcome.value if sent else first
    return True


def _rule_key(session):
    for uri in ("notes://index", "notes://welcome"):
        sent, outcome = session.ask(0, "resources/read", {"uri": uri})
        if outcome.error:
            _failed_call(outcome, "resources/read")
            return False
        contents = ((outcome.value or {}).get("result") or {}).get("contents") or [{}]
        if not sent or contents[0].get("uri") != uri:
            failed(f"Asked for resources/read of {uri}, your client answered with "
                   f"the reply for {contents[0].get('uri')!r}.",
                   hint="The key is the method plus the params that shape the result, e.g. "
                        "(method, json.dumps(params, sort_keys=True)). Two URIs are two entries.")
            return False
    return _pages_apart(session)


def _pages_apart(session):
    """The lab pages resources/list: a cursor is a param that shapes the result, so each page is its own entry."""
    _, first = session.ask(0, "resources/list")
    if first.error:
        _failed_call(first, "resources/list")
        return False
    cursor = ((first.value or {}).get("result") or {}).get("nextCursor") if isinstance(first.value, dict) else None
    if not cursor:
        return True  # only a reply the learner's client changed has no cursor; the other rules judge that
    sent, second = session.ask(0, "resources/list", {"cursor": cursor})
    if second.error:
        _failed_call(second, "resources/list")
        return False
    if not sent:
        failed("Asked for the second page of resources/list (params {\"cursor\": …}), your client answered with "
               "the first page from its store.",
               hint="The cursor is one of the params that shape the result: each page is an entry of its own.")
        return False
    return True


def _rule_not_cacheable(session):
    requests = [("tools/call", {"name": "search_notes", "arguments": {"query": "spindle", "limit": 1}},
                 "A tools/call result carries no ttlMs, so it is never cached."),
                ("resources/read", {"uri": "notes://no-such-note"},
                 "An error reply has no result and no ttlMs: never cache it.")]
    for method, params, why in requests:
        for _ in range(2):
            sent, outcome = session.ask(0, method, params)
            if outcome.error:
                _failed_call(outcome, method)
                return False
            if not sent:
                failed(f"The second {method} {short(params)} came from your client's store.",
                       server=server_said(outcome.value), hint=why + " Store only results with a ttlMs above 0.")
                return False
    return True


def _rule_zero_or_no_ttl(session):
    """A ttlMs of 0 is stale at once, and a missing one counts as 0: the spec's rules, whatever the method."""
    cases = [(0, "with ttlMs 0 (what SDK 2.3.0 sends unless a server sets its own hints)",
              "A ttlMs of 0 means stale at once: never answer from the store with it."),
             (None, "without a ttlMs (what a server older than 2026-07-28 sends)",
              "A missing ttlMs counts as 0, whatever the method: do not give it a default of your own.")]
    for ttl_ms, what, why in cases:
        session.send.ttl_ms = ttl_ms
        try:
            for _ in range(2):
                sent, outcome = session.ask(0, "resources/list")
                if outcome.error:
                    _failed_call(outcome, "resources/list")
                    return False
                if not sent:
                    failed(f"The check gave your client a resources/list reply {what}; asked again at the same "
                           "moment, your client answered from its store.",
                           hint=why + " Store only results with a ttlMs above 0.")
                    return False
        finally:
            session.send.ttl_ms = ABSENT
    return True


def check_cache_invalidation(client_class):
    """notice(notification) must drop exactly the entries a list_changed or updated notification makes stale."""
    if missing(client_class):
        not_done("define the CachingClient class first.")
        return
    with stdio_lab() as wire:
        wire.write(frames.request("subscriptions/listen", LISTEN, id="listen"))
        wire.read(timeout=NOTIFICATION_WAIT_S)  # the listen's acknowledgement
        session = _Session(client_class, wire)
        if _broken(session, "send, clock"):
            return
        for method, params in CACHED_BEFORE_THE_NOTE:
            _, outcome = session.ask(0, method, params)
            if outcome.error:
                _failed_call(outcome, method)
                return
        notifications = _create_a_note(wire)
        said = ", ".join(n["method"] for n in notifications)
        for notification in notifications:
            noticed = attempt(session.client.notice, copy.deepcopy(notification))
            if noticed.not_done:
                not_done("CachingClient.notice still raises NotImplementedError. Drop the entries the "
                         "notification says are stale.")
                return
            if noticed.error:
                failed(f"notice raised {noticed.error_text} for {short(notification)}")
                return
        for method, params, what, hint, more in STALE_AFTER_THE_NOTE:
            sent, outcome = session.ask(1000, method, params)
            if outcome.error:
                _failed_call(outcome, method)
                return
            if not sent:
                failed(f"A note was created and the server said so ({said}), yet your client answered {what} from "
                       "its store.", hint=hint, more=more)
                return
        for method, params, what, why in KEPT:
            sent, outcome = session.ask(1000, method, params)
            if outcome.error:
                _failed_call(outcome, method)
                return
            if sent:
                failed(f"After {said}, your client sent {what} again although {why}.",
                       hint="Drop only what a notification names: resources/list_changed stales the resource lists, "
                            "resources/updated the one uri it names, tools/list_changed the tool list.")
                return
        if not _list_changed_drops(session, said):
            return
    passed(f"After a note was created ({said}), your cache dropped the note index and the resource lists, and kept "
           "the tool list, the prompt list and notes://welcome; tools/list_changed, prompts/list_changed and "
           "resources/list_changed each dropped their own lists.")


def _list_changed_drops(session, said):
    """The lab, started without --tool-descriptions, never changes its tools or prompts, so the check hands notice()
    what a server whose lists did sends.

    resources/list_changed comes alone too: with the lab's, a resources/updated arrives, which may hide that a
    client ignores the list_changed.
    """
    for kind, other in (("tools", "prompts"), ("prompts", "tools"), ("resources", "tools")):
        notification = {"jsonrpc": "2.0", "method": f"notifications/{kind}/list_changed",
                        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "listen"}}}
        noticed = attempt(session.client.notice, copy.deepcopy(notification))
        if noticed.error:
            failed(f"notice raised {noticed.error_text} for {short(notification)}",
                   hint="A list_changed notification has no uri: read params with .get().")
            return False
        sent, outcome = session.ask(2000, f"{kind}/list")
        if outcome.error:
            _failed_call(outcome, f"{kind}/list")
            return False
        if not sent:
            made = ("on its own (the check made it, without the resources/updated the lab sends beside it)"
                    if kind == "resources" else
                    f"(the lab never sends one, so the check made it as a server whose {kind} changed would)")
            failed(f"Given notifications/{kind}/list_changed {made}, your client still answered {kind}/list from "
                   "its store.", hint=f"notifications/{kind}/list_changed stales every {kind}/list entry.")
            return False
        if kind == "resources":
            sent, outcome = session.ask(2000, "resources/templates/list")
            if outcome.error:
                _failed_call(outcome, "resources/templates/list")
                return False
            if not sent:
                failed("Given notifications/resources/list_changed on its own, your client still answered "
                       "resources/templates/list from its store.",
                       hint="The spec does not say whether resources/list_changed covers the template list; this course "
                            "drops it too, the safe reading.")
                return False
        if kind == "tools":
            sent, outcome = session.ask(2000, f"{other}/list")
            if sent:
                failed(f"Given notifications/tools/list_changed, your client also sent {other}/list again.",
                       hint="Drop only what a notification names.")
                return False
    return True


def _create_a_note(wire):
    """Create a note; return the notifications the listen stream sent about it."""
    wire.request("tools/call", {"name": "create_note", "arguments": {"title": "Cache check", "body": "A new note."}})
    notifications = []
    while not any(n["method"] == "notifications/resources/updated" for n in notifications):
        message = wire.read(timeout=NOTIFICATION_WAIT_S)
        if message is None:
            break
        if isinstance(message.message, dict) and "method" in message.message:
            notifications.append(message.message)
    return notifications


def measure_cache(client_class, lab=None, *, turn_ms=20_000, minutes=10):
    """Run a host's refresh loop with and without the learner's cache; print the round trips and bytes saved."""
    if missing(client_class):
        not_done("define the CachingClient class first.")
        return
    with stdio_lab(lab) as wire:
        plain = _CountingSend(wire)
        session = _Session(client_class, wire)
        if _broken(session, "send, clock"):
            return
        turns = range(0, minutes * MINUTE_MS, turn_ms)
        for at_ms in turns:
            for method, params in LISTS:
                plain(method, params)
                _, outcome = session.ask(at_ms, method, params)
                if outcome.error:
                    if outcome.not_done:
                        not_done("measure after tasks 1 and 2 pass.")
                    else:
                        _failed_call(outcome, method)
                    return
    requests = len(turns) * len(LISTS)
    saved = plain.bytes - session.send.bytes
    print(f"{len(turns)} turns, {turn_ms // 1000} seconds apart, each asking for the same {len(LISTS)} lists: "
          f"{requests} requests")
    print(f"{'':<22} {'round trips':>11} {'bytes':>9}   (bytes on the wire, both ways, stdio framing included)")
    print(f"{'without a cache':<22} {plain.calls:>11} {plain.bytes:>9}")
    print(f"{'with your cache':<22} {session.send.calls:>11} {session.send.bytes:>9}")
    print(f"saved: {plain.calls - session.send.calls} round trips and {saved} bytes "
          f"({round(100 * saved / plain.bytes)}% of the bytes)")
