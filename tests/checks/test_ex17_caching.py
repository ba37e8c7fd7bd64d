"""Exercise 17: a caching client is judged on ttlMs, its keys, what it stores and what notifications drop.

Checks print their verdict; these tests read it the way a learner does.
"""

import copy
import json

import pytest

import checks



def fails_naming(out, phrases):
    return out.startswith("✗") and all(phrase in out for phrase in phrases)

def stub(*args):
    raise NotImplementedError("your code here")


class RightCache:
    def __init__(self, send, clock):
        self.send, self.clock, self.entries = send, clock, {}

    def key(self, method, params):
        return method, json.dumps(params or {}, sort_keys=True)

    def request(self, method, params=None):
        key = self.key(method, params)
        entry = self.entries.get(key)
        if entry is not None and self.clock() < entry["received"] + entry["ttlMs"]:
            return entry["reply"]
        reply = self.send(method, params)
        result = reply.get("result") or {}
        if result.get("ttlMs", 0) > 0:
            self.entries[key] = {"reply": reply, "received": self.clock(), "ttlMs": result["ttlMs"]}
        return reply

    def notice(self, notification):
        stale = {"notifications/tools/list_changed": ["tools/list"],
                 "notifications/prompts/list_changed": ["prompts/list"],
                 "notifications/resources/list_changed": ["resources/list", "resources/templates/list"]}
        for key in [k for k in self.entries if k[0] in stale.get(notification["method"], [])]:
            del self.entries[key]
        if notification["method"] == "notifications/resources/updated":
            self.entries.pop(("resources/read", json.dumps({"uri": notification["params"]["uri"]})), None)


class FreshAtTheLastMillisecond(RightCache):
    def request(self, method, params=None):
        key = self.key(method, params)
        entry = self.entries.get(key)
        if entry is not None and self.clock() <= entry["received"] + entry["ttlMs"]:
            return entry["reply"]
        return super().request(method, params)


class KeyedByMethod(RightCache):
    def key(self, method, params):
        return method


class CachesEveryResult(RightCache):
    def request(self, method, params=None):
        key = self.key(method, params)
        if key not in self.entries:
            reply = self.send(method, params)
            self.entries[key] = {"reply": reply, "received": self.clock(), "ttlMs": 300_000}
        return super().request(method, params)


class KeyedByUri(RightCache):
    """Keys a read by its uri and a list by its method: every page of a list is one entry."""

    def key(self, method, params):
        return method, (params or {}).get("uri")


class ReturnsTheResult(RightCache):
    def request(self, method, params=None):
        return super().request(method, params).get("result")


class ZeroMeansForever(RightCache):
    """Reads ttlMs 0 as "no expiry" instead of "stale at once"."""

    def request(self, method, params=None):
        key = self.key(method, params)
        entry = self.entries.get(key)
        if entry is not None and self.clock() < entry["received"] + entry["ttlMs"]:
            return entry["reply"]
        reply = self.send(method, params)
        result = reply.get("result") or {}
        if "ttlMs" in result:
            self.entries[key] = {"reply": reply, "received": self.clock(), "ttlMs": result["ttlMs"] or float("inf")}
        return reply


class DefaultTtlForLists(RightCache):
    """Gives the cacheable methods a minute of its own when the server sends no ttlMs."""

    CACHEABLE = ("server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list",
                 "resources/read")

    def request(self, method, params=None):
        key = self.key(method, params)
        entry = self.entries.get(key)
        if entry is not None and self.clock() < entry["received"] + entry["ttlMs"]:
            return entry["reply"]
        reply = self.send(method, params)
        if method in self.CACHEABLE and "result" in reply:
            ttl = reply["result"].get("ttlMs", 60_000)
            self.entries[key] = {"reply": reply, "received": self.clock(), "ttlMs": ttl}
        return reply


def drop(cache, stale):
    """What the wrong caches below drop: every entry whose method `stale` says is stale."""
    for key in [key for key in cache.entries if stale(key[0])]:
        del cache.entries[key]


