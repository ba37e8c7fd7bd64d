"""The methods a 2026-07-28 client can call, and a ready-to-send template frame for each.

The list comes from `mcp_types` (the same models `mcpwire.validate` uses), so it follows
the pinned SDK; the template arguments point at things the notes lab server really has.
`mcp_types` is imported when the list is first asked for: building its models costs about half a
second of CPU, which every `import mcpwire.widgets` would otherwise pay, composer or not.
"""

import json

from .. import frames

RAW = "raw"

# Template params per method (the `_meta` envelope is added by `frames.request`).
TEMPLATE_PARAMS = {
    "server/discover": {},
    "tools/list": {},
    "tools/call": {"name": "search_notes", "arguments": {"query": "spindles"}},
    "resources/list": {},
    "resources/templates/list": {},
    "resources/read": {"uri": "notes://welcome"},
    "prompts/list": {},
    "prompts/get": {"name": "summarise_topic", "arguments": {"topic": "spindles"}},
    "completion/complete": {"ref": {"type": "ref/prompt", "name": "summarise_topic"},
                            "argument": {"name": "topic", "value": "s"}},
    "subscriptions/listen": {"notifications": {"toolsListChanged": True, "resourceSubscriptions": ["notes://index"]}},
}


def client_methods(version=frames.PROTOCOL_VERSION):
    """Every client request method of `version`: the order of TEMPLATE_PARAMS first, then any the SDK adds."""
    from mcp_types import methods

    known = {method for method, their_version in methods.CLIENT_REQUESTS if their_version == version}
    return [m for m in TEMPLATE_PARAMS if m in known] + sorted(known - TEMPLATE_PARAMS.keys())


def template_frame(method, frame_id=1):
    """A valid request for `method` with the full `_meta` envelope."""
    return frames.request(method, json.loads(json.dumps(TEMPLATE_PARAMS.get(method, {}))), id=frame_id)


def template_text(method, frame_id=1):
    """What the editor shows for `method`: readable JSON, or one compact line for "raw"."""
    if method == RAW:
        return frames.dumps(template_frame("tools/list", frame_id))
    return json.dumps(template_frame(method, frame_id), indent=2, ensure_ascii=False)
