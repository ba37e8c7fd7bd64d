"""Notebook widgets: the frame composer, a transcript view and a consent prompt (ipywidgets)."""

from .composer import FrameComposer
from .consent import ConsentPrompt
from .transcript_view import TranscriptView

__all__ = ["ConsentPrompt", "FrameComposer", "TranscriptView"]
