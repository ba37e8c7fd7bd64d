"""mcpwire.pages follows nextCursor, treats "" as a cursor, and stops on errors, cycles and endless lists."""

from __future__ import annotations

import pytest

from mcpwire import Reply, pages


class ScriptedLists:
    """A wire whose resources/list answers come from a dict: cursor -> (items, nextCursor) or an error."""

    def __init__(self, script):
        self.script = script
        self.cursors = []

    def request(self, method, params=None):
        cursor = (params or {}).get("cursor")
        self.cursors.append(cursor)
        answer = self.script[cursor]
        if isinstance(answer, int):
            return Reply({"jsonrpc": "2.0", "id": 1, "error": {"code": answer, "message": "Invalid cursor"}}, b"")
        items, next_cursor = answer
        result = {"resources": items, **({} if next_cursor is None else {"nextCursor": next_cursor})}
        return Reply({"jsonrpc": "2.0", "id": 1, "result": result}, b"")


def test_every_page_is_fetched_and_the_items_keep_their_order():
    wire = ScriptedLists({None: (["a", "b"], "c1"), "c1": (["c"], "c2"), "c2": (["d"], None)})
    assert pages.list_all(wire, "resources/list") == ["a", "b", "c", "d"]
    assert wire.cursors == [None, "c1", "c2"]


def test_an_empty_string_is_a_cursor_not_the_end():
    wire = ScriptedLists({None: (["a"], ""), "": (["b"], None)})
    assert pages.list_all(wire, "resources/list") == ["a", "b"]


def test_an_error_page_stops_the_walk_with_the_replies_so_far():
    wire = ScriptedLists({None: (["a"], "gone"), "gone": -32602})
    with pytest.raises(pages.PaginationError, match="page 2") as caught:
        pages.list_all(wire, "resources/list")
    assert len(caught.value.replies) == 2


def test_a_cursor_seen_before_is_a_cycle_not_an_endless_loop():
    wire = ScriptedLists({None: (["a"], "x"), "x": (["b"], "y"), "y": (["c"], "x")})
    with pytest.raises(pages.PaginationError, match="cycle"):
        pages.list_all(wire, "resources/list")


def test_a_list_that_never_ends_stops_at_max_pages():
    wire = ScriptedLists({None: ([0], "1"), **{str(n): ([n], str(n + 1)) for n in range(1, 10)}})
    with pytest.raises(pages.PaginationError, match="after 3 pages"):
        pages.list_all(wire, "resources/list", max_pages=3)
    assert len(wire.cursors) == 3
