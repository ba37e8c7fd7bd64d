"""Exercise 07, task 3 (follow nextCursor): right answers pass, typical mistakes get the explanation they need."""

from urllib.parse import quote, unquote

import pytest

import checks
from checks.ex07_pagination import ODD_CURSOR, check_all_resources


def stub(request):
    raise NotImplementedError("your code here")


def all_resources(request):
    reply = request("resources/list")
    resources = list(reply["result"]["resources"])
    while "nextCursor" in reply["result"]:
        reply = request("resources/list", {"cursor": reply["result"]["nextCursor"]})
        resources += reply["result"]["resources"]
    return resources


def all_resources_recursive(request, cursor=None):
    result = request("resources/list", {} if cursor is None else {"cursor": cursor})["result"]
    rest = all_resources_recursive(request, result["nextCursor"]) if result.get("nextCursor") is not None else []
    return result["resources"] + rest


def first_page_only(request):
    return request("resources/list")["result"]["resources"]


def stops_on_empty_cursor(request):
    reply = request("resources/list")
    resources = list(reply["result"]["resources"])
    while reply["result"].get("nextCursor"):
        reply = request("resources/list", {"cursor": reply["result"]["nextCursor"]})
        resources += reply["result"]["resources"]
    return resources


def page_numbers(request):
    resources, page = [], 1
    while True:
        reply = request("resources/list", {} if page == 1 else {"cursor": str(page)})
        resources += reply["result"]["resources"]
        if "nextCursor" not in reply["result"]:
            return resources
        page += 1


def never_moves_on(request):
    reply = request("resources/list")
    first_cursor = reply["result"]["nextCursor"]
    resources = []
    while "nextCursor" in reply["result"]:
        resources += reply["result"]["resources"]
        reply = request("resources/list", {"cursor": first_cursor})
    return resources


def reads_a_missing_cursor(request):
    reply, resources = request("resources/list"), []
    while True:
        resources += reply["result"]["resources"]
        reply = request("resources/list", {"cursor": reply["result"]["nextCursor"]})


def list_of_pages(request):
    reply = request("resources/list")
    found = [reply["result"]["resources"]]
    while "nextCursor" in reply["result"]:
        reply = request("resources/list", {"cursor": reply["result"]["nextCursor"]})
        found.append(reply["result"]["resources"])
    return found


def test_the_check_is_exported():
    assert checks.check_all_resources is check_all_resources


def test_the_stub_is_not_done(verdict, lab):
    assert verdict(check_all_resources, stub, lab).startswith("not done yet: all_resources still raises")


def test_a_right_answer_passes(verdict, lab):
    out = verdict(check_all_resources, all_resources, lab)
    assert out.startswith("✓ all_resources followed every nextCursor: 15 resources from the lab in 3 pages")


def test_a_right_answer_written_differently_passes(verdict, lab):
    assert verdict(check_all_resources, all_resources_recursive, lab).startswith("✓")


def cursor_none_on_the_first_page(request):
    resources, cursor = [], None
    while True:
        result = request("resources/list", {"cursor": cursor})["result"]
        resources += result["resources"]
        if "nextCursor" not in result:
            return resources
        cursor = result["nextCursor"]


def test_a_null_cursor_on_the_first_page(verdict, lab):
    out = verdict(check_all_resources, cursor_none_on_the_first_page, lab)
    assert out.startswith("✗") and "request 1 sent the cursor null; a cursor is a string" in out, out


def test_the_first_page_only(verdict, lab):
    out = verdict(check_all_resources, first_page_only, lab)
    assert out.startswith("✗ On the lab server (15 resources), your function stopped after 1 page(s)")
    assert "While a result has nextCursor" in out


def test_an_empty_cursor_taken_for_the_end(verdict, lab):
    out = verdict(check_all_resources, stops_on_empty_cursor, lab)
    assert out.startswith("✗ On a second server") and "nextCursor was \"\" (an empty string)" in out
    assert "Test for the key" in out


def test_a_cursor_built_by_hand(verdict, lab):
    out = verdict(check_all_resources, page_numbers, lab)
    assert "request 2 sent a cursor the server never issued: 2." in out and "error -32602" in out
    assert "never build, cut or change a cursor" in out


def test_a_loop_that_never_moves_on(verdict, lab):
    out = verdict(check_all_resources, never_moves_on, lab)
    assert "sent 30 requests and was still going" in out and "cursor of the latest page" in out


def test_reading_nextcursor_on_the_last_page(verdict, lab):
    out = verdict(check_all_resources, reads_a_missing_cursor, lab)
    assert "your function raised KeyError: 'nextCursor'" in out and "test whether the key is there" in out


def test_a_list_of_pages(verdict, lab):
    out = verdict(check_all_resources, list_of_pages, lab)
    assert "you returned a list of 3 pages" in out


