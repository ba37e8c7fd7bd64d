"""Check for exercise 07, task 3: follow nextCursor until the list ends, cursors copied as they came."""

from types import SimpleNamespace
from urllib.parse import quote, unquote, unquote_plus

from mcpwire import pages
from .attempt import RecordingRequest, TooManySends, attempt, missing
from .servers import stdio_lab
from .verdict import failed, not_done, passed, server_said, short, shown

MAX_REQUESTS = 30


# A cursor is any string, copied as it came: this one starts with a space, ends in '=' (as base64 does), and holds
# %20, a slash, a + and a non-ASCII letter, so stripping, URL-decoding or URL-encoding it each change it.
ODD_CURSOR = " page%202/4 +ü=="


class _ScriptedList:
    """A server whose resources/list has four pages: the third is reached with the cursor "" (an empty string) and
    holds no resources, yet has a nextCursor; the fourth lists scroll://b again, renamed (the list changed while it
    was read). Every page is returned as it came."""

    PAGES = {
        None: ([("scroll://a", "a"), ("scroll://b", "b")], ODD_CURSOR),
        ODD_CURSOR: ([("scroll://c", "c")], ""),
        "": ([], "4"),
        "4": ([("scroll://b", "b, renamed"), ("scroll://d", "d")], None),
    }

    def request(self, method, params=None):
        cursor = (params or {}).get("cursor") if isinstance(params, dict) else None
        if method != "resources/list" or cursor not in self.PAGES:
            error = {"code": -32602, "message": f"Invalid cursor {cursor!r}" if method == "resources/list" else "Method not found"}
            return SimpleNamespace(message={"jsonrpc": "2.0", "id": 1, "error": error})
        listed, next_cursor = self.PAGES[cursor]
        result = {"resources": [{"uri": uri, "name": name} for uri, name in listed], "resultType": "complete"}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return SimpleNamespace(message={"jsonrpc": "2.0", "id": 1, "result": result})

    def expected(self):
        return [{"uri": uri, "name": name} for listed, _ in self.PAGES.values() for uri, name in listed]


def check_all_resources(all_resources, lab=None):
    """all_resources(request): every resource of resources/list, following nextCursor page after page."""
    if missing(all_resources):
        not_done("define all_resources(request) first.")
        return
    with stdio_lab(lab) as wire:
        expected = pages.list_all(wire, "resources/list")
        request = RecordingRequest(wire, max_requests=MAX_REQUESTS)
        outcome = attempt(all_resources, request)
        if outcome.not_done:
            not_done("all_resources still raises NotImplementedError. Send resources/list, then follow nextCursor.")
            return
        if not _judge(f"On the lab server ({len(expected)} resources)", expected, request, outcome):
            return
        lab_pages = len(request.sent)
    scripted = _ScriptedList()
    request = RecordingRequest(scripted, max_requests=MAX_REQUESTS)
    outcome = attempt(all_resources, request)
    if not _judge("On a second server, whose cursors include \"\" and one with spaces, % and =",
                  scripted.expected(), request, outcome):
        return
    passed(f"all_resources followed every nextCursor: {len(expected)} resources from the lab in {lab_pages} pages, "
           "and all five from a server whose cursors include the empty string and one with spaces, % and = (copied "
           "as they came), with an empty page that still had a nextCursor, and a resource listed twice.")