class DropsEveryRead(RightCache):
    def notice(self, notification):
        if notification["method"] == "notifications/resources/updated":
            drop(self, lambda method: method == "resources/read")
        else:
            super().notice(notification)


class DropsEveryResourceOnListChanged(RightCache):
    def notice(self, notification):
        if notification["method"] == "notifications/resources/list_changed":
            drop(self, lambda method: method.startswith("resources/"))
        else:
            super().notice(notification)


class OnlyResourceNotifications(RightCache):
    def notice(self, notification):
        if notification["method"].startswith("notifications/resources/"):
            super().notice(notification)


class AnyListChangedDropsEveryList(RightCache):
    def notice(self, notification):
        if notification["method"].endswith("/list_changed"):
            for key in [k for k in self.entries if k[0].endswith("/list")]:
                del self.entries[key]
        else:
            super().notice(notification)


class DeafToNotifications(RightCache):
    def notice(self, notification):
        pass


class ForgetsEverything(RightCache):
    def notice(self, notification):
        self.entries.clear()


class ExpiresAtTtl(RightCache):
    """Stores the moment an entry expires as its ttlMs alone, as if every reply arrived at 0."""

    def request(self, method, params=None):
        key = self.key(method, params)
        entry = self.entries.get(key)
        if entry is not None and self.clock() < entry["expires"]:
            return entry["reply"]
        reply = self.send(method, params)
        result = reply.get("result") or {}
        if result.get("ttlMs", 0) > 0:
            self.entries[key] = {"reply": reply, "expires": result["ttlMs"]}
        return reply


class ReceivedAtZero(RightCache):
    def request(self, method, params=None):
        key = self.key(method, params)
        entry = self.entries.get(key)
        if entry is not None and self.clock() < entry["received"] + entry["ttlMs"]:
            return entry["reply"]
        reply = self.send(method, params)
        result = reply.get("result") or {}
        if result.get("ttlMs", 0) > 0:
            self.entries[key] = {"reply": reply, "received": 0, "ttlMs": result["ttlMs"]}
        return reply


class StoresACopy(RightCache):
    """Right, written differently: stores and returns copies of the reply."""

    def request(self, method, params=None):
        return copy.deepcopy(super().request(method, params))


class KeyedByItems(RightCache):
    def key(self, method, params):
        return method, frozenset((params or {}).items())


class TemplatesKeptOnListChanged(RightCache):
    def notice(self, notification):
        method = notification["method"]
        if method.endswith("/list_changed"):
            listed = method[len("notifications/"):].replace("list_changed", "list")
            drop(self, lambda method: method == listed)
        else:
            super().notice(notification)


class ListsDroppedOnUpdated(RightCache):
    """Ignores resources/list_changed, but drops the resource lists whenever a resource is updated."""

    def notice(self, notification):
        if notification["method"] == "notifications/resources/list_changed":
            return
        if notification["method"] == "notifications/resources/updated":
            drop(self, lambda method: method in ("resources/list", "resources/templates/list"))
        super().notice(notification)


@pytest.mark.parametrize("work, phrases", [
    (ExpiresAtTtl, ("at 9 minutes", "received at 5 minutes", "sent the request again", "clock() time you received it")),
    (ReceivedAtZero, ("at 9 minutes", "sent the request again")),
    (KeyedByItems, ("raised TypeError", "unhashable", "a dict inside params")),
], ids=lambda v: getattr(v, "__name__", ""))
def test_cache_rules_wrong(verdict, lab, work, phrases):
    out = verdict(checks.check_cache_rules, work, lab)
    assert out.startswith("✗") and all(phrase in out for phrase in phrases), out


def test_cache_rules_right_with_copies(verdict, lab):
    assert verdict(checks.check_cache_rules, StoresACopy, lab).startswith("✓ Your cache answered tools/list")


def test_cache_rules_right(verdict, lab):
    assert verdict(checks.check_cache_rules, RightCache, lab).startswith("✓ Your cache answered tools/list")


