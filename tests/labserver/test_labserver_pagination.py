"""resources/list in pages: one resource per note, opaque cursors, -32602 for a cursor the server did not issue.

Every test runs over stdio and over Streamable HTTP, and every reply is validated against mcp_types.
"""

from __future__ import annotations

import base64

import pytest
from lab_harness import check_error, check_result

from labserver.cli import parse_args
from labserver.resources import DEFAULT_PAGE_SIZE
from mcpwire import HttpWire, StdioWire, pages

SAMPLE_NOTES = 13
STATIC_RESOURCES = ("notes://attachments/hypnogram.png", "notes://index")


@pytest.fixture(scope="module", params=["stdio", "http"])
def wire(request):
    kind = StdioWire if request.param == "stdio" else HttpWire
    with kind.labserver() as server:
        yield server


def walk(wire, **params):
    """Every page's result, following nextCursor by hand."""
    results, cursor = [], None
    while True:
        page_params = {**params, **({} if cursor is None else {"cursor": cursor})}
        results.append(check_result("resources/list", wire.request("resources/list", page_params).message))
        cursor = results[-1].get("nextCursor")
        if cursor is None:
            return results
        assert len(results) < 20, "the server kept sending cursors"


def test_the_sample_notes_span_at_least_three_pages_of_the_default_size(wire):
    results = walk(wire)
    assert len(results) >= 3
    assert all(len(result["resources"]) <= DEFAULT_PAGE_SIZE for result in results)
    assert all("nextCursor" in result for result in results[:-1]) and "nextCursor" not in results[-1]


def test_the_pages_list_every_note_once_plus_the_index_and_the_image(wire):
    uris = [resource["uri"] for result in walk(wire) for resource in result["resources"]]
    assert len(uris) == len(set(uris)) == SAMPLE_NOTES + len(STATIC_RESOURCES)
    assert set(STATIC_RESOURCES) <= set(uris)
    notes = [uri for uri in uris if uri not in STATIC_RESOURCES]
    # Each listed note can be read under the URI it is listed with.
    read = check_result("resources/read", wire.request("resources/read", {"uri": notes[0]}).message)
    assert read["contents"][0]["mimeType"] == "text/markdown"


def test_the_same_cursor_gives_the_same_page_again(wire):
    cursor = walk(wire)[0]["nextCursor"]
    first, again = (wire.request("resources/list", {"cursor": cursor}).message for _ in range(2))
    assert check_result("resources/list", first)["resources"] == check_result("resources/list", again)["resources"]


def tampered(cursor: str) -> str:
    raw = bytearray(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    raw[0] ^= 1  # one bit of the position: "notes://…" becomes "otes://…"
    return base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")


@pytest.mark.parametrize("make_cursor", [
    pytest.param(lambda good: "eyJwYWdlIjogM30=", id="the spec's example cursor"),
    pytest.param(lambda good: "", id="an empty string"),
    pytest.param(tampered, id="one bit changed"),
    pytest.param(lambda good: good[:-2], id="cut short"),
])
def test_a_cursor_the_server_did_not_issue_is_invalid_params(wire, make_cursor):
    good = walk(wire)[0]["nextCursor"]
    reply = wire.request("resources/list", {"cursor": make_cursor(good)})
    error = check_error(reply.message, -32602)
    assert "cursor" in error["message"].lower()


def test_pages_carry_the_list_cache_hints(wire):
    for result in walk(wire):
        assert (result["ttlMs"], result["cacheScope"]) == (60_000, "private")


def test_the_mcpwire_helper_follows_every_cursor(wire):
    by_hand = [resource for result in walk(wire) for resource in result["resources"]]
    assert pages.list_all(wire, "resources/list") == by_hand


@pytest.mark.parametrize("size, expected_pages", [(1, SAMPLE_NOTES + 2), (7, 3), (100, 1)])
def test_page_size_is_a_lab_option(size, expected_pages):
    with StdioWire.labserver("--page-size", str(size)) as wire:
        results = walk(wire)
    assert len(results) == expected_pages
    assert max(len(result["resources"]) for result in results) == min(size, SAMPLE_NOTES + 2)


@pytest.mark.parametrize("bad", ["0", "-3", "five"])
def test_page_size_must_be_a_positive_whole_number(bad, capsys):
    with pytest.raises(SystemExit):
        parse_args(["--page-size", bad])
    assert "--page-size" in capsys.readouterr().err
