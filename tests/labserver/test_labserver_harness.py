"""The harness's own validators (tests/lab_harness.py): they must refuse what the spec refuses."""

import pytest
from pydantic import ValidationError

from lab_harness import check_notification, check_result, sse_messages


def test_check_result_rejects_a_result_without_result_type():
    reply = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [], "ttlMs": 0, "cacheScope": "public"}}
    with pytest.raises(ValidationError):
        check_result("tools/list", reply)


def test_check_result_accepts_a_minimal_tools_list():
    reply = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "public"},
    }
    assert check_result("tools/list", reply)["tools"] == []


def test_check_notification_rejects_a_progress_without_token():
    with pytest.raises(ValidationError):
        check_notification({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}})


def test_sse_messages_reads_crlf_events_and_skips_comments():
    body = ': ping\r\n\r\nevent: message\r\ndata: {"a":1}\r\n\r\nevent: message\r\ndata: {"b":2}\r\n\r\n'
    assert sse_messages(body) == [{"a": 1}, {"b": 2}]
