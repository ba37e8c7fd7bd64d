"""A client-side cache that honors the server's `ttlMs` and `cacheScope` hints.

The key is the method plus the params that shape the result: everything but `_meta`, except the
capabilities the request declares there (a server may answer by them: an MCP Apps server lists its UI
tools only to a client that declares the extension).
An entry is fresh while `now < received + ttlMs`. A `public` entry may be served to
any authorization context sharing the store; a `private` one only to the context that
fetched it. A list_changed or resources/updated notification drops what it makes stale.
Time comes from a clock you pass in, so a simulation can use `FakeClock`.
"""

import json
import time
from dataclasses import dataclass

from .costs import count_tokens
from .reply import Reply

STALE_AFTER = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}
RESOURCE_UPDATED = "notifications/resources/updated"  # stales resources/read of params.uri
RETRY_FIELDS = ("inputResponses", "requestState")  # results of MRTR retries must not be cached
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


class FakeClock:
    """A clock for simulations, in milliseconds: it moves only when you advance it."""

    def __init__(self, start_ms=0):
        self.now_ms = start_ms

    def __call__(self):
        return self.now_ms

    def advance(self, ms):
        self.now_ms += ms
        return self.now_ms


def monotonic_ms():
    return time.monotonic() * 1000


def cache_key(method, params=None):
    """(method, the params that shape the result as canonical JSON).

    Of `_meta` only the declared capabilities count: a progress token or the client's name changes nothing in
    the answer, but what the client says it supports can.
    """
    params = params or {}
    shaping = {name: value for name, value in params.items() if name != "_meta"}
    declared = (params.get("_meta") or {}).get(CAPABILITIES)
    if isinstance(declared, dict) and declared:
        shaping[CAPABILITIES] = declared
    return method, json.dumps(shaping, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass
class Entry:
    reply: Reply
    received_ms: float
    ttl_ms: int
    scope: str
    bytes: int  # what the round trip that filled it cost on the wire
    tokens: int

    def fresh(self, now_ms):
        return now_ms < self.received_ms + self.ttl_ms


@dataclass
class CacheEvent:
    """One request a host made: answered from the cache (`hit`) or sent (`stored` or `sent`, not cacheable)."""

    at_ms: float
    method: str
    outcome: str
    bytes: int  # bytes of the round trip: what was sent and received, or what a hit avoided
    tokens: int
    scope: str | None = None

    @property
    def round_trip(self):
        return self.outcome != "hit"


def hints(reply):
    """(ttlMs, cacheScope) of a reply the spec lets a client cache, else None.

    Only complete results qualify; a missing or negative ttlMs counts as 0 (stale at once),
    a missing or unknown scope as private (the safe reading).
    """
    result = reply.result
    if not isinstance(result, dict) or reply.result_type != "complete":
        return None
    ttl = result.get("ttlMs")
    ttl = ttl if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl > 0 else 0
    scope = result.get("cacheScope") if result.get("cacheScope") in ("public", "private") else "private"
    return (ttl, scope) if ttl > 0 else None


def round_trip_cost(wire, reply):
    """(bytes, tokens) of the exchange that carried `reply`, read from the wire's transcript."""
    for exchange in reversed(list(getattr(wire, "transcript", ()))):
        if exchange.up and exchange.id == reply.id and exchange.method == reply.method:
            return exchange.bytes_up + exchange.bytes_down, exchange.tokens_up + exchange.tokens_down
    return len(reply.payload), count_tokens(reply.text)


class CachingClient:
    """Sends requests through `wire` unless a fresh cached answer may be reused.

    `store` is a dict you may share between clients (a gateway serving several users);
    `auth_context` names who this client acts for. `honor_hints=False` gives the
    client that ignores the hints and sends every request, for comparison.
    Every request is recorded in `log`.
    """

    def __init__(self, wire, *, clock=monotonic_ms, auth_context="you", store=None, honor_hints=True):
        self.wire = wire
        self.clock = clock
        self.auth_context = auth_context
        self.store = {} if store is None else store
        self.honor_hints = honor_hints
        self.log = []
        self._notifications_seen = 0

    def request(self, method, params=None, **frame_kwargs):
        """The reply to `method`: from the cache while fresh, else from the server."""
        self.catch_up()
        meta = frame_kwargs.get("meta")  # capabilities given as the wire's meta= shape the answer as well
        key = cache_key(method, {**(params or {}), "_meta": {**((params or {}).get("_meta") or {}),
                                                            **(meta if isinstance(meta, dict) else {})}})
        entry = self.lookup(key) if self.honor_hints else None
        if entry is not None:
            self.log.append(CacheEvent(self.clock(), method, "hit", entry.bytes, entry.tokens, entry.scope))
            return entry.reply
        reply = self.wire.request(method, params, **frame_kwargs)
        received = self.clock()
        cost = round_trip_cost(self.wire, reply)
        given = hints(reply)
        if self.honor_hints and given is not None and not any(f in (params or {}) for f in RETRY_FIELDS):
            ttl, scope = given
            self._forget(key)
            self.store[(None if scope == "public" else self.auth_context, key)] = Entry(reply, received, ttl, scope, *cost)
            self.log.append(CacheEvent(received, method, "stored", *cost, scope))
        else:
            self.log.append(CacheEvent(received, method, "sent", *cost, given[1] if given else None))
        return reply

    def lookup(self, key):
        """The fresh entry this client may use for `key`: its own private one, else a public one."""
        now = self.clock()
        for partition in (self.auth_context, None):
            entry = self.store.get((partition, key))
            if entry is not None and entry.fresh(now):
                return entry
        return None

    def notice(self, message):
        """Drop the entries a notification makes stale; returns how many were dropped."""
        if isinstance(message, Reply):
            message = message.message
        if not isinstance(message, dict):
            return 0
        method = message.get("method")
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if not isinstance(method, str):  # a server's odd message (a list as method) names nothing stale
            return 0
        if method in STALE_AFTER:
            stale = [k for k in self.store if k[1][0] in STALE_AFTER[method]]
        elif method == RESOURCE_UPDATED:
            stale = [k for k in self.store if k[1] == cache_key("resources/read", {"uri": params.get("uri")})]
        else:
            return 0
        for k in stale:
            del self.store[k]
        return len(stale)

    def catch_up(self):
        """Apply the notifications the wire has received since we last looked."""
        seen = getattr(self.wire, "notifications", [])
        for message in seen[self._notifications_seen:]:
            self.notice(message)
        self._notifications_seen = len(seen)

    def _forget(self, key):
        for partition in (self.auth_context, None):
            self.store.pop((partition, key), None)

    def summary(self):
        """Round trips made and avoided; bytes on the wire (both ways, framing included) moved and avoided."""
        hits = [e for e in self.log if not e.round_trip]
        sent = [e for e in self.log if e.round_trip]
        return {"requests": len(self.log), "round_trips": len(sent), "hits": len(hits),
                "wire_bytes": sum(e.bytes for e in sent), "bytes_avoided": sum(e.bytes for e in hits)}