def drops_an_empty_cursor(request):
    """Treats "" as no cursor at all: the second server's last page is never asked for, the first comes back."""
    resources, cursor = [], None
    while True:
        result = request("resources/list", {"cursor": cursor} if cursor else {})["result"]
        resources += result["resources"]
        if "nextCursor" not in result:
            return resources
        cursor = result["nextCursor"]


def test_an_empty_cursor_dropped_is_said_so(verdict, lab):
    # Issue 31: the endless loop was stopped without saying why it never ended.
    out = verdict(check_all_resources, drops_an_empty_cursor, lab)
    assert out.startswith("✗ On a second server") and "your request 3 after it sent no cursor" in out, out
    assert "started again from the first page" in out and "`if cursor:`" in out


def all_resources_with_a_none_sentinel(request):
    """Another style: None as the only end marker, the cursor sent whenever it is not None."""
    resources, cursor = [], None
    while True:
        params = {} if cursor is None else {"cursor": cursor}
        page = request("resources/list", params)["result"]
        resources.extend(page["resources"])
        cursor = page.get("nextCursor")
        if cursor is None:
            return resources


def test_a_none_sentinel_loop_passes(verdict, lab):
    assert verdict(check_all_resources, all_resources_with_a_none_sentinel, lab).startswith("✓")


def url_encodes_the_cursor(request):
    reply = request("resources/list")
    resources = list(reply["result"]["resources"])
    while "nextCursor" in reply["result"]:
        reply = request("resources/list", {"cursor": quote(reply["result"]["nextCursor"])})
        resources += reply["result"]["resources"]
    return resources


def test_a_url_encoded_cursor_is_one_the_server_never_issued(verdict, lab):
    # Values that need encoding: the second server's cursor holds spaces, %, /, +, = and ü, and is copied as it came.
    out = verdict(check_all_resources, url_encodes_the_cursor, lab)
    assert out.startswith("✗ On a second server") and f"a cursor the server never issued: {quote(ODD_CURSOR)}" in out
    assert "URL-encoded" in out, out


def cursor_changed(change):
    def work(request):
        reply = request("resources/list")
        resources = list(reply["result"]["resources"])
        while "nextCursor" in reply["result"]:
            reply = request("resources/list", {"cursor": change(reply["result"]["nextCursor"])})
            resources += reply["result"]["resources"]
        return resources
    return work


def stops_at_an_empty_page(request):
    resources, params = [], {}
    while True:
        result = request("resources/list", params)["result"]
        if not result["resources"]:
            return resources
        resources += result["resources"]
        if "nextCursor" not in result:
            return resources
        params = {"cursor": result["nextCursor"]}


def deduped_by_uri(request):
    return list({resource["uri"]: resource for resource in all_resources(request)}.values())


def first_of_each_uri(request):
    kept = []
    for resource in all_resources(request):
        if resource["uri"] not in [k["uri"] for k in kept]:
            kept.append(resource)
    return kept


# Blind learner runs: each of these passed while the second server's cursor needed no care and no page was empty.
@pytest.mark.parametrize("work, phrases", [
    pytest.param(cursor_changed(lambda c: c.strip("=")), ("never issued", "stripped of its '='", "opaque"),
                 id="cursor-stripped-of-equals"),
    pytest.param(cursor_changed(unquote), ("never issued", "URL-decoded", "opaque"), id="cursor-url-decoded"),
    pytest.param(cursor_changed(str.strip), ("never issued", "stripped of its spaces"), id="cursor-stripped"),
    pytest.param(stops_at_an_empty_page, ("stopped after 3 page(s): the last one held no resources",
                                          "nextCursor '4'", "A page may be empty"), id="stops-at-an-empty-page"),
    pytest.param(deduped_by_uri, ("you returned 4 resources; the pages hold 5", "scroll://b came on two pages",
                                  "for the caller to decide"), id="deduped-by-uri"),
    pytest.param(first_of_each_uri, ("scroll://b came on two pages",), id="first-of-each-uri-kept"),
])
def test_a_cursor_changed_or_a_page_dropped_is_named(verdict, lab, work, phrases):
    out = verdict(check_all_resources, work, lab)
    assert out.startswith("✗ On a second server") and all(phrase in out for phrase in phrases), out


def all_resources_by_generator(request):
    """Right, written differently: a generator of pages, flattened."""
    def pages():
        params = {}
        while True:
            result = request("resources/list", params)["result"]
            yield result["resources"]
            if "nextCursor" not in result:
                return
            params = {"cursor": result["nextCursor"]}
    return [resource for page in pages() for resource in page]


def test_a_generator_of_pages_passes(verdict, lab):
    assert verdict(check_all_resources, all_resources_by_generator, lab).startswith("✓")
