"""Ledgers add up to the transcript, and each chart draws the series it was given (checked in its data)."""

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from mcpwire import charts, count_tokens, frames  # noqa: E402
from mcpwire.cache import CacheEvent  # noqa: E402
from mcpwire.costs import ledger  # noqa: E402

SESSION = [
    ("server/discover", None),
    ("tools/list", None),
    ("tools/call", {"name": "search_notes", "arguments": {"query": "spindle", "limit": 2}}),
    ("resources/read", {"uri": "notes://index"}),
]


def run_session(wire):
    for number, (method, params) in enumerate(SESSION, start=1):
        wire.send(frames.request(method, params, id=number))
    return list(wire.transcript)[-len(SESSION):]


@pytest.fixture(scope="module")
def stdio_session(stdio_wire):
    return run_session(stdio_wire)


@pytest.fixture(scope="module")
def http_session(http_wire):
    return run_session(http_wire)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def footer(fig):
    return [t.get_text() for t in fig.texts if t.get_text().startswith(("tokens:", "bytes on the wire"))]


def bar_heights(ax, index):
    return [round(p.get_height()) for p in ax.containers[index]]


def test_ledger_sums_equal_the_transcript_bytes(stdio_session, http_session):
    for exchanges in (stdio_session, http_session):
        total = ledger(exchanges).total
        assert total.bytes_up == sum(len(e.up) for e in exchanges)
        assert total.bytes_down == sum(len(e.down) for e in exchanges)
        payload = sum(len(p.encode()) for e in exchanges for p in e.up_payloads + e.down_payloads)
        assert total.framing == total.bytes_up + total.bytes_down - payload
        assert total.tokens_down == sum(count_tokens(p) for e in exchanges for p in e.down_payloads)


def test_frame_costs_draws_bytes_and_tokens_per_exchange_by_direction(stdio_session):
    fig = charts.frame_costs(stdio_session)
    top, bottom = fig.axes
    assert bar_heights(top, 0) == [e.bytes_up for e in stdio_session]
    assert bar_heights(top, 1) == [e.bytes_down for e in stdio_session]
    assert bar_heights(bottom, 0) == [e.tokens_up for e in stdio_session]
    assert bar_heights(bottom, 1) == [e.tokens_down for e in stdio_session]
    assert [c.get_label() for c in top.containers] == ["client → server", "server → client"]
    assert [t.get_text() for t in bottom.get_xticklabels()][1] == "1 tools/list"
    assert "bytes" in top.get_ylabel() and "tokens" in bottom.get_ylabel()
    assert footer(fig) == ["tokens: cl100k_base (tiktoken, offline); other model families tokenize differently"]
    assert fig._suptitle.get_text()


def test_frame_costs_by_method_and_with_another_tokenizer(stdio_session):
    def characters(text):
        return len(text)

    fig = charts.frame_costs(stdio_session * 2, by="method", tokenizer=characters)
    top, bottom = fig.axes
    labels = [t.get_text() for t in bottom.get_xticklabels()]
    assert labels == ["server/discover ×2", "tools/list ×2", "tools/call ×2", "resources/read ×2"]
    assert bar_heights(bottom, 1)[1] == 2 * len(stdio_session[1].down_payloads[0])
    assert footer(fig) == ["tokens: characters; other model families tokenize differently"]


def test_framing_by_transport_stacks_payload_under_framing(stdio_session, http_session):
    fig = charts.framing_by_transport({"stdio": stdio_session, "HTTP": http_session})
    (ax,) = fig.axes
    payload, framing = bar_heights(ax, 0), bar_heights(ax, 1)
    for exchanges, p, f in zip((stdio_session, http_session), payload, framing):
        assert p + f == sum(e.bytes_up + e.bytes_down for e in exchanges)
        assert f == sum(e.framing_up + e.framing_down for e in exchanges)
    assert framing[0] == 2 * len(SESSION)  # one newline each way on stdio
    assert framing[1] > 100 * len(SESSION)  # HTTP lines and headers
    assert [c.get_label().split(":")[0] for c in ax.containers] == ["payload", "framing"]


