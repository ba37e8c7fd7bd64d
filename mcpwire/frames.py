"""Build JSON-RPC frames by hand: plain dicts whose key order is the wire order.

A 2026-07-28 request carries its own `_meta` envelope (protocol version, client
capabilities, client info) because there is no handshake. Every part of the
envelope can be changed or removed, so a lesson can build a wrong frame on purpose.
"""

import json

PROTOCOL_VERSION = "2026-07-28"
LEGACY_PROTOCOL_VERSION = "2025-11-25"
VERSION = "0.1.0"

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
CLIENT_INFO = {"name": "mcpwire", "version": VERSION}


class _Marker:
    """A named placeholder (its repr is its name, so help() and reprs stay deterministic)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


OMIT = _Marker("OMIT")
"""Use as a value in `meta={...}` to remove that key from the envelope."""

DEFAULT = _Marker("DEFAULT")
"""`meta=DEFAULT`: the standard envelope."""


def envelope(overrides=None):
    """The `_meta` dict of a 2026-07-28 request.

    `overrides` merges over the defaults; a key whose value is OMIT is removed.
    """
    merged = {
        PROTOCOL_VERSION_KEY: PROTOCOL_VERSION,
        CLIENT_INFO_KEY: dict(CLIENT_INFO),
        CLIENT_CAPABILITIES_KEY: {},
        **(overrides or {}),
    }
    return {key: value for key, value in merged.items() if value is not OMIT}


def _with_meta(given, meta):
    """Params with `_meta` last, as the SDK writes it; None when there is nothing to send."""
    params = dict(given or {})
    written = params.pop("_meta", None)
    if meta is None:
        meta_ = written  # only what was written by hand, untouched
    else:
        meta_ = envelope({**(written or {}), **({} if meta is DEFAULT else meta)})
    if meta_ is not None:
        params["_meta"] = meta_
    return params if params or given is not None else None


def request(method, params=None, *, id=1, meta=DEFAULT):
    """A 2026-07-28 request: `{"jsonrpc", "id", "method", "params": {..., "_meta"}}`.

    `meta={...}` merges over the envelope (e.g. `{"progressToken": 1}`),
    `meta={key: OMIT}` drops one key, `meta=None` leaves `_meta` out entirely.
    A `_meta` written inside `params` is merged the same way.
    """
    frame = {"jsonrpc": "2.0", "id": id, "method": method}
    params = _with_meta(params, meta)
    if params is not None:
        frame["params"] = params
    return frame


def notification(method, params=None, *, meta=None):
    """A notification (no id, never answered). Notifications need no envelope, so `_meta` is only added when given."""
    frame = {"jsonrpc": "2.0", "method": method}
    if meta is not None:
        params = dict(params or {})
        params["_meta"] = {**params.pop("_meta", {}), **meta}
    if params is not None:
        frame["params"] = params
    return frame


def legacy_request(method, params=None, *, id=1):
    """A 2025-11-25 request: no `_meta` envelope (the handshake already said who we are)."""
    frame = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        frame["params"] = params
    return frame


def legacy_initialize(protocol_version=LEGACY_PROTOCOL_VERSION, capabilities=None, client_info=None, *, id=1):
    """The 2025-11-25 `initialize` request that opens a legacy session."""
    return legacy_request(
        "initialize",
        {
            "protocolVersion": protocol_version,
            "capabilities": capabilities if capabilities is not None else {},
            "clientInfo": client_info if client_info is not None else dict(CLIENT_INFO),
        },
        id=id,
    )


def legacy_initialized():
    """The notification that completes the legacy handshake."""
    return {"jsonrpc": "2.0", "method": "notifications/initialized"}


def dumps(frame):
    """The exact text that goes on the wire: compact, UTF-8, no newline (stdio adds one)."""
    return json.dumps(frame, separators=(",", ":"), ensure_ascii=False)


def protocol_version_of(frame):
    """The protocol version a frame names in its `_meta`, or None."""
    params = frame.get("params") if isinstance(frame, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def retry_with_supported_version(frame, error_reply):
    """The same request again, naming a version from a -32022 error's `data.supported`.

    Returns None when the server lists no version we can speak.
    """
    supported = ((error_reply.error or {}).get("data") or {}).get("supported") or []
    for version in supported:
        if version == PROTOCOL_VERSION:
            retried = json.loads(json.dumps(frame))
            retried.setdefault("params", {}).setdefault("_meta", {})[PROTOCOL_VERSION_KEY] = version
            return retried
    return None
