"""Opaque, tamper-evident cursors for paginated lists.

A cursor names the last item of the page before it (keyset pagination), so a note
created or deleted between two pages shifts nothing. The position is followed by a
short keyed checksum and the whole is base64url-encoded: a client cannot build or
edit a cursor that the server will accept. The key is fixed so that the same notes
give the same cursors on every run (the lessons' stored outputs depend on it); it
guards integrity, not secrecy: a cursor only ever names a position in a public list.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac

KEY = b"notes-lab resources/list cursor v1"
CHECKSUM_BYTES = 8


class InvalidCursor(ValueError):
    """A cursor this server did not issue, or one that was changed on the way."""


def checksum(position: bytes) -> bytes:
    return hmac.new(KEY, position, hashlib.sha256).digest()[:CHECKSUM_BYTES]


def encode_cursor(after: str) -> str:
    """The cursor for the page that starts after the item `after`."""
    position = after.encode()
    return base64.urlsafe_b64encode(position + checksum(position)).decode().rstrip("=")


def decode_cursor(cursor: str) -> str:
    """The item a cursor starts after; InvalidCursor if this server did not issue it."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except (binascii.Error, ValueError):
        raise InvalidCursor("not a cursor this server issued") from None
    position, mac = raw[:-CHECKSUM_BYTES], raw[-CHECKSUM_BYTES:]
    if len(raw) <= CHECKSUM_BYTES or not hmac.compare_digest(mac, checksum(position)):
        raise InvalidCursor("not a cursor this server issued, or it was changed")
    try:
        return position.decode()
    except UnicodeDecodeError:
        raise InvalidCursor("not a cursor this server issued") from None
