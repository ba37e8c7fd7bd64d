"""Exercises 14, 15 and 17: each wrong answer a learner might write gets ✗ with a message naming its mistake."""

import json
import re
from urllib.parse import unquote, urlsplit

import pytest

import checks
from checks import ex14_security as security
from checks import ex15_note_ids as note_ids

INVISIBLE = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff\U000e0000-\U000e007f]")
RULES = {
    "markup": re.compile(r"</?\s*(important|system)\b", re.I),
    "secrecy": re.compile(r"\b(do not|don't|never)\s+(tell|mention|show)\b", re.I),
    "before": re.compile(r"\bbefore (answering|calling)\b", re.I),
    "uri": re.compile(r"\b[a-z][a-z0-9+.-]*://", re.I),
    "invisible": INVISIBLE,
}


def fails_naming(out, phrases):
    return out.startswith("✗") and all(phrase in out for phrase in phrases)


@pytest.fixture(scope="module")
def weather():
    with security.weather_server() as wire:
        yield wire


# --- 14 task 1 · poisoned descriptions ----------------------------------------------------------------

def descriptions(tool, nested=True):
    if not nested:
        return tool.get("description", "")
    return " ".join(re.findall(r'"description":\s*"((?:[^"\\]|\\.)*)"', json.dumps(tool, ensure_ascii=False)))


def flagger(*, rules=tuple(RULES), nested=True, others=True):
    def work(reply, other_tools):
        named = re.compile(r"\b(" + "|".join(map(re.escape, other_tools)) + r")\b") if other_tools else None
        flagged = set()
        for tool in reply["result"]["tools"]:
            text = descriptions(tool, nested)
            if any(RULES[rule].search(text) for rule in rules) or (others and named and named.search(text)):
                flagged.add(tool["name"])
        return flagged
    return work


FLAG_RIGHT = [
    pytest.param(flagger(), id="solution"),
    pytest.param(lambda reply, others: sorted(flagger()(reply, others)), id="a-sorted-list"),
]
FLAG_WRONG = [
    pytest.param(flagger(nested=False), ("did not flag convert_temperature", "inputSchema properties"),
                 id="top-description-only"),
    pytest.param(flagger(rules=("markup", "secrecy", "before", "uri")), ("did not flag air_quality",
                                                                         "invisible tag characters"), id="no-invisible-rule"),
    pytest.param(flagger(rules=("invisible",), others=False), ("did not flag get_alerts",), id="invisible-only"),
    pytest.param(lambda reply, others: {t["name"] for t in reply["result"]["tools"]},
                 ("flagged", "which is harmless"), id="flags-everything"),
    pytest.param(lambda reply, others: any(INVISIBLE.search(descriptions(t)) for t in reply["result"]["tools"]),
                 ("return the names of the flagged tools",), id="returns-a-bool"),
    pytest.param(lambda reply, others: {t["name"] for t in reply["result"]["tools"] if not descriptions(t).isprintable()
                                        or any(mark in descriptions(t) for mark in ("<", "://"))},
                 ("did not flag get_alerts", "what it says"), id="shape-not-meaning"),
]


@pytest.mark.parametrize("work", FLAG_RIGHT)
def test_poison_flagger_right_answers_pass(verdict, weather, lab, work):
    assert verdict(security.check_poison_flagger, work, weather, lab).startswith("✓ Your function flagged")


@pytest.mark.parametrize("work, phrases", FLAG_WRONG)
def test_poison_flagger_wrong_answers_name_their_mistake(verdict, weather, lab, work, phrases):
    out = verdict(security.check_poison_flagger, work, weather, lab)
    assert fails_naming(out, phrases), out


# --- 15 task 1 · note ids --------------------------------------------------------------------------------

def is_safe(*, pattern=r"[a-z0-9]+(?:-[a-z0-9]+)*", flags=re.ASCII, whole=True, limit=64, type_check=True):
    def work(note_id):
        if type_check and not isinstance(note_id, str):
            return False
        if limit is not None and len(note_id) > limit:
            return False
        if whole:
            return re.fullmatch(pattern, note_id, flags) is not None
        return re.match(pattern + "$", note_id, flags) is not None
    return work


