"""Read a session file while the tap is still writing it: each call returns the exchanges added since.

Only whole lines are read; a line the tap is in the middle of writing waits for the next call.
"""

import html
import json

from ..transcript import Exchange


class GrowingJsonl:
    def __init__(self, path):
        self.path = path
        self._offset = 0

    def read_new(self):
        """The exchanges written since the last call (none if the file does not exist yet)."""
        try:
            with open(self.path, "rb") as source:
                source.seek(self._offset)
                data = source.read()
        except FileNotFoundError:
            return []
        complete = data[:data.rfind(b"\n") + 1]
        self._offset += len(complete)
        return [Exchange.from_dict(json.loads(line)) for line in complete.splitlines() if line.strip()]


def method_totals(transcript):
    """Per method, in order of first appearance: exchanges, bytes and tokens up and down."""
    totals = {}
    for e in transcript:
        row = totals.setdefault(e.method or "(raw)", dict.fromkeys(
            ("exchanges", "bytes_up", "bytes_down", "tokens_up", "tokens_down"), 0))
        row["exchanges"] += 1
        for key in ("bytes_up", "bytes_down", "tokens_up", "tokens_down"):
            row[key] += getattr(e, key)
    return totals


def method_totals_html(transcript):
    rows = "".join(f"<tr><td class='mw-left'>{html.escape(method)}</td><td>{row['exchanges']}</td>"
                   f"<td>↑{row['bytes_up']} ↓{row['bytes_down']}</td><td>↑{row['tokens_up']} ↓{row['tokens_down']}</td></tr>"
                   for method, row in method_totals(transcript).items())
    return ("<table class='mw-rows'><tr><th class='mw-left'>method</th><th>exchanges</th><th>bytes</th>"
            f"<th>tokens</th></tr>{rows}</table>")
