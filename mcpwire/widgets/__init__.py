"""Notebook widgets: the frame composer, a transcript view and a consent prompt (ipywidgets).

In a lesson::

    from mcpwire.widgets import ConsentPrompt, FrameComposer, TranscriptView

    composer = FrameComposer(transport="stdio")     # or FrameComposer(wire), wire = StdioWire/HttpWire
    composer                                        # last line of the cell shows it
    FrameComposer(wire, frame=frame)                # a "Try it" cell: open on the frame just sent
    outcome = composer.send().result()              # press Send from code (waits for the reply)
    TranscriptView(wire)                            # every exchange on a wire, arrows, bytes, tokens
    ConsentPrompt("delete_note", {"note_id": "welcome"}, wire, on_decision=print)

A composer whose wire is closed by the time Send is pressed (Run All ran the lesson's
last cell, which closes its servers) starts that server again (the same command; a lab gets fresh sample notes)
and says so.

Displayed, each stores a short text/plain line with nothing volatile in it
(e.g. `FrameComposer(stdio, tools/list)`), so nbval can compare that cell.
"""

from .composer import FrameComposer
from .consent import ConsentPrompt
from .transcript_view import TranscriptView

__all__ = ["ConsentPrompt", "FrameComposer", "TranscriptView"]
