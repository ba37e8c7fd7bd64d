"""A 10 MB frame, over stdio and over HTTP: refused with a clear error, in bounded server memory.

The memory figure is the server's peak resident memory during the refusal, above
its level just before (see PeakRss); the tests print it.
"""

from __future__ import annotations

import json

import pytest
from test_hardening_support import MB, PeakRss
from lab_harness import check_error, check_result, http_lab, request, stdio_lab

# These tests watch the lab's own process (its pid, memory, signals, children): start it cold.
LAB_STARTS_COLD = True

TEN_MB = 10 * MB


def huge_frame(request_id: str) -> bytes:
    head = json.dumps(request(request_id, "tools/list"))[:-2]  # without the closing "}}" of params and frame
    return head.encode() + b',"pad":"' + b"x" * TEN_MB + b'"}}'


@pytest.fixture(scope="module")
def stdio_server(tmp_path_factory):
    with stdio_lab("--notes", str(tmp_path_factory.mktemp("notes"))) as server:
        check_result("server/discover", server.call(request("warm-up", "server/discover")))
        yield server


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    with http_lab("--notes", str(tmp_path_factory.mktemp("notes"))) as server:
        assert server.post(request("warm-up", "server/discover")).status_code == 200
        yield server


def test_a_10_mb_line_is_refused_in_bounded_memory(stdio_server):
    with PeakRss(stdio_server.process.pid) as meter:
        stdio_server.send_raw(huge_frame("huge") + b"\n")
        reply = stdio_server.next_message(timeout=60)
    print(f"stdio server peak memory growth for a 10 MB line: {meter.growth_mb:.1f} MB")
    assert reply["id"] is None and check_error(reply, -32600)["message"] == "Request too large"
    assert meter.growth_mb < 8  # the front keeps at most 4 MiB of a line, never the whole 10 MB
    check_result("server/discover", stdio_server.call(request("after-huge", "server/discover")))


def test_a_10_mb_line_run_into_the_next_request_costs_only_that_request(stdio_server):
    stdio_server.send_raw(huge_frame("huge-2") + json.dumps(request("swallowed", "tools/list")).encode() + b"\n")
    assert check_error(stdio_server.next_message(timeout=60), -32600)["message"] == "Request too large"
    check_result("server/discover", stdio_server.call(request("after-run-on", "server/discover")))


def test_a_10_mb_body_is_refused_with_413_in_bounded_memory(http_server):
    with PeakRss(http_server.process.pid) as meter:
        response = http_server.client.post(
            http_server.url, content=huge_frame("huge"), headers=http_server.headers_for(request("huge", "tools/list"))
        )
    print(f"HTTP server peak memory growth for a 10 MB body: {meter.growth_mb:.1f} MB")
    assert (response.status_code, response.text) == (413, "Request body too large")
    assert meter.growth_mb < 8
    assert http_server.post(request("after-huge", "server/discover")).status_code == 200


def test_a_10_mb_chunked_body_without_length_is_refused_in_bounded_memory(http_server):
    def pieces():
        frame = huge_frame("huge-chunked")
        for start in range(0, len(frame), 256 * 1024):
            yield frame[start : start + 256 * 1024]

    with PeakRss(http_server.process.pid) as meter:
        response = http_server.client.post(
            http_server.url, content=pieces(), headers=http_server.headers_for(request("huge", "tools/list"))
        )
    print(f"HTTP server peak memory growth for a 10 MB chunked body: {meter.growth_mb:.1f} MB")
    assert (response.status_code, response.text) == (413, "Request body too large")
    assert meter.growth_mb < 8  # the SDK holds up to its 4 MiB limit before it refuses
    assert http_server.post(request("after-chunked", "server/discover")).status_code == 200
