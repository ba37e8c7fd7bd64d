"""The stdio matching core and line splitter, fed plain bytes: no process, no thread."""

import json

import pytest

from mcpwire.lines import LineSplitter, Oversized
from mcpwire.matching import RAW, REQUEST, Matcher, Pending


def line(message):
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def reply(frame_id, **result):
    return line({"jsonrpc": "2.0", "id": frame_id, "result": result})


def request(matcher, frame_id, method="tools/list", token=None):
    pending = Pending(REQUEST, frame_id, method, "{}", b"{}\n", token)
    matcher.expect(pending)
    return pending


def raw(matcher, frame_id=None, text="{oops"):
    pending = Pending(RAW, frame_id, None, text, text.encode() + b"\n")
    matcher.expect(pending)
    return pending


def test_replies_in_any_order_find_their_request():
    matcher = Matcher()
    first, second = request(matcher, 1), request(matcher, 2)
    assert matcher.file(reply(2)) is second
    assert matcher.file(reply(1)) is first
    assert first.reply.id == 1 and second.reply.id == 2
    assert [exchange.id for exchange in matcher.transcript] == [2, 1]  # in the order they finished
    assert not matcher.unread


def test_the_same_id_twice_is_answered_oldest_first():
    matcher = Matcher()
    older, newer = request(matcher, 7), request(matcher, 7)
    matcher.file(reply(7, n=1))
    matcher.file(reply(7, n=2))
    assert (older.reply.result, newer.reply.result) == ({"n": 1}, {"n": 2})
    assert matcher.take(7) is older  # each request is taken once, oldest first
    assert matcher.take(7) is newer
    with pytest.raises(KeyError):
        matcher.take(7)


@pytest.mark.parametrize("frame_id", [8, [8], {"id": 8}])
def test_an_id_no_request_was_written_with_cannot_be_taken(frame_id):
    matcher = Matcher()
    request(matcher, 7)
    with pytest.raises(KeyError, match="no request with id"):
        matcher.take(frame_id)


