"""The caching client honors ttlMs, cacheScope and invalidating notifications."""

import json

import pytest

from mcpwire import Reply, StdioWire, frames
from mcpwire.cache import CachingClient, FakeClock, cache_key, hints

INDEX = {"uri": "notes://index"}


class ScriptedWire:
    """Answers every request with a result built from `results[method]`; counts what was sent."""

    def __init__(self, results):
        self.results = results
        self.sent = []
        self.notifications = []
        self._next_id = 1

    def request(self, method, params=None, **_):
        self.sent.append((method, params))
        frame_id, self._next_id = self._next_id, self._next_id + 1
        answer = self.results[method]
        message = {"jsonrpc": "2.0", "id": frame_id, **({"result": answer} if "code" not in answer else {"error": answer})}
        reply = Reply.from_bytes(json.dumps(message).encode())
        reply.method = method
        return reply


def listing(ttl, scope="public", **extra):
    return {"items": [], "resultType": "complete", "ttlMs": ttl, "cacheScope": scope, **extra}


def test_an_entry_is_fresh_until_received_plus_ttl():
    clock = FakeClock()
    wire = ScriptedWire({"tools/list": listing(300_000)})
    client = CachingClient(wire, clock=clock)
    client.request("tools/list")
    clock.advance(299_999)
    client.request("tools/list")
    clock.advance(1)
    client.request("tools/list")
    assert [e.outcome for e in client.log] == ["stored", "hit", "stored"]
    assert len(wire.sent) == 2


@pytest.mark.parametrize("result", [
    listing(0), listing(-5), {"items": [], "resultType": "complete"}, listing(1000, resultType="input_required"),
    {"code": -32602, "message": "Invalid params"},
])
def test_results_without_a_positive_ttl_or_not_complete_are_never_reused(result):
    wire = ScriptedWire({"resources/read": result})
    client = CachingClient(wire, clock=FakeClock())
    client.request("resources/read", INDEX)
    client.request("resources/read", INDEX)
    assert len(wire.sent) == 2 and {e.outcome for e in client.log} == {"sent"}


def test_a_missing_or_unknown_scope_counts_as_private():
    reply = Reply.from_bytes(json.dumps({"jsonrpc": "2.0", "id": 1, "result": listing(10, scope="shared")}).encode())
    assert hints(reply) == (10, "private")


def test_retries_carrying_request_state_are_not_cached():
    wire = ScriptedWire({"resources/read": listing(1000)})
    client = CachingClient(wire, clock=FakeClock())
    for _ in range(2):
        client.request("resources/read", {**INDEX, "requestState": "v1.abc"})
    assert len(wire.sent) == 2


def test_the_key_ignores_meta_but_not_the_params_that_shape_the_result():
    assert cache_key("tools/list", {"_meta": {"progressToken": 1}}) == cache_key("tools/list")
    assert cache_key("tools/list", {"cursor": "2"}) != cache_key("tools/list")
    assert cache_key("resources/read", INDEX) != cache_key("resources/read", {"uri": "notes://spindle-density"})