def test_cache_stale_at_exactly_ttl(verdict, lab):
    out = verdict(checks.check_cache_rules, FreshAtTheLastMillisecond, lab)
    assert "at exactly 5 minutes" in out and "answered from its store" in out


def test_cache_keyed_by_method_only(verdict, lab):
    out = verdict(checks.check_cache_rules, KeyedByMethod, lab)
    assert "notes://welcome, your client answered with the reply for 'notes://index'" in out


def test_cache_storing_what_has_no_ttl(verdict, lab):
    out = verdict(checks.check_cache_rules, CachesEveryResult, lab)
    assert "The second tools/call" in out and "carries no ttlMs" in out


def test_cache_serving_one_page_for_every_cursor(verdict, lab):
    out = verdict(checks.check_cache_rules, KeyedByUri, lab)
    assert "second page of resources/list" in out and "each page is an entry of its own" in out


def test_cache_returning_the_result_not_the_reply(verdict, lab):
    out = verdict(checks.check_cache_rules, ReturnsTheResult, lab)
    assert "not the reply send() gave it" in out and out.startswith("✗")


def test_cache_keeping_a_zero_ttl_forever(verdict, lab):
    out = verdict(checks.check_cache_rules, ZeroMeansForever, lab)
    assert "with ttlMs 0" in out and "stale at once" in out


def test_cache_giving_a_missing_ttl_a_default(verdict, lab):
    out = verdict(checks.check_cache_rules, DefaultTtlForLists, lab)
    assert "without a ttlMs" in out and "counts as 0" in out


@pytest.mark.parametrize("work, phrases", [
    (DropsEveryRead, ("sent resources/read of notes://welcome again although the server named only notes://index",
                     "the one uri it names")),
    (DropsEveryResourceOnListChanged, ("sent resources/read of notes://welcome again",)),
    (OnlyResourceNotifications, ("Given notifications/tools/list_changed", "still answered tools/list")),
    (AnyListChangedDropsEveryList, ("sent tools/list again although no tool changed",)),
    (TemplatesKeptOnListChanged, ("answered resources/templates/list from its store", "template list")),
    (ListsDroppedOnUpdated, ("Given notifications/resources/list_changed", "still answered resources/list")),
], ids=lambda v: getattr(v, "__name__", ""))
def test_cache_invalidation_dropping_the_wrong_entries(verdict, work, phrases):
    out = verdict(checks.check_cache_invalidation, work)
    assert out.startswith("✗") and all(phrase in out for phrase in phrases), out


def test_cache_invalidation_right(verdict):
    out = verdict(checks.check_cache_invalidation, RightCache)
    assert out.startswith("✓ After a note was created") and "notifications/resources/updated" in out
    assert "tools/list_changed, prompts/list_changed and resources/list_changed each dropped their own lists" in out


def test_cache_invalidation_ignored(verdict):
    out = verdict(checks.check_cache_invalidation, DeafToNotifications)
    assert "without the new note" in out and "params.uri" in out


def test_cache_invalidation_dropping_everything(verdict):
    out = verdict(checks.check_cache_invalidation, ForgetsEverything)
    assert "sent tools/list again although no tool changed" in out


def test_measure_cache_counts_round_trips_and_bytes(verdict, lab):
    out = verdict(checks.measure_cache, RightCache, lab)
    assert "30 turns, 20 seconds apart" in out and "saved: 119 round trips" in out


class StubCache:
    def __init__(self, send, clock):
        pass

    request = notice = stub


# --- stubs: every check explains instead of raising ---------------------------------------------

# (check, the unfinished work, the shared server it may reuse)
UNFINISHED = [
    (checks.check_cache_rules, StubCache, "lab"),
    (checks.check_cache_invalidation, StubCache, None),
    (checks.measure_cache, StubCache, "lab"),
]


@pytest.mark.parametrize("check, work, server", UNFINISHED, ids=lambda v: getattr(v, "__name__", ""))
def test_an_unfinished_task_is_not_done_yet(verdict, request, check, work, server):
    shared = (request.getfixturevalue(server),) if server else ()
    assert verdict(check, work, *shared).startswith("not done yet: ")


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
