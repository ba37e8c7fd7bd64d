"""Exercises 11 and 13: each wrong answer a learner might write gets ✗ with a message naming its mistake."""

import copy

import pytest

import checks
from test_checks_13 import SEPARATOR, HostSkeleton, Refused

PREFIX = "io.modelcontextprotocol/"
HANDSHAKE = ("initialize", "notifications/initialized")


def fails_naming(out, phrases):
    return out.startswith("✗") and all(phrase in out for phrase in phrases)


# --- 11 task 1 · the envelope from the handshake ----------------------------------------------------------

def envelope_from(*, version="2026-07-28", capabilities=True, info=True, prefix=PREFIX, wrap=False):
    def work(initialize):
        params = initialize["params"]
        envelope = {prefix + "protocolVersion": params["protocolVersion"] if version is None else version,
                    prefix + "clientCapabilities": params["capabilities"] if capabilities else {}}
        if info:
            envelope[prefix + "clientInfo"] = params["clientInfo"]
        return {"_meta": envelope} if wrap else envelope
    return work


ENVELOPE_RIGHT = [
    pytest.param(envelope_from(), id="solution"),
    pytest.param(lambda init: {f"{PREFIX}{key}": value for key, value in [
        ("protocolVersion", "2026-07-28"), ("clientCapabilities", copy.deepcopy(init["params"]["capabilities"])),
        ("clientInfo", dict(init["params"]["clientInfo"]))]}, id="comprehension-with-copies"),
]
ENVELOPE_WRONG = [
    pytest.param(envelope_from(version=None), ("names the version '2025-11-25'", "-32022"), id="handshake-version"),
    pytest.param(envelope_from(capabilities=False), ("clientCapabilities = {}",), id="capabilities-dropped"),
    pytest.param(envelope_from(wrap=True), ("not the _meta dict itself",), id="returns-a-frame"),
    pytest.param(envelope_from(prefix=""), ("the key 'protocolVersion'", "prefix"), id="keys-without-prefix"),
    pytest.param(envelope_from(info=False), ("has no io.modelcontextprotocol/clientInfo",), id="client-info-dropped"),
]


@pytest.mark.parametrize("work", ENVELOPE_RIGHT)
def test_envelope_from_initialize_right_answers_pass(verdict, work):
    assert verdict(checks.check_envelope_from_initialize, work).startswith("✓ envelope_from moved")


@pytest.mark.parametrize("work, phrases", ENVELOPE_WRONG)
def test_envelope_from_initialize_wrong_answers_name_their_mistake(verdict, work, phrases):
    out = verdict(checks.check_envelope_from_initialize, work)
    assert fails_naming(out, phrases), out


# --- 11 task 2 · translate the session -----------------------------------------------------------------------

def translate(*, drop=HANDSHAKE, where="params", renumber=False, envelope=envelope_from(), create_params=True):
    def work(legacy_frames):
        meta = envelope(next(f for f in legacy_frames if f["method"] == "initialize"))
        modern = []
        for number, frame in enumerate(f for f in legacy_frames if f["method"] not in drop):
            frame = copy.deepcopy(frame)
            if where == "top":
                frame["_meta"] = copy.deepcopy(meta)
            elif create_params:
                frame.setdefault("params", {}).setdefault("_meta", {}).update(copy.deepcopy(meta))
            else:
                frame["params"].setdefault("_meta", {}).update(copy.deepcopy(meta))
            if renumber:
                frame["id"] = number + 1
            modern.append(frame)
        return modern
    return work


TRANSLATE_WRONG = [
    pytest.param(translate(drop=("notifications/initialized",)), ("still hold initialize", "-32600"),
                 id="initialize-kept"),
    pytest.param(translate(where="top"), ("error -32602", "_meta goes inside params"), id="envelope-beside-params"),
    pytest.param(translate(renumber=True), ("have the ids", "matched to the legacy ones by id"), id="ids-renumbered"),
    pytest.param(translate(envelope=envelope_from(version="2025-11-25")), ("error -32022", "names '2025-11-25'"),
                 id="legacy-version"),
    pytest.param(translate(create_params=False), ("raised KeyError", "create them before adding _meta"),
                 id="params-assumed"),
    pytest.param(translate(envelope=envelope_from(info=False)), ("carries no io.modelcontextprotocol/clientInfo", "SHOULD say who it is"),
                 id="client-info-dropped"),
    pytest.param(translate(envelope=lambda initialize: envelope_from()(checks.LEGACY_SESSION[0])),
                 ("For another session", "session's own initialize"), id="printed-envelope-hard-coded"),
]


