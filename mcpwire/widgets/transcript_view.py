"""A compact, scrollable view of a Transcript: one row per message, arrows for direction.

→ is a message we sent, ← one that came back. Bytes include framing (what crossed
the wire); tokens count the JSON payloads (what a model would read).
"""

import html
import json

import ipywidgets as widgets

from ..transcript import Transcript
from . import panels

PREVIEW_CHARS = 90


def _what_came_back(payload):
    try:
        message = json.loads(payload)
    except ValueError:
        return "not JSON"
    except RecursionError:
        return "nested too deeply"
    if not isinstance(message, dict):
        return "not an object"
    if isinstance(message.get("error"), dict):
        return f"error {message['error'].get('code')}"
    if isinstance(message.get("result"), dict):
        return message["result"].get("resultType", "result")
    return message.get("method") or "?"


def _preview(payloads):
    text = " ".join(payloads)
    short = text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS - 1] + "…"
    return f'<td class="mw-left" title="{html.escape(text)}">{html.escape(short)}</td>'


def rows_html(transcript):
    """The table: a → row for what went up, a ← row for what came down, then the totals."""
    head = ("<tr><th>#</th><th class='mw-left'></th><th class='mw-left'>method</th><th>id</th>"
            "<th class='mw-left'>status</th><th>bytes</th><th>tokens</th><th class='mw-left'>payload</th></tr>")
    rows = []
    for number, e in enumerate(transcript, start=1):
        method = html.escape(e.method or "(raw)")
        shown_id = html.escape("-" if e.id is None else json.dumps(e.id))
        if e.up:
            rows.append(f"<tr class='mw-up'><td>{number}</td><td>→</td><td class='mw-left'>{method}</td>"
                        f"<td>{shown_id}</td><td></td><td>{e.bytes_up}</td><td>{e.tokens_up}</td>"
                        f"{_preview(e.up_payloads)}</tr>")
        if e.down:
            status = _what_came_back(e.down_payloads[-1]) if e.down_payloads else "-"
            if e.status is not None:
                status = f"{e.status} {status}"
            rows.append(f"<tr class='mw-down'><td>{'' if e.up else number}</td><td>←</td>"
                        f"<td class='mw-left'>{'' if e.up else method}</td><td>{'' if e.up else shown_id}</td>"
                        f"<td class='mw-left'>{html.escape(status)}</td><td>{e.bytes_down}</td>"
                        f"<td>{e.tokens_down}</td>{_preview(e.down_payloads)}</tr>")
        elif e.up and e.transport != "postMessage":  # a postMessage frame is recorded alone; its answer has its own row
            rows.append("<tr class='mw-down'><td></td><td>←</td><td></td><td></td>"
                        "<td class='mw-left'>(nothing)</td><td>0</td><td>0</td><td></td></tr>")
    totals = transcript.totals()
    rows.append(f"<tr class='mw-total'><td></td><td></td><td class='mw-left'><b>total</b></td><td></td><td></td>"
                f"<td>↑{totals['bytes_up']} ↓{totals['bytes_down']}</td>"
                f"<td>↑{totals['tokens_up']} ↓{totals['tokens_down']}</td><td></td></tr>")
    return f"<div class='mw-scroll'><table class='mw-rows'>{head}{''.join(rows)}</table></div>"


class TranscriptView(widgets.VBox):
    """Show a Transcript (or a list of exchanges, or a wire's transcript, which it then follows).

    Press Refresh, or call `refresh()`, to show exchanges added since.
    """

    def __init__(self, transcript, *, title="Transcript"):
        source = getattr(transcript, "transcript", transcript)  # a wire or composer has one
        self.transcript = source if isinstance(source, Transcript) else Transcript(source)
        self.title = title
        self.table = widgets.HTML()
        self.refresh_button = widgets.Button(description="Refresh", icon="refresh",
                                             layout=widgets.Layout(width="auto"))
        self.refresh_button.on_click(lambda _: self.refresh())
        super().__init__([widgets.HTML(panels.STYLE),
                          widgets.HBox([widgets.HTML(f"<b>{html.escape(title)}</b>"), self.refresh_button]),
                          self.table])
        self.add_class("mcpwire")
        self.add_class("mcpwire-transcript")
        self.refresh()

    def refresh(self):
        self.table.value = rows_html(self.transcript)

    @classmethod
    def follow(cls, path, *, title=None):
        """A view of a session file the tap is still writing (`python -m mcpwire.tap --out path`).

        Each Refresh reads the exchanges added since, and adds a table of totals per method.
        """
        return _FollowingView(path, title=title or f"Following {path}")

    def __repr__(self):
        # What a notebook stores as text/plain: nothing that changes between runs.
        count = len(self.transcript)
        return f"TranscriptView({self.title!r}, {count} exchange{'' if count == 1 else 's'})"


class _FollowingView(TranscriptView):
    def __init__(self, path, *, title):
        from ..tap.follow import GrowingJsonl
        self.source = GrowingJsonl(path)
        self.per_method = widgets.HTML()
        super().__init__(Transcript(), title=title)
        self.children = (*self.children, self.per_method)

    def refresh(self):
        from ..tap.follow import method_totals_html
        for exchange in self.source.read_new():
            self.transcript.append(exchange)
        super().refresh()
        self.per_method.value = method_totals_html(self.transcript)
