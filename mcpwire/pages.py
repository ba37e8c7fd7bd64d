"""Follow `nextCursor` through a paginated list: tools/list, resources/list, resources/templates/list, prompts/list.

The cursor is opaque: it is copied from one reply into the next request, never read,
built or changed. A page without `nextCursor` (or with `null`) is the last one; an
empty string is a real cursor and is followed like any other.
"""

from .errors import WireError

ITEMS = {
    "tools/list": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
    "prompts/list": "prompts",
}
MAX_PAGES = 100


class PaginationError(WireError):
    """A page came back as an error, or the cursors went round in a circle or never ended (.replies so far)."""

    def __init__(self, message, replies):
        super().__init__(message)
        self.replies = list(replies)


def pages(wire, method, params=None, *, max_pages=MAX_PAGES):
    """Every page of a list as the Reply it came in; raises PaginationError instead of looping forever."""
    replies, seen = [], set()
    cursor = None
    while True:
        page_params = dict(params or {})
        if cursor is not None:
            page_params["cursor"] = cursor
        reply = wire.request(method, page_params)
        replies.append(reply)
        if reply.error is not None or not isinstance(reply.result, dict):
            raise PaginationError(f"page {len(replies)} of {method} failed: {reply.text}", replies)
        cursor = reply.result.get("nextCursor")
        if cursor is None:
            return replies
        if cursor in seen:
            raise PaginationError(f"{method} sent the cursor {cursor!r} a second time: a cycle", replies)
        if len(replies) >= max_pages:
            raise PaginationError(f"{method} still had more after {max_pages} pages", replies)
        seen.add(cursor)


def list_all(wire, method, params=None, *, max_pages=MAX_PAGES):
    """All the items of a paginated list, in order, following every cursor."""
    key = ITEMS[method]
    return [item for reply in pages(wire, method, params, max_pages=max_pages) for item in reply.result[key]]
