"""Deterministic text and HTML views of frames, replies and transcripts for notebooks."""

import html
import json

from .frames import dumps


def pretty(message):
    """Readable view: key-sorted, indent 2 (the wire order is shown by the wire text)."""
    return json.dumps(message, indent=2, sort_keys=True, ensure_ascii=False)


def frame_text(frame, arrow="→"):
    """The exact wire text, then the readable view."""
    return f"{arrow} {dumps(frame)}\n{pretty(frame)}"


def as_text(thing):
    """The text `show` prints: objects with `display_text()` render themselves, dicts render as frames."""
    if hasattr(thing, "display_text"):
        return thing.display_text()
    if isinstance(thing, dict):
        return frame_text(thing)
    if isinstance(thing, (list, tuple)):
        return "\n\n".join(as_text(item) for item in thing)
    return str(thing)


class ShownAsText:
    """For a class with `display_text()`: repr() and IPython's pretty printer both show that text."""

    def __repr__(self):
        return self.display_text()

    def _repr_pretty_(self, printer, cycle):
        printer.text(self.display_text())


def as_html(thing):
    return f"<pre>{html.escape(as_text(thing))}</pre>"


def show(thing):
    """Print a frame, reply or transcript as wire text plus a readable view."""
    print(as_text(thing))