def test_a_null_id_error_answers_the_oldest_raw_send_not_a_request():
    matcher = Matcher()
    asked = request(matcher, 1)
    typed = raw(matcher)
    error = line({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
    assert matcher.file(error) is typed and typed.reply.code == -32700 and not asked.answered


def test_a_raw_send_with_a_readable_id_is_answered_by_that_id_once():
    matcher = Matcher()
    typed = raw(matcher, 77, '{"jsonrpc":"2.0","id":77}')
    assert matcher.file(line({"jsonrpc": "2.0", "id": 77, "error": {"code": -32600, "message": "x"}})) is typed
    assert matcher.file(line({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}})) is None
    assert matcher.unread[-1].code == -32700  # it no longer waits for a null-id reply


def test_progress_is_tied_to_its_request_and_comes_with_the_reply():
    matcher = Matcher()
    slow = request(matcher, 1, "tools/call", token="p-1")
    progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p-1", "progress": 1}}
    assert matcher.file(line(progress)) is slow
    assert matcher.notifications == [progress] and not matcher.transcript and not matcher.unread
    assert matcher.file(reply(1)) is slow
    assert slow.reply.notifications == [progress]
    assert matcher.transcript[-1].down_payloads == [json.dumps(progress, separators=(",", ":")),
                                                    '{"jsonrpc":"2.0","id":1,"result":{}}']


@pytest.mark.parametrize("message", [
    {"jsonrpc": "2.0", "id": 9, "result": {}},  # nobody asked
    {"jsonrpc": "2.0", "id": [1], "result": {}},  # an id no request can have
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": {"a": 1}}},
    {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
])
def test_anything_nobody_waits_for_is_unsolicited(message):
    matcher = Matcher()
    request(matcher, 1, token="p-1")
    assert matcher.file(line(message)) is None
    assert matcher.unread[-1].message == message and matcher.transcript[-1].up == b""
    assert matcher.notifications == ([message] if "method" in message else [])


def test_a_line_that_is_not_json_is_unsolicited_and_says_so():
    matcher = Matcher()
    assert matcher.file(b"oops\n") is None and "not JSON" in matcher.unread[-1].problem


def test_after_give_up_the_late_reply_is_unsolicited_and_the_request_is_recorded_once():
    matcher = Matcher()
    late = request(matcher, 1)
    exchange = matcher.give_up(late)
    assert exchange.up == b"{}\n" and exchange.down == b"" and matcher.transcript == [exchange]
    assert matcher.give_up(late) is None and len(matcher.transcript) == 1
    assert matcher.file(reply(1)) is None


def test_an_oversized_line_answers_the_request_its_head_names():
    matcher = Matcher(limit=1_000_000)
    waiting = request(matcher, 3)
    assert matcher.file(Oversized(b'{"jsonrpc":"2.0","id":3,"result":{"pad":"xxxx', 5_000_000)) is waiting
    assert "line of 5000000 bytes, over mcpwire's limit of 1000000" in waiting.reply.problem


def test_a_line_that_cannot_be_filed_is_kept_with_the_reason_and_filing_goes_on():
    class Refusing(list):
        def append(self, item):
            if isinstance(item, dict):
                raise RuntimeError("full")
            super().append(item)

    matcher = Matcher(notifications=Refusing())
    assert matcher.file(line({"jsonrpc": "2.0", "method": "notifications/message"})) is None
    assert "could not file this line (RuntimeError: full)" in matcher.unread[-1].problem
    asked = request(matcher, 4)
    assert matcher.file(reply(4)) is asked and asked.answered


def test_close_marks_the_stream_ended():
    matcher = Matcher()
    request(matcher, 1)
    matcher.close()
    assert matcher.closed


def test_lines_are_cut_at_newlines_across_feeds():
    splitter = LineSplitter(limit=100)
    assert splitter.feed(b'{"a":1}\n{"b"') == [b'{"a":1}\n']
    assert splitter.feed(b':2}\n\n') == [b'{"b":2}\n', b"\n"]
    assert splitter.feed(b"tail") == [] and splitter.end() == b"tail"


def test_a_line_over_the_limit_is_reported_by_head_and_size_and_the_next_is_kept():
    splitter = LineSplitter(limit=10)
    assert splitter.feed(b"x" * 25) == []
    assert splitter.feed(b"yy\nok\n") == [Oversized(b"x" * 25, 28), b"ok\n"]  # the head: up to 200 bytes
    assert LineSplitter(limit=3).feed(b"ab\n") == [b"ab\n"]  # exactly the limit, newline included, is fine


def test_a_reply_matched_by_its_first_bytes_reads_like_one_parsed_at_once():
    matcher = Matcher()
    waiting = request(matcher, 4)
    matcher.file(b'{"jsonrpc":"2.0","id":4,"result":{"tools":[{"name":"x"}]}}\n')
    assert waiting.reply.message == {"jsonrpc": "2.0", "id": 4, "result": {"tools": [{"name": "x"}]}}
    assert waiting.reply.problem is None and waiting.reply.ok and waiting.reply.result == {"tools": [{"name": "x"}]}


def test_a_reply_that_starts_right_but_is_not_json_reaches_its_request_and_says_so():
    matcher = Matcher()
    waiting = request(matcher, 4)
    matcher.file(b'{"jsonrpc":"2.0","id":4,"result":{"cut\n')
    assert waiting.reply.message is None and "not JSON" in waiting.reply.problem and not waiting.reply.ok


def test_an_id_json_cannot_read_falls_back_to_parsing_the_line():
    matcher = Matcher()
    assert matcher.file(b'{"jsonrpc":"2.0","id":007,"result":{}}\n') is None
    assert "not JSON" in matcher.unread[-1].problem


@pytest.mark.parametrize("written", [b'{"jsonrpc":"2.0","id":007,"result":{}}\n',
                                     b'{"jsonrpc":"2.0","id":"a\tb","result":{}}\n'])  # a raw tab: not JSON
def test_a_reply_whose_id_json_cannot_read_does_not_answer_a_raw_send(written):
    matcher = Matcher()
    typed = raw(matcher)
    assert matcher.file(written) is None
    assert not typed.answered and "not JSON" in matcher.unread[-1].problem


def test_a_string_id_is_read_from_the_start_of_the_reply():
    matcher = Matcher()
    waiting = request(matcher, "7")
    assert matcher.file(reply("7", ok=True)) is waiting and waiting.reply.result == {"ok": True}
