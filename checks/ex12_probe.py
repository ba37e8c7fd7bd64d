"""Check for exercise 12: read the era of an HTTP server from its answer to a 2026-07-28 request."""

from functools import lru_cache

from mcpwire import frames
from mcpwire.streamable_http import HttpWire
from .attempt import attempt, missing
from .replay import replaying
from .verdict import failed, not_done, passed, short

ERAS = ("modern", "legacy")


@lru_cache(maxsize=1)
def probe_replies():
    """(what was sent and to whom, the Reply, the era it proves), each really answered by a lab server or recorded."""
    future = {frames.PROTOCOL_VERSION_KEY: "2027-01-01"}
    url_elicitation = {frames.CLIENT_CAPABILITIES_KEY: {"elicitation": {"url": {}}}}
    publish = {"name": "publish_note", "arguments": {"note_id": "welcome"}}
    with (HttpWire.labserver() as lab, HttpWire.labserver("--legacy-only") as old,
          HttpWire.labserver("--legacy-only", "--stateless") as older,
          replaying("typescript-sdk-1.24.3-legacy-discover.http") as typescript,
          replaying("typescript-sdk-1.24.3-legacy-unknown-session.http") as typescript_session):
        modern, legacy, sessionless = HttpWire(lab.url), HttpWire(old.url), HttpWire(older.url)
        elsewhere = HttpWire(old.url.removesuffix("/mcp") + "/sse")
        return (
            ("server/discover to the dual-era lab", modern.send(frames.request("server/discover", id=1)), "modern"),
            ("server/discover naming version 2027-01-01 to the dual-era lab",
             modern.send(frames.request("server/discover", id=2, meta=future)), "modern"),
            ("server/discover with a wrong Mcp-Method header to the dual-era lab",
             modern.send(frames.request("server/discover", id=3), {"Mcp-Method": "tools/list"}), "modern"),
            ("ping (removed in 2026-07-28) to the dual-era lab", modern.send(frames.request("ping", id=4)), "modern"),
            ("server/discover to the legacy-only server", legacy.send(frames.request("server/discover", id=5)),
             "legacy"),
            ("server/discover to a URL where a server has no MCP endpoint",
             elsewhere.send(frames.request("server/discover", id=6)), "legacy"),
            ("server/discover to a legacy server without sessions that ignores the version header",
             sessionless.send(frames.request("server/discover", id=7)), "legacy"),
            ("ping to a legacy server without sessions that ignores the version header",
             sessionless.send(frames.request("ping", id=8)), "legacy"),
            ("server/discover to a legacy server built on the TypeScript SDK 1.24.3 (its recorded answer)",
             HttpWire(typescript).send(frames.request("server/discover", id=9)), "legacy"),
            # The answers below tell apart rules that fit the nine above by chance: -32021 is as modern as
            # -32020, input_required is as modern as complete, a legacy result need not be empty, and a
            # legacy error may come with a 404 or with a code other than the SDKs' -32600 and -32000.
            ("tools/call of publish_note without the url elicitation it needs, to the dual-era lab",
             modern.send(frames.request("tools/call", publish, id=10)), "modern"),
            ("tools/call of publish_note declaring url elicitation, to the dual-era lab",
             modern.send(frames.request("tools/call", publish, id=11, meta=url_elicitation)), "modern"),
            ("tools/list to a legacy server without sessions that ignores the version header",
             sessionless.send(frames.request("tools/list", id=12)), "legacy"),
            ("server/discover with a session id the legacy-only server never gave",
             legacy.send(frames.request("server/discover", id=13), {"Mcp-Session-Id": "no-such-session"}), "legacy"),
            ("server/discover with a session id that the legacy server built on the TypeScript SDK 1.24.3 never gave "
             "(its recorded answer)",
             HttpWire(typescript_session).send(frames.request("server/discover", id=14),
                                               {"Mcp-Session-Id": "no-such-session"}), "legacy"),
        )


def answer_of(reply):
    """The reply as the check quotes it: status, then the JSON-RPC error or result, or the plain body."""
    if reply.error:
        return f"HTTP {reply.status}, error {reply.code} {reply.error.get('message')!r}"
    if reply.ok:
        if "resultType" not in reply.result:
            return f"HTTP {reply.status}, a result without resultType"
        return f"HTTP {reply.status}, a result with resultType {reply.result['resultType']!r}"
    return f"HTTP {reply.status}, a body that is not JSON-RPC: {short(reply.raw.decode('utf-8', 'replace'), 60)}"


def check_era_probe(era_of):
    """era_of(reply) must say "modern" or "legacy" for real answers to a 2026-07-28 request (one of them recorded)."""
    if missing(era_of):
        not_done("define era_of(reply) first.")
        return
    cases = probe_replies()
    for sent, reply, era in cases:
        outcome = attempt(era_of, reply)
        if outcome.not_done:
            not_done("era_of still raises NotImplementedError. Return \"modern\" or \"legacy\".")
            return
        if outcome.error:
            failed(f"era_of raised {outcome.error_text} for the answer to {sent}.",
                   server=answer_of(reply),
                   hint="Not every answer has a JSON-RPC body, and an error has no result: "
                        "reply.code and reply.result are None when there is nothing to read.")
            return
        said = outcome.value
        if said not in ERAS:
            failed(f"era_of returned {short(said)} for the answer to {sent}; return \"modern\" or \"legacy\".")
            return
        if said != era:
            failed(f"era_of said {said!r} for the answer to {sent}; it comes from a {era} server.",
                   server=answer_of(reply), hint=hint_for(reply, said))
            return
    passed(f"era_of read all {len(cases)} answers right: a result with resultType or a modern error code "
           "(-32020, -32021, -32022, or -32601 with a 404) means stay modern; anything else (a result without "
           "resultType, -32601 with a 200, any other 400 or 404) means fall back to initialize.")


def hint_for(reply, said):
    if said == "legacy" and reply.status == 400:
        return ("A 400 alone does not make a server legacy: a 2026-07-28 server answers 400 too, and its body says "
                "why. Read the JSON-RPC error's code before you fall back.")
    if said == "legacy" and reply.status == 404:
        return ("A 2026-07-28 server answers an unknown method with 404 and a JSON-RPC -32601 body; a server with "
                "no MCP endpoint there answers 404 with no JSON-RPC at all.")
    if said == "legacy":
        return "A result that carries resultType comes from a 2026-07-28 server."
    if reply.ok:
        return ("Every 2026-07-28 result carries resultType; a result without it comes from a server of an "
                "earlier revision that served your request under its own rules. (mcpwire's reply.result_type "
                "reads a missing resultType as 'complete', so it cannot tell: look for the key in reply.result.)")
    if reply.code == -32601:
        return (f"-32601 proves a 2026-07-28 server only with a 404, the status such a server must send for a "
                f"method it does not have; this one came with status {reply.status}.")
    if reply.code is not None:
        return (f"{reply.code} is a JSON-RPC error, but not one of the codes only a 2026-07-28 server sends: "
                "an error body alone does not make a server modern.")
    return "With no JSON-RPC body at all there is nothing modern to recognise: fall back."