def test_grown_tools_list_is_the_server_reply_at_its_own_size(stdio_session):
    text = stdio_session[1].down_payloads[0]
    message = json.loads(text)
    count = len(message["result"]["tools"])
    assert charts.grown_tools_list(message, count) == text
    grown = json.loads(charts.grown_tools_list(message, 2 * count + 1))["result"]["tools"]
    names = [tool["name"] for tool in grown]
    assert len(set(names)) == len(names) == 2 * count + 1
    assert names[count] == f"{names[0]}_2" and grown[count]["inputSchema"]["title"] == f"{names[0]}_2Arguments"


def test_without_descriptions_drops_descriptions_but_keeps_an_argument_named_description():
    tool = {"name": "t", "description": "d", "inputSchema": {"type": "object", "description": "s", "properties": {
        "description": {"type": "string", "description": "an argument called description"}}}}
    assert charts.without_descriptions(tool) == {
        "name": "t", "inputSchema": {"type": "object", "properties": {"description": {"type": "string"}}}}


def test_tools_list_growth_plots_bytes_and_tokens_per_count(stdio_session):
    message = json.loads(stdio_session[1].down_payloads[0])
    counts = [1, 10, 40]
    series = charts.tools_list_series(message, counts)
    fig = charts.tools_list_growth(counts, series)
    left, right = fig.axes
    with_line, without_line = left.get_lines()
    assert list(with_line.get_xdata()) == counts
    assert list(with_line.get_ydata()) == [len(t.encode()) for t in series["with descriptions"]]
    assert list(right.get_lines()[1].get_ydata()) == [count_tokens(t) for t in series["without descriptions"]]
    assert all(a > b for a, b in zip(with_line.get_ydata(), without_line.get_ydata()))
    assert [line.get_label() for line in left.get_lines()] == ["with descriptions", "without descriptions"]
    assert "bytes" in left.get_ylabel() and "tokens" in right.get_ylabel()


def test_cumulative_and_crossing():
    assert charts.cumulative([(100, 10)], [(5, 1), (7, 2)], 3) == [(100, 10), (105, 11), (112, 13), (117, 14)]
    # 30 bytes more per request against a 100-byte handshake: behind until request 4.
    assert charts.crossing([(130, 5)], [(100, 5)], [(100, 9)]) == {"bytes": 4, "tokens": None}


def test_envelope_vs_handshake_draws_both_running_totals_and_marks_the_crossing():
    fig = charts.envelope_vs_handshake([(130, 12)], [(100, 10)], [(100, 3)], requests=6)
    bytes_top = fig.axes[0]
    modern, legacy = bytes_top.get_lines()[:2]
    assert list(modern.get_ydata()) == [0, 130, 260, 390, 520, 650, 780]
    assert list(legacy.get_ydata()) == [100, 200, 300, 400, 500, 600, 700]
    crossings = [line.get_xdata()[0] for ax in fig.axes for line in ax.get_lines() if line.get_linestyle() == ":"]
    assert crossings == [3.5, 1.5, 3.5, 1.5]  # row by row: bytes, tokens; running totals, then gaps


def test_cache_savings_draws_running_round_trips_and_bytes():
    plain = [CacheEvent(t * 1000, "tools/list", "sent", 500, 100) for t in range(4)]
    cached = [CacheEvent(0, "tools/list", "stored", 500, 100)] + [
        CacheEvent(t * 1000, "tools/list", "hit", 500, 100) for t in range(1, 4)]
    fig = charts.cache_savings(plain, cached, marks=[(2500, "list changed")])
    left, right = fig.axes
    assert list(left.get_lines()[0].get_ydata()) == [0, 1, 2, 3, 4]
    assert list(left.get_lines()[1].get_ydata()) == [0, 1, 1, 1, 1]
    assert list(right.get_lines()[1].get_ydata()) == [0, 500, 500, 500, 500]
    assert left.get_lines()[1].get_label().endswith(": 1")
    assert "round trips" in left.get_ylabel() and "bytes" in right.get_ylabel()
    assert "min" in left.get_xlabel()