def test_the_declared_capabilities_are_part_of_the_key():
    apps = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}
    declaring = {"_meta": {"io.modelcontextprotocol/clientCapabilities": apps}}
    assert cache_key("tools/list", declaring) != cache_key("tools/list")
    assert cache_key("tools/list", {"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}) == cache_key("tools/list")
    other_client = {"_meta": {**declaring["_meta"], "io.modelcontextprotocol/clientInfo": {"name": "x", "version": "1"}}}
    assert cache_key("tools/list", other_client) == cache_key("tools/list", declaring)


def test_a_client_declaring_an_extension_is_not_served_the_list_fetched_without_it():
    apps = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/ui": {}}}}
    wire = ScriptedWire({"tools/list": listing(60_000, "public")})
    plain = CachingClient(wire, clock=FakeClock())
    host = CachingClient(wire, clock=plain.clock, store=plain.store)
    plain.request("tools/list")
    host.request("tools/list", meta=apps)
    host.request("tools/list", {"_meta": apps})
    assert [e.outcome for e in host.log] == ["stored", "hit"]


def test_public_entries_are_shared_across_auth_contexts_private_ones_are_not():
    clock, store = FakeClock(), {}
    wire = ScriptedWire({"tools/list": listing(60_000, "public"), "resources/list": listing(60_000, "private")})
    ana = CachingClient(wire, clock=clock, auth_context="ana", store=store)
    ben = CachingClient(wire, clock=clock, auth_context="ben", store=store)
    for client in (ana, ben, ana):
        client.request("tools/list")
        client.request("resources/list")
    assert [e.outcome for e in ana.log] == ["stored", "stored", "hit", "hit"]
    assert [e.outcome for e in ben.log] == ["hit", "stored"]


def test_list_changed_drops_the_lists_it_names_and_updated_drops_one_resource():
    clock = FakeClock()
    wire = ScriptedWire({m: listing(60_000) for m in ("tools/list", "prompts/list", "resources/list", "resources/read")})
    client = CachingClient(wire, clock=clock)
    for method, params in [("tools/list", None), ("prompts/list", None), ("resources/list", None),
                           ("resources/read", INDEX), ("resources/read", {"uri": "notes://other"})]:
        client.request(method, params)
    wire.notifications.append({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    wire.notifications.append({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": INDEX})
    before = len(wire.sent)
    for method, params in [("tools/list", None), ("prompts/list", None), ("resources/list", None),
                           ("resources/read", INDEX), ("resources/read", {"uri": "notes://other"})]:
        client.request(method, params)
    assert wire.sent[before:] == [("tools/list", None), ("resources/read", INDEX)]


def test_a_notification_whose_method_is_not_a_string_drops_nothing():
    wire = ScriptedWire({"tools/list": listing(60_000)})
    client = CachingClient(wire, clock=FakeClock())
    client.request("tools/list")
    wire.notifications.append({"jsonrpc": "2.0", "method": ["notifications/tools/list_changed"]})
    client.request("tools/list")
    assert len(wire.sent) == 1 and [e.outcome for e in client.log] == ["stored", "hit"]


def test_the_client_that_ignores_hints_sends_everything():
    wire = ScriptedWire({"tools/list": listing(300_000)})
    client = CachingClient(wire, clock=FakeClock(), honor_hints=False)
    for _ in range(3):
        client.request("tools/list")
    assert len(wire.sent) == 3 and client.summary()["round_trips"] == 3


def test_with_the_lab_server_hints_and_a_real_invalidation():
    clock = FakeClock()
    with StdioWire.labserver() as wire:
        wire.write(frames.request("subscriptions/listen", {"notifications": {
            "resourcesListChanged": True, "resourceSubscriptions": ["notes://index"]}}, id="listen"))
        assert wire.read(30.0).message["method"] == "notifications/subscriptions/acknowledged"
        client = CachingClient(wire, clock=clock)
        first = client.request("tools/list")
        clock.advance(299_999)
        assert client.request("tools/list") is first
        client.request("resources/read", INDEX)
        wire.request("tools/call", {"name": "create_note", "arguments": {"title": "Cache test", "body": "x"}})
        while not any(n.get("method") == "notifications/resources/updated" for n in wire.notifications):
            assert wire.read(30.0) is not None, "the update notification never came"
        fresh_index = client.request("resources/read", INDEX)
        assert "cache-test" in fresh_index.result["contents"][0]["text"]
        clock.advance(1)
        client.request("tools/list")
    assert [e.outcome for e in client.log] == ["stored", "hit", "stored", "stored", "stored"]
    sent = [e for e in client.log if e.round_trip]
    assert all(e.bytes > 0 and e.tokens > 0 for e in sent)
    assert client.log[0].scope == "public" and client.log[2].scope == "private"