def test_translation_right_answer_passes(verdict):
    assert verdict(checks.check_translation, translate()).startswith("✓ A 2026-07-28 server gave your 4 requests")


@pytest.mark.parametrize("work, phrases", TRANSLATE_WRONG)
def test_translation_wrong_answers_name_their_mistake(verdict, work, phrases):
    out = verdict(checks.check_translation, work)
    assert fails_naming(out, phrases), out


# --- 09 · a host over two servers -------------------------------------------------------------------------------

def routing_host(split):
    class RoutingHost(HostSkeleton):
        def route(self, name):
            server, tool_name = split(name)
            if server not in self.clients:
                raise Refused(f"there is no server called {server!r}")
            if f"{server}{SEPARATOR}{tool_name}" not in self.tools:
                raise Refused(f"the {server} server has no tool called {tool_name!r}")
            return server, self.tools[f"{server}{SEPARATOR}{tool_name}"]
    return RoutingHost


def by_partition(name):
    server, _, tool_name = name.partition(SEPARATOR)
    return server, tool_name


def by_single_underscore(name):
    server, _, tool_name = name.partition("_")
    return server, tool_name.lstrip("_")


ROUTE_RIGHT = [pytest.param(routing_host(by_partition), id="solution"),
               pytest.param(routing_host(lambda name: tuple(name.split(SEPARATOR, 1)) if SEPARATOR in name
                                         else ("", name)), id="split-once")]
ROUTE_WRONG = [
    pytest.param(routing_host(by_single_underscore), ("lab_search_notes",), id="one-underscore-accepted"),
    pytest.param(routing_host(lambda name: name.split(SEPARATOR)), ("route('search_notes') raised ValueError",
                                                                    "not Refused"), id="unpacks-a-bare-name"),
]


@pytest.mark.parametrize("host", ROUTE_RIGHT)
def test_routing_right_answers_pass(verdict, clients, host):
    assert verdict(checks.check_host_routing, host, clients).startswith("✓ route found lab__search_notes")


@pytest.mark.parametrize("host, phrases", ROUTE_WRONG)
def test_routing_wrong_answers_name_their_mistake(verdict, clients, host, phrases):
    out = verdict(checks.check_host_routing, host, clients)
    assert fails_naming(out, phrases), out


def consent_host(needs_consent, *, namespaced_forward=False, catch=True, deny_text="denied: the user said no"):
    class Host(routing_host(by_partition)):
        def call(self, name, arguments):
            try:
                server, tool = self.route(name)
            except Refused as refusal:
                if not catch:
                    raise
                return f"refused by the host: {refusal}"
            if needs_consent(tool) and not self.ask_user(server, tool["name"], arguments):
                return deny_text
            return self.forward(server, name if namespaced_forward else tool["name"], arguments)
    return Host


def annotations(tool):
    return tool.get("annotations") or {}


HOST_RIGHT = [
    pytest.param(consent_host(lambda tool: not annotations(tool).get("readOnlyHint", False)), id="solution"),
    pytest.param(consent_host(lambda tool: annotations(tool).get("readOnlyHint") is not True), id="is-not-true"),
]
HOST_WRONG = [
    pytest.param(consent_host(lambda tool: annotations(tool).get("destructiveHint", True)),
                 ("lab__create_note", "without asking the user", "whatever its destructiveHint says"),
                 id="absent-destructive-taken-as-safe"),
    pytest.param(consent_host(lambda tool: False), ("personal__search_notes", "without asking the user"), id="never-asks"),
    pytest.param(consent_host(lambda tool: True), ("lab__search_notes", "a read-only tool", "asked the user"),
                 id="asks-for-everything"),
    pytest.param(consent_host(lambda tool: not annotations(tool).get("readOnlyHint", False), namespaced_forward=True),
                 ("personal__search_notes", "tool's own name"), id="forwards-the-namespaced-name"),
    pytest.param(consent_host(lambda tool: not annotations(tool).get("readOnlyHint", False), catch=False),
                 ("raised Refused", "catch Refused"), id="refusal-escapes"),
    pytest.param(consent_host(lambda tool: not annotations(tool).get("readOnlyHint", False), deny_text="ok"),
                 ("your host told the model 'ok'",), id="denial-hidden-from-the-model"),
]


@pytest.mark.parametrize("host", HOST_RIGHT)
def test_host_right_answers_pass(verdict, clients, host):
    assert verdict(checks.check_host, host, clients).startswith("✓ Over 8 proposals")


@pytest.mark.parametrize("host, phrases", HOST_WRONG)
def test_host_wrong_answers_name_their_mistake(verdict, clients, host, phrases):
    out = verdict(checks.check_host, host, clients)
    assert fails_naming(out, phrases), out