def _judge(story, expected, request, outcome):
    if isinstance(outcome.error, TooManySends):
        dropped = _dropped_empty_cursor(request.sent)
        if dropped is not None:
            failed(f"{story}, a page's nextCursor was \"\" (an empty string), and your request {dropped} after it "
                   f"sent no cursor, so the server started again from the first page; your function sent "
                   f"{MAX_REQUESTS} requests and was still going.",
                   hint="An empty string is a cursor: `if cursor:` and `cursor or None` drop it. Test for the key, or "
                        "`is not None`, and send {\"cursor\": \"\"}.")
            return False
        failed(f"{story}, your function sent {MAX_REQUESTS} requests and was still going.",
               hint="Send the cursor of the latest page each time, and stop when a result has no nextCursor.")
        return False
    if not request.sent:
        failed(f"{story}, your function sent nothing.", hint="Start with request(\"resources/list\") and no cursor.")
        return False
    for number, (method, params, message) in enumerate(request.sent, start=1):
        if method != "resources/list":
            failed(f"{story}, request {number} was {method!r}; every page is a resources/list.")
            return False
        if isinstance(params, dict) and "cursor" in params and not isinstance(params["cursor"], str):
            failed(f"{story}, request {number} sent the cursor {short(params['cursor'])}; a cursor is a string.",
                   server=server_said(message),
                   hint="The first page has no cursor: leave the key out rather than send null.",
                   more="Send {\"cursor\": ...} only with a nextCursor the server gave you.")
            return False
        if isinstance(message, dict) and "error" in message:
            cursor = params.get("cursor") if isinstance(params, dict) else None
            issued = _issued_cursors(request.sent[: number - 1])
            what = "a cursor the server never issued" if cursor not in issued else "a cursor"
            changed = _how_changed(cursor, issued[-1]) if issued else None
            failed(f"{story}, request {number} sent {what}: {short(cursor)}"
                   + (f", the cursor {short(issued[-1])} {changed}." if changed else "."), server=server_said(message),
                   hint="Copy nextCursor from the reply exactly as it came: never build, cut or change a cursor. "
                        "A cursor is opaque: its spaces, % and = are part of it.")
            return False
    if outcome.error:
        failed(f"{story}, your function raised {outcome.error_text}",
               hint="The last page has no nextCursor at all: test whether the key is there before you read it.")
        return False
    got = outcome.value
    if got == expected:
        return True
    issued = _issued_cursors(request.sent)
    last_reply = request.sent[-1][2].get("result", {}) if isinstance(request.sent[-1][2], dict) else {}
    if "nextCursor" in last_reply:
        cursor = last_reply["nextCursor"]
        if cursor == "":
            failed(f"{story}, a page's nextCursor was \"\" (an empty string), and your function stopped there.",
                   hint="An empty string is a cursor; only a missing nextCursor ends the list. Test for the key, "
                        "not for a true value.")
        elif last_reply.get("resources") == []:
            failed(f"{story}, your function stopped after {len(request.sent)} page(s): the last one held no "
                   f"resources, but it had nextCursor {shown(cursor, 40)}.",
                   hint="A page may be empty and the list still go on: only a missing nextCursor ends it.")
        else:
            failed(f"{story}, your function stopped after {len(request.sent)} page(s), though the last one had "
                   f"nextCursor {short(cursor, 40)}.",
                   hint="While a result has nextCursor, send resources/list again with {\"cursor\": <that string>}.")
        return False
    if isinstance(got, list) and got and all(isinstance(item, list) for item in got):
        failed(f"{story}, you returned a list of {len(got)} pages; return one list of resources.",
               hint="Add each page's resources to one list, in order.")
        return False
    repeated = _merged_repeats(got, expected)
    if repeated:
        failed(f"{story}, you returned {len(got)} resources; the pages hold {len(expected)}: {repeated} came on two "
               "pages (the list changed while you read it, and the second one is renamed), and you kept it once.",
               hint="Return the resources of every page as they came, each page's in full: whether one uri seen "
                    "twice is one resource is for the caller to decide.")
        return False
    count = len(got) if isinstance(got, list) else None
    failed(f"{story}, you returned {short(got, 120)}"
           + (f" ({count} items)" if count is not None else "")
           + f"; the pages hold {len(expected)} resources, {len(issued)} cursor(s) followed.",
           hint="Return the resource objects of every page, in the order the pages came, each once.")
    return False


def _how_changed(cursor, issued):
    """How the cursor sent differs from the last one issued, in a few words, or None."""
    if not isinstance(cursor, str):
        return None
    for change, words in ((str.strip, "stripped of its spaces"), (lambda c: c.strip("="), "stripped of its '='"),
                          (lambda c: c.rstrip("="), "stripped of its '='"), (unquote, "URL-decoded"),
                          (unquote_plus, "URL-decoded"), (quote, "URL-encoded"), (str.lower, "in lower case")):
        if cursor != issued and change(issued) == cursor:
            return words
    return None


def _merged_repeats(got, expected):
    """The uri listed twice that the learner's list holds once (every other resource there), or None."""
    if not (isinstance(got, list) and all(isinstance(item, dict) for item in got)) or len(got) >= len(expected):
        return None
    uris = [item.get("uri") for item in expected]
    twice = [uri for uri in dict.fromkeys(uris) if uris.count(uri) > 1]
    mine = [item.get("uri") for item in got]
    if twice and set(mine) == set(uris) and all(mine.count(uri) == 1 for uri in twice):
        return twice[0]
    return None


def _dropped_empty_cursor(sent):
    """The number of the first request that followed a nextCursor of "" without sending it, or None."""
    for number, ((_, _, message), (_, params, _)) in enumerate(zip(sent, sent[1:]), start=2):
        issued = (message.get("result") or {}).get("nextCursor") if isinstance(message, dict) else None
        cursor = params.get("cursor") if isinstance(params, dict) else None
        if issued == "" and cursor is None:
            return number
    return None


def _issued_cursors(sent):
    return [message["result"]["nextCursor"] for _, _, message in sent
            if isinstance(message, dict) and "nextCursor" in message.get("result", {})]
