"""Check a frame or reply against the 2026-07-28 schema (placeholder, filled in next)."""


def validate(message, *, method=None):
    return []
