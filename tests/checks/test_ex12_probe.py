"""Exercise 12's era probe check: right answers pass, the usual wrong readings of a 400 fail and say why."""

import checks
from checks.ex12_probe import probe_replies

MODERN_CODES = {-32020, -32021, -32022}


def era_right(reply):
    if reply.ok and "resultType" in reply.result:
        return "modern"
    if reply.code in MODERN_CODES or (reply.status == 404 and reply.code == -32601):
        return "modern"
    return "legacy"


def era_written_differently(reply):
    # The same rule read from the raw message, with the codes named.
    message = reply.message if isinstance(reply.message, dict) else {}
    named = {-32020: "HeaderMismatch", -32021: "MissingRequiredClientCapability", -32022: "UnsupportedProtocolVersion"}
    code = (message.get("error") or {}).get("code")
    if "resultType" in (message.get("result") or {}) or code in named:
        return "modern"
    return "modern" if (reply.status, code) == (404, -32601) else "legacy"


def stub(reply):
    raise NotImplementedError("your code here")


def test_every_probe_reply_is_a_real_answer_of_the_era_it_stands_for():
    cases = probe_replies()
    assert [era for _, _, era in cases].count("legacy") == 8
    assert all(era_right(reply) == era for _, reply, era in cases)


def test_right(verdict):
    assert verdict(checks.check_era_probe, era_right).startswith("✓ era_of read all 14 answers right")


def test_right_written_differently(verdict):
    assert verdict(checks.check_era_probe, era_written_differently).startswith("✓")


def test_every_400_taken_for_legacy(verdict):
    def any_400_is_legacy(reply):
        return "legacy" if reply.status in (400, 404) else "modern"
    out = verdict(checks.check_era_probe, any_400_is_legacy)
    assert out.startswith("✗ era_of said 'legacy' for the answer to server/discover naming version 2027-01-01")
    assert "-32022" in out and "A 400 alone does not make a server legacy" in out


def test_any_json_rpc_error_taken_for_modern(verdict):
    def error_body_is_modern(reply):
        return "modern" if reply.ok or reply.error else "legacy"
    out = verdict(checks.check_era_probe, error_body_is_modern)
    assert out.startswith("✗ era_of said 'modern' for the answer to server/discover to the legacy-only server")
    assert "-32600" in out and "not one of the codes only a 2026-07-28 server sends" in out


def test_only_unsupported_version_counted_as_modern(verdict):
    def only_32022(reply):
        return "modern" if reply.ok or reply.code == -32022 else "legacy"
    out = verdict(checks.check_era_probe, only_32022)
    assert "wrong Mcp-Method header" in out and "-32020" in out


def test_any_result_taken_for_modern(verdict):
    # The result of a legacy server that served the request under its own rules has no resultType.
    def result_is_modern(reply):
        if reply.ok:
            return "modern"
        return "modern" if reply.code in MODERN_CODES or (reply.status, reply.code) == (404, -32601) else "legacy"
    out = verdict(checks.check_era_probe, result_is_modern)
    assert out.startswith("✗ era_of said 'modern' for the answer to ping to a legacy server without sessions")
    assert "a result without it comes from a server of an earlier revision" in out


def test_method_not_found_taken_for_modern_whatever_the_status(verdict):
    def any_32601_is_modern(reply):
        if reply.ok and "resultType" in reply.result:
            return "modern"
        return "modern" if reply.code in MODERN_CODES | {-32601} else "legacy"
    out = verdict(checks.check_era_probe, any_32601_is_modern)
    assert out.startswith("✗ era_of said 'modern' for the answer to server/discover to a legacy server without sessions")
    assert "HTTP 200, error -32601" in out and "only with a 404" in out


def test_status_200_taken_for_modern(verdict):
    def ok_status_is_modern(reply):
        if reply.status == 200:
            return "modern"
        return "modern" if reply.code in MODERN_CODES or (reply.status, reply.code) == (404, -32601) else "legacy"
    out = verdict(checks.check_era_probe, ok_status_is_modern)
    assert out.startswith("✗ era_of said 'modern' for the answer to server/discover to a legacy server without sessions")


