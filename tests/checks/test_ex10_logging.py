"""Exercise 10, Task 3: opting a call into logs; a right frame passes, the usual misplacements are named."""

import checks
from mcpwire import frames

LOG_LEVEL = "io.modelcontextprotocol/logLevel"


def stub(level):
    raise NotImplementedError("your code here")


def log_request(level):
    return frames.request("tools/call", {"name": "check_notes", "arguments": {}}, meta={LOG_LEVEL: level})


def by_hand(level):
    """The same frame typed out in full, with its own id."""
    return {"jsonrpc": "2.0", "id": "mine", "method": "tools/call", "params": {
        "name": "check_notes", "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "me", "version": "1"},
                  "io.modelcontextprotocol/clientCapabilities": {},
                  LOG_LEVEL: level}}}


def test_right_frame_passes(verdict, lab):
    assert verdict(checks.check_log_opt_in, log_request, lab).startswith("✓ Both calls were opted into logs")


def test_a_frame_typed_by_hand_passes(verdict, lab):
    assert verdict(checks.check_log_opt_in, by_hand, lab).startswith("✓")


def test_stub_is_not_done(verdict, lab):
    assert verdict(checks.check_log_opt_in, stub, lab).startswith("not done yet")


def test_the_level_as_a_tool_argument_is_named(verdict, lab):
    def in_arguments(level):
        return frames.request("tools/call", {"name": "check_notes", "arguments": {"logLevel": level}})
    out = verdict(checks.check_log_opt_in, in_arguments, lab)
    assert out.startswith("✗") and "you put it in arguments" in out and "0 log lines" in out


def test_a_short_key_is_named(verdict, lab):
    def short_key(level):
        return frames.request("tools/call", {"name": "check_notes", "arguments": {}}, meta={"logLevel": level})
    assert "your key is 'logLevel', not the full name" in verdict(checks.check_log_opt_in, short_key, lab)


def test_an_uppercase_level_is_named_with_the_servers_minus_32602(verdict, lab):
    out = verdict(checks.check_log_opt_in, lambda level: log_request(level.upper()), lab)
    assert "asks for the level 'WARNING'" in out and "error -32602" in out and "lowercase" in out


def without_id(level):
    frame = frames.request("tools/call", {"name": "check_notes", "arguments": {}}, meta={LOG_LEVEL: level})
    del frame["id"]
    return frame


def null_id(level):
    return frames.request("tools/call", {"name": "check_notes", "arguments": {}}, id=None, meta={LOG_LEVEL: level})


def test_frame_without_id_is_a_notification(verdict, lab):
    out = verdict(checks.check_log_opt_in, without_id, lab)
    assert out.startswith("✗") and "no id, which makes it a notification" in out, out


def test_frame_with_null_id(verdict, lab):
    out = verdict(checks.check_log_opt_in, null_id, lab)
    assert out.startswith("✗") and "id is null" in out, out
