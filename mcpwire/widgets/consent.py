"""The consent prompt a host shows before it runs a tool call a model proposed.

A click cannot be awaited inside a running cell (the kernel handles the click only
after the cell ends), so the decision reaches the caller through `on_decision`
and stays readable as `.decision` / `.approved`.
"""

import html
import json

import ipywidgets as widgets

from . import panels

APPROVED, DENIED = "approved", "denied"

# Tool annotations worth a warning or a reassurance, as a host would show them.
HINT_LABELS = {
    "destructiveHint": ("mw-fail", "destructive: may delete or overwrite data"),
    "readOnlyHint": ("mw-ok", "read-only: changes nothing"),
    "openWorldHint": ("mw-bad", "open world: reaches beyond this server"),
}


class ConsentPrompt(widgets.VBox):
    """Approve / Deny for one proposed tool call. `on_decision(approved: bool)` is called once, on the click."""

    def __init__(self, tool, arguments=None, server="", *, annotations=None, on_decision=None):
        self.tool = tool
        self.arguments = dict(arguments or {})
        self.server = server if isinstance(server, str) else panels.wire_label(server)
        self.decision = None
        self._callbacks = [on_decision] if on_decision is not None else []
        self.approve_button = widgets.Button(description="Approve", button_style="success", icon="check")
        self.deny_button = widgets.Button(description="Deny", button_style="danger", icon="times")
        self.verdict = widgets.HTML()
        self.approve_button.on_click(lambda _: self._decide(APPROVED))
        self.deny_button.on_click(lambda _: self._decide(DENIED))
        super().__init__([widgets.HTML(panels.STYLE), widgets.HTML(self._proposal_html(annotations or {})),
                          widgets.HBox([self.approve_button, self.deny_button]), self.verdict])
        self.add_class("mcpwire")
        self.add_class("mcpwire-consent")
        self.verdict.add_class("mcpwire-verdict")

    @classmethod
    def for_frame(cls, frame, server="", **kwargs):
        """A prompt for a `tools/call` request frame."""
        params = frame.get("params") or {}
        return cls(params.get("name"), params.get("arguments"), server, **kwargs)

    def _proposal_html(self, annotations):
        hints = "".join(f'<div class="{tone}">{"" if tone == "mw-ok" else "⚠ "}{label}</div>'
                        for key, (tone, label) in HINT_LABELS.items() if annotations.get(key))
        where = f" on <b>{html.escape(self.server)}</b>" if self.server else ""
        arguments = html.escape(json.dumps(self.arguments, indent=2, ensure_ascii=False))
        return (f"<div><b>The model wants to call</b> <code>{html.escape(str(self.tool))}</code>{where}</div>"
                f"{hints}<pre>{arguments}</pre>")

    @property
    def approved(self):
        """True or False once decided, None while waiting."""
        return None if self.decision is None else self.decision == APPROVED

    def on_decision(self, callback):
        """Call `callback(approved)` when the user decides (at once if they already have)."""
        self._callbacks.append(callback)
        if self.decision is not None:
            callback(self.approved)

    def _decide(self, decision):
        if self.decision is not None:
            return
        self.decision = decision
        self.approve_button.disabled = self.deny_button.disabled = True
        if decision == APPROVED:
            self.verdict.value = (f'<div class="mw-ok">✓ Approved: <code>{html.escape(str(self.tool))}</code> '
                                  "is sent to the server.</div>")
        else:
            self.verdict.value = (f'<div class="mw-fail">✗ Denied: <code>{html.escape(str(self.tool))}</code> '
                                  "is not sent; the model is told the user declined.</div>")
        for callback in self._callbacks:
            callback(self.approved)

    def __repr__(self):
        # What a notebook stores as text/plain: nothing that changes between runs.
        return f"ConsentPrompt({self.tool!r}, {self.decision or 'undecided'})"
