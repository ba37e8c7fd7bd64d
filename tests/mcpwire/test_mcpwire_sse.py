import json

import pytest

from mcpwire import sse

PROGRESS = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}'
FINAL = '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}'


@pytest.mark.parametrize("newline", ["\r\n", "\n", "\r"])
def test_events_parse_with_any_line_ending_and_comments_are_ignored(newline):
    stream = newline.join([": ping", "", "event: message", f"data: {PROGRESS}", "", f"data: {FINAL}", "", ""])
    events = sse.parse(stream)
    assert [e.event for e in events] == ["message", "message"]
    assert [json.loads(e.data) for e in events] == [json.loads(PROGRESS), json.loads(FINAL)]


@pytest.mark.parametrize("newline", ["\r\n", "\n", "\r"])
def test_bytes_split_anywhere_give_the_same_events(newline):
    stream = newline.join(["event: message", f"data: {PROGRESS}", "", "event: message", f"data: {FINAL}", "", ""]).encode()
    for cut in range(1, len(stream)):
        parser = sse.SseParser()
        events = parser.feed(stream[:cut]) + parser.feed(stream[cut:])
        assert [e.data for e in events] == [PROGRESS, FINAL], cut
        assert not parser.unfinished


def test_multi_line_data_is_joined_and_payload_bytes_counted():
    parser = sse.SseParser()
    events = parser.feed(b"data: {\"a\":\ndata: 1}\n\n")
    assert events[0].data == '{"a":\n1}'
    assert parser.payload_bytes == len('{"a":') + len("1}")


def test_a_stream_cut_mid_event_is_unfinished():
    parser = sse.SseParser()
    assert parser.feed(f"event: message\r\ndata: {FINAL[:20]}".encode()) == []
    assert parser.unfinished


def test_a_stream_whose_lines_end_in_cr_delivers_its_last_event_without_more_bytes():
    # A server may end lines with a lone CR; the final response must not wait for a byte that never comes.
    parser = sse.SseParser()
    events = parser.feed(f"event: message\rdata: {FINAL}\r\r".encode())
    assert [e.data for e in events] == [FINAL]
    assert not parser.unfinished


def test_mixed_line_endings_in_one_stream():
    stream = f"data: {PROGRESS}\r\n\ndata: {FINAL}\r\r".encode()
    assert [e.data for e in sse.parse(stream)] == [PROGRESS, FINAL]


def test_a_byte_order_mark_opening_the_stream_is_ignored_even_split_across_chunks():
    stream = f"\ufeffdata: {FINAL}\n\n".encode()
    parser = sse.SseParser()
    events = parser.feed(stream[:2]) + parser.feed(stream[2:])
    assert [e.data for e in events] == [FINAL]


def test_an_empty_event_field_means_the_default_type():
    # "event:" with no value must not give the event an empty type: a client dispatching on it would drop it.
    assert [e.event for e in sse.parse(f"event:\ndata: {FINAL}\n\n")] == ["message"]


def test_an_event_the_stream_ends_before_finishing_is_dropped():
    # The format says an event without its closing empty line is never dispatched: a broken stream's last,
    # half-written response must not be read as the answer.
    assert [e.data for e in sse.parse(f"data: {PROGRESS}\n\ndata: {FINAL}\n")] == [PROGRESS]


def test_a_data_line_without_a_space_and_a_line_without_a_colon():
    events = sse.parse(f"data:{FINAL}\n\ndata\n\n")
    assert [e.data for e in events] == [FINAL, ""]