ID_RIGHT = [
    pytest.param(is_safe(), id="solution"),
    pytest.param(lambda i: type(i) is str and 0 < len(i) <= 64 and i.isascii() and all(
        w.isalnum() and w == w.lower() for w in i.split("-")), id="split-on-hyphens"),
    pytest.param(lambda i: isinstance(i, str) and 0 < len(i) <= 64 and all(
        w and set(w) <= set("abcdefghijklmnopqrstuvwxyz0123456789") for w in i.split("-")), id="str-methods-and-a-set"),
]
ID_WRONG = [
    pytest.param(is_safe(pattern=r"[a-z0-9-]{1,64}"), ("'a--b'", "two hyphens in a row", "never first, last or doubled"),
                 id="hyphens-anywhere"),
    pytest.param(is_safe(pattern=r"[a-z\d]+(?:-[a-z\d]+)*", flags=0), ("Arabic-Indic digit", "re.ASCII"),
                 id="unicode-digits"),
    pytest.param(is_safe(pattern=r"\w+(?:-\w+)*", flags=0), ("accepted",), id="word-class-without-ascii"),
    pytest.param(is_safe(whole=False), ("'welcome\\n'", "trailing newline"), id="match-and-dollar"),
    pytest.param(is_safe(limit=None), ("longer than 64", "length"), id="no-length-bound"),
    pytest.param(is_safe(type_check=False), ("raised TypeError", "not a string"), id="no-type-check"),
    pytest.param(is_safe(pattern=r"[a-zA-Z0-9]+(?:-[a-zA-Z0-9]+)*"), ("'Welcome'", "uppercase alias"),
                 id="uppercase-allowed"),
    pytest.param(is_safe(pattern=r"[a-z0-9]+(?:-[a-z0-9]+)*", flags=re.ASCII | re.IGNORECASE), ("'Welcome'",),
                 id="ignorecase"),
    pytest.param(lambda i: isinstance(i, str) and ".." not in i and "/" not in i, ("accepted", "Allow, do not block"),
                 id="blocklist"),
    pytest.param(lambda i: isinstance(i, str) and bool(re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", i)) and len(i) < 64,
                 ("refused 'xxxx", "Do not refuse more"), id="off-by-one-length"),
    pytest.param(lambda i: "yes" if is_safe()(i) else "no", ("return True or False",), id="returns-text"),
    pytest.param(lambda i: isinstance(i, str) and is_safe()(unquote(i)), ("'welc%6Fme'", "exactly as it arrives"),
                 id="decodes-first"),
    pytest.param(is_safe(pattern=r"[a-z0-9_]+(?:-[a-z0-9_]+)*"), ("'spindle_density'", "underscore"),
                 id="underscore-allowed"),
    pytest.param(lambda i: isinstance(i, str) and i == i.lower() and is_safe(flags=re.IGNORECASE)(i),
                 ("dotless", "re.IGNORECASE"), id="ignorecase-without-ascii"),
    pytest.param(is_safe(pattern=r"[a-z0-9]+(?:[-/][a-z0-9]+)*"), ("'notes/welcome'", "a slash between two words"),
                 id="slash-between-words"),
    pytest.param(is_safe(pattern=r"[a-z0-9]+(?:[- ][a-z0-9]+)*"), ("'spindle density'", "a slash or a space"),
                 id="space-between-words"),
    pytest.param(is_safe(pattern=r"[a-z0-9][a-zA-Z0-9]*(?:-[a-zA-Z0-9]+)*"), ("'spindle-Density'", "not only first"),
                 id="uppercase-after-the-first-letter"),
    # Written with str methods, not a regex: the hint names what they do, not re's flags or $.
    pytest.param(lambda i: isinstance(i, str) and 0 < len(i) <= 64 and all(
        w.isalnum() and w == w.lower() for w in i.split("-")), ("'wеlcome'", "str.isalnum()"),
                 id="str-methods-without-isascii"),
    pytest.param(lambda i: isinstance(i, str) and is_safe()(i.strip()), ("'welcome\\n'", "strip()"),
                 id="stripped-first"),
    pytest.param(lambda i: isinstance(i, str) and len(i) <= 64 and re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", i),
                 ("returned None;", "a Match or None"), id="returns-a-match-object"),
]


@pytest.mark.parametrize("work", ID_RIGHT)
def test_note_id_validator_right_answers_pass(verdict, lab, work):
    assert verdict(note_ids.check_note_id_validator, work, lab).startswith("✓ Your validator refused all")


@pytest.mark.parametrize("work, phrases", ID_WRONG)
def test_note_id_validator_wrong_answers_name_their_mistake(verdict, lab, work, phrases):
    out = verdict(note_ids.check_note_id_validator, work, lab)
    assert fails_naming(out, phrases), out


# --- 14 task 2 · the Origin and Host guard ------------------------------------------------------------------

def guard(*, host_check=True, origin_check=True, host_codes=(421, 403), refuse_as=int, prefix=False):
    def work(host, origin, port):
        local = {f"127.0.0.1:{port}", f"localhost:{port}"}
        host_ok = host.startswith(("127.0.0.1", "localhost")) if prefix else host in local
        if host_check and not host_ok:
            return refuse_as(host_codes[0])
        origins = {f"http://{name}" for name in local}
        origin_ok = origin.startswith(("http://127.0.0.1", "http://localhost")) if prefix and origin else (
            origin is None or origin in origins)
        if origin_check and not origin_ok:
            return refuse_as(host_codes[1])
        return None
    return work


GUARD_RIGHT = [
    pytest.param(guard(), id="solution"),
    pytest.param(lambda host, origin, port: (421 if host.rsplit(":", 1) not in (["127.0.0.1", str(port)],
                                                                              ["localhost", str(port)])
                                             else 403 if origin and origin != f"http://{host}" else None),
                 id="origin-compared-with-host"),
]
GUARD_WRONG = [
    pytest.param(guard(refuse_as=str), ("guard returned '4",), id="status-as-text"),
    pytest.param(guard(host_check=False), ("DNS rebinding", "should answer 421"), id="no-host-check"),
    pytest.param(guard(origin_check=False), ("a page on another site", "should answer 403"), id="no-origin-check"),
    pytest.param(guard(host_codes=(403, 421)), ("answered 421, it should answer 403",), id="codes-swapped"),
    pytest.param(guard(prefix=True), ("a look-alike host name", "prefix test"), id="prefix-tests"),
    pytest.param(lambda host, origin, port: 403 if origin else None, ("a page this endpoint served", "should answer 200"),
                 id="every-origin-refused"),
    pytest.param(lambda host, origin, port: 1 / 0, ("ZeroDivisionError",), id="raises"),
    pytest.param(lambda host, origin, port: 421 if host.rsplit(":", 1)[0] not in ("127.0.0.1", "localhost") else
                 403 if origin is not None and urlsplit(origin).hostname not in ("127.0.0.1", "localhost") else None,
                 ("https at this address", "should answer 403"), id="origin-hostname-only"),
    pytest.param(lambda host, origin, port: 421 if not host.startswith(("127.0.0.1:", "localhost")) else
                 403 if origin and origin not in (f"http://127.0.0.1:{port}", f"http://localhost:{port}") else None,
                 ("Host: localhost.evil.example", "should answer 421"), id="host-prefix-localhost"),
    pytest.param(lambda host, origin, port: 421 if host not in (f"127.0.0.1:{port}", f"localhost:{port}") else
                 403 if origin and not origin.startswith(("http://127.0.0.1", "http://localhost:")) else None,
                 ("Origin: http://127.0.0.1.evil.example", "should answer 403"), id="origin-prefix-127"),
]


@pytest.mark.parametrize("work", GUARD_RIGHT)
def test_origin_guard_right_answers_pass(verdict, http, work):
    assert verdict(security.check_origin_guard, work, http).startswith("✓ Your guard served the 3 local requests")


@pytest.mark.parametrize("work, phrases", GUARD_WRONG)
def test_origin_guard_wrong_answers_name_their_mistake(verdict, http, work, phrases):
    out = verdict(security.check_origin_guard, work, http)
    assert fails_naming(out, phrases), out


# --- 17 · caching by ttlMs and invalidation ---------------------------------------------------------------------

class CachingClient:
    """The solution, with each line that matters behind a switch the subclasses below turn."""

    fresh_while_equal = False
    keyed_by_method = False
    store_without_ttl = False
    store_incomplete = False
    ttl_in_seconds = False
    stale_lists = {"notifications/tools/list_changed": ["tools/list"],
                   "notifications/prompts/list_changed": ["prompts/list"],
                   "notifications/resources/list_changed": ["resources/list", "resources/templates/list"]}
    drop_updated = True
    drop_everything = False

    def __init__(self, send, clock):
        self.send, self.clock, self.entries = send, clock, {}

    def key(self, method, params):
        return method if self.keyed_by_method else (method, json.dumps(params or {}, sort_keys=True))

    def request(self, method, params=None):
        entry = self.entries.get(self.key(method, params))
        if entry is not None:
            age = self.clock() - entry["received"]
            limit = entry["ttl"] * (1000 if self.ttl_in_seconds else 1)
            if age < limit or (self.fresh_while_equal and age == limit):
                return entry["reply"]
        reply = self.send(method, params)
        result = reply.get("result") or {}
        ttl = result.get("ttlMs", 300_000 if self.store_without_ttl else 0)
        if (result.get("resultType") == "complete" or self.store_incomplete) and ttl > 0:
            self.entries[self.key(method, params)] = {"reply": reply, "received": self.clock(), "ttl": ttl}
        return reply

    def notice(self, notification):
        if self.drop_everything:
            self.entries.clear()
            return
        stale = self.stale_lists.get(notification.get("method"), [])
        for key in list(self.entries):
            if (key if self.keyed_by_method else key[0]) in stale:
                del self.entries[key]
        if self.drop_updated and notification.get("method") == "notifications/resources/updated":
            uri = (notification.get("params") or {}).get("uri")
            self.entries.pop(("resources/read", json.dumps({"uri": uri}, sort_keys=True)), None)


def variant(name, **switches):
    return type(name, (CachingClient,), switches)


class WrittenDifferently:
    """Another right client: the expiry time is stored, and a notification maps to key prefixes."""

    def __init__(self, send, clock):
        self.send, self.clock, self.store = send, clock, {}

    def request(self, method, params=None):
        key = json.dumps([method, params or {}], sort_keys=True)
        hit = self.store.get(key)
        if hit and self.clock() < hit[0]:
            return hit[1]
        reply = self.send(method, params)
        result = reply.get("result", {})
        if result.get("resultType") == "complete" and result.get("ttlMs"):
            self.store[key] = (self.clock() + result["ttlMs"], reply)
        return reply

    def notice(self, notification):
        method, params = notification.get("method", ""), notification.get("params") or {}
        kinds = {"tools": ["tools/list"], "prompts": ["prompts/list"],
                 "resources": ["resources/list", "resources/templates/list"]}
        if method.endswith("/list_changed"):
            for listed in kinds.get(method.split("/")[1], []):
                for key in [k for k in self.store if json.loads(k)[0] == listed]:
                    del self.store[key]
        if method == "notifications/resources/updated":
            self.store.pop(json.dumps(["resources/read", {"uri": params.get("uri")}], sort_keys=True), None)


RULES_WRONG = [
    pytest.param(variant("FreshAtExactTtl", fresh_while_equal=True), ("at exactly 5 minutes", "answered from its store"),
                 id="fresh-at-exactly-ttl"),
    pytest.param(variant("KeyedByMethod", keyed_by_method=True),
                 ("your client answered with the reply for 'notes://index'",), id="keyed-by-method"),
    pytest.param(variant("CachesWithoutTtl", store_without_ttl=True), ("carries no ttlMs",), id="caches-without-ttl"),
    pytest.param(variant("TtlInSeconds", ttl_in_seconds=True), ("answered from its store",), id="ttl-read-as-seconds"),
]
INVALIDATION_WRONG = [
    pytest.param(variant("Deaf", stale_lists={}, drop_updated=False), ("without the new note", "params.uri"),
                 id="ignores-notifications"),
    pytest.param(variant("DropsEverything", drop_everything=True), ("sent tools/list again although no tool changed",),
                 id="drops-everything"),
    pytest.param(variant("ListsOnly", drop_updated=False), ("notifications/resources/updated",),
                 id="updated-ignored"),
    pytest.param(variant("UpdatedOnly", stale_lists={}), ("answered resources/list from its store",
                                                      "list_changed"), id="list-changed-ignored"),
]


@pytest.mark.parametrize("client", [pytest.param(CachingClient, id="solution"),
                                    pytest.param(WrittenDifferently, id="expiry-stored")])
def test_cache_rules_right_answers_pass(verdict, lab, client):
    assert verdict(checks.check_cache_rules, client, lab).startswith("✓ Your cache answered tools/list")


@pytest.mark.parametrize("client, phrases", RULES_WRONG)
def test_cache_rules_wrong_answers_name_their_mistake(verdict, lab, client, phrases):
    out = verdict(checks.check_cache_rules, client, lab)
    assert fails_naming(out, phrases), out


def test_cache_invalidation_right_answer_passes(verdict):
    assert verdict(checks.check_cache_invalidation, WrittenDifferently).startswith("✓ After a note was created")


@pytest.mark.parametrize("client, phrases", INVALIDATION_WRONG)
def test_cache_invalidation_wrong_answers_name_their_mistake(verdict, client, phrases):
    out = verdict(checks.check_cache_invalidation, client)
    assert fails_naming(out, phrases), out