def test_a_function_that_crashes_on_a_plain_body(verdict):
    out = verdict(checks.check_era_probe, lambda reply: "modern" if reply.error["code"] in MODERN_CODES else "legacy")
    assert out.startswith("✗ era_of raised TypeError") and "reply.code and reply.result are None" in out


def test_stub(verdict):
    assert verdict(checks.check_era_probe, stub).startswith("not done yet")


def test_a_400_taken_for_modern_unless_its_code_is_the_sdks(verdict):
    # Fits every legacy 400 the Python SDK gives (-32600), not the TypeScript SDK's -32000.
    def only_invalid_request_is_legacy(reply):
        if reply.ok:
            return "modern" if "resultType" in reply.result else "legacy"
        if reply.status == 400:
            return "legacy" if reply.code == -32600 else "modern"
        return "modern" if (reply.status, reply.code) == (404, -32601) else "legacy"
    out = verdict(checks.check_era_probe, only_invalid_request_is_legacy)
    assert out.startswith("✗ era_of said 'modern' for the answer to server/discover to a legacy server built on the "
                          "TypeScript SDK 1.24.3")
    assert "-32000" in out and "not one of the codes only a 2026-07-28 server sends" in out


def with_modern_rule(first):
    """era_of as a learner might write it: `first(reply)` decides when it returns an era, the right rule otherwise."""
    def era_of(reply):
        return first(reply) or era_right(reply)
    return era_of


def test_any_non_empty_result_taken_for_modern(verdict):
    out = verdict(checks.check_era_probe, with_modern_rule(lambda reply: "modern" if reply.ok and reply.result else None))
    assert out.startswith("✗ era_of said 'modern' for the answer to tools/list to a legacy server without sessions")
    assert "a result without it comes from a server of an earlier revision" in out


def test_only_the_sdks_legacy_codes_taken_for_legacy(verdict):
    def blacklist(reply):
        if reply.code is None and not reply.ok:
            return "legacy"
        if reply.status == 200 and not (reply.ok and "resultType" in reply.result):
            return "legacy"
        return "legacy" if reply.code in (-32600, -32000) else "modern"
    out = verdict(checks.check_era_probe, blacklist)
    assert out.startswith("✗ era_of said 'modern' for the answer to server/discover with a session id that the legacy "
                          "server built on the TypeScript SDK 1.24.3 never gave")
    assert "HTTP 404, error -32001" in out and "not one of the codes only a 2026-07-28 server sends" in out


def test_any_json_rpc_404_taken_for_modern(verdict):
    out = verdict(checks.check_era_probe, with_modern_rule(
        lambda reply: "modern" if reply.status == 404 and reply.code is not None else None))
    assert out.startswith("✗ era_of said 'modern' for the answer to server/discover with a session id")
    assert "HTTP 404, error -32600" in out


def test_missing_capability_code_left_out(verdict):
    def two_codes(reply):
        if reply.ok and "resultType" in reply.result:
            return "modern"
        return "modern" if reply.code in (-32020, -32022) or (reply.status, reply.code) == (404, -32601) else "legacy"
    out = verdict(checks.check_era_probe, two_codes)
    assert out.startswith("✗ era_of said 'legacy' for the answer to tools/call of publish_note without")
    assert "-32021" in out


def test_only_a_complete_result_taken_for_modern(verdict):
    def complete_only(reply):
        if reply.ok and reply.result.get("resultType") == "complete":
            return "modern"
        return "modern" if reply.code in MODERN_CODES or (reply.status, reply.code) == (404, -32601) else "legacy"
    out = verdict(checks.check_era_probe, complete_only)
    assert out.startswith("✗ era_of said 'legacy' for the answer to tools/call of publish_note declaring")
    assert "input_required" in out and "carries resultType" in out


def test_result_type_property_taken_for_the_field(verdict):
    # mcpwire's reply.result_type reads a result without resultType as "complete", so it cannot tell the eras apart:
    # the hint must say so, or the learner sees "complete" in their own reply and "resultType None" in the message.
    def by_property(reply):
        if reply.result_type is not None:
            return "modern"
        return "modern" if reply.code in MODERN_CODES or (reply.status, reply.code) == (404, -32601) else "legacy"
    out = verdict(checks.check_era_probe, by_property)
    assert out.startswith("✗ era_of said 'modern'") and "reply.result_type" in out and "reply.result" in out, out
