import json
import shlex

from mcpwire import StdioWire, Transcript, frames
from mcpwire.transcript import Exchange

SEARCH = {"name": "search_notes", "arguments": {"query": "it's \"quoted\"", "limit": 1}}


def test_jsonl_round_trip_is_exact(tmp_path, http_wire, stdio_wire):
    stdio_wire.request("tools/call", SEARCH)
    stdio_wire.send_raw("{broken \udcff")  # even bytes that are not UTF-8 text survive
    http_wire.request("tools/call", {"name": "reindex", "arguments": {"pause_ms": 0}}, meta={"progressToken": 1})
    both = Transcript([*stdio_wire.transcript, *http_wire.transcript])
    both.to_jsonl(tmp_path / "t.jsonl")
    again = Transcript.from_jsonl(tmp_path / "t.jsonl")
    assert again == both
    assert [e.tokens_down for e in again] == [e.tokens_down for e in both]


def test_as_stdin_line_and_as_curl_for_stdio(stdio_wire):
    frame = frames.request("tools/call", SEARCH, id=4000)
    stdio_wire.send(frame)
    index = len(stdio_wire.transcript) - 1
    assert stdio_wire.transcript.as_stdin_line(index) == frames.dumps(frame)
    curl = stdio_wire.transcript.as_curl(index, url="http://127.0.0.1:8000/mcp")
    words = shlex.split(curl.replace("\\\n", ""))
    assert words[:5] == ["curl", "-sS", "-X", "POST", "http://127.0.0.1:8000/mcp"]
    assert "Mcp-Method: tools/call" in words and "Mcp-Name: search_notes" in words
    assert json.loads(words[-1]) == frame


def test_as_curl_for_http_repeats_the_exact_headers_and_body(http_wire):
    http_wire.request("tools/call", SEARCH)
    index = len(http_wire.transcript) - 1
    words = shlex.split(http_wire.transcript.as_curl(index).replace("\\\n", ""))
    assert words[4] == http_wire.url
    head, _, body = http_wire.transcript[index].up.partition(b"\r\n\r\n")
    sent = [line for line in head.decode().split("\r\n")[1:] if not line.startswith(("Host:", "Content-Length:"))]
    assert [words[i + 1] for i, w in enumerate(words) if w == "-H"] == sent
    assert words[-1] == body.decode()
    assert http_wire.transcript.as_stdin_line(index) == body.decode()


def test_framing_is_everything_but_the_json():
    e = Exchange("stdio", "tools/list", 1, b'{"a":1}\n', b'{"b":"\xc3\xbc"}\n', ['{"a":1}'], ['{"b":"ü"}'])
    assert (e.bytes_up, e.bytes_down, e.framing_up, e.framing_down) == (8, 11, 1, 1)
    assert repr(e) == "<Exchange stdio tools/list id=1: 8 B up (framing 1), 11 B down (framing 1)>"
    assert Transcript([e]).totals() == {"bytes_up": 8, "bytes_down": 11, "framing_up": 1, "framing_down": 1,
                                        "tokens_up": e.tokens_up, "tokens_down": e.tokens_down}


def test_a_raw_send_that_is_not_utf8_is_counted_and_shown_over_both_transports(stdio_wire, http_wire):
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list\xff","params":{}}'
    for wire in (stdio_wire, http_wire):
        wire.send_raw(body)
        sent = wire.transcript[-1]
        assert sent.framing_up == sent.bytes_up - len(body)
        assert "tools/list" in repr(sent) and "tools/list" in repr(wire.transcript)

def test_default_view_is_deterministic_and_shows_no_timing():
    with StdioWire.labserver() as one, StdioWire.labserver() as two:
        for wire in (one, two):
            wire.request("tools/list")
            wire.request("tools/call", {"name": "search_notes", "arguments": {"query": "tmr"}})
        assert repr(one.transcript) == repr(two.transcript)
        assert "ms" not in repr(one.transcript)
        assert one.transcript._repr_html_().startswith("<pre>")


def test_the_table_stays_aligned_when_a_transport_name_is_longer_than_its_column():
    frame = '{"jsonrpc":"2.0","id":2,"method":"tools/call"}'
    rows = Transcript([Exchange("postMessage", "tools/call", 2, frame.encode(), b"", [frame]),
                       Exchange("stdio", "tools/call", 9, frame.encode() + b"\n", b"", [frame])]).display_text().splitlines()
    assert len({row.index(" tools/call") if "tools/call" in row else row.index(" method") for row in rows}) == 1, rows
    assert len({len(row) for row in rows}) == 1, rows
    stdio_only = Transcript([Exchange("stdio", "tools/list", 1, b"{}\n", b"{}\n", ["{}"], ["{}"])]).display_text()
    assert stdio_only.startswith("  #  transport method "), "a table of short transport names keeps its width"
