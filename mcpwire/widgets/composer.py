"""The frame composer: pick a method, edit the frame, send it, see every byte and what it cost.

Sending runs on a worker thread, so the notebook stays responsive; the wire's
timeout turns a silent server into a visible message. `send()` returns a Future
whose result (an `Outcome`) is ready only after the widgets show it. The composer
uses only what every wire offers (`mcpwire.wire.Wire`), so it works the same on
both transports.
"""

import html
import json
from concurrent.futures import ThreadPoolExecutor

import ipywidgets as widgets

from ..stdio import StdioWire
from ..streamable_http import HttpWire
from ..transcript import Transcript
from . import panels, sending
from .templates import RAW, client_methods, template_text

NBSP = "\u00a0"
STARTUP_S = 30.0  # the first Send to a server the composer started may wait this long: starting takes a while
HISTORY_HEAD = f"{'#':>3}  {'method':<26} {'status':<22} {'bytes up':>10}  {'bytes down':>11}  {'tokens ↑/↓':>11}"


def _start(transport):
    if transport == "stdio":
        return StdioWire.labserver()
    if transport == "http":
        return HttpWire.labserver()
    raise ValueError(f"transport must be 'stdio' or 'http', not {transport!r}")


def _started_again(closed):
    """A server like the one behind a closed wire: its own command again, a lab with a fresh copy of the sample notes.

    Not the same notes folder: the lesson that made it may have removed it.
    """
    command = getattr(closed, "command", None)
    if not command:
        return _start(closed.transport)
    fresh = _without_notes_folder(command)
    if closed.transport == "http":
        given = fresh[fresh.index("--until-stdin-closes") + 1:]  # what labserver() adds stays its own
        return HttpWire.labserver(*given)
    return StdioWire(fresh)


def _without_notes_folder(command):
    kept, skip = [], False
    for arg in command:
        if skip:
            skip = False
        elif arg == "--notes":
            skip = True
        elif not arg.startswith("--notes="):
            kept.append(arg)
    return kept


def _header_lines(headers):
    return "\n".join(f"{name}: {value}" for name, value in headers.items())


class FrameComposer(widgets.VBox):
    """A playground for one wire. Without `wire`, starts the lab server over `transport` and stops it in `close()`.

    Opens on the template for `method`, or on `frame` (a dict, or a raw line as a str) when given.
    """

    def __init__(self, wire=None, *, transport="stdio", method="tools/list", frame=None, timeout=5.0):
        self.wire = wire if wire is not None else _start(transport)
        self._owns_wire = wire is None
        self._starting = wire is None  # no reply from the server we started yet
        self.history = []  # one Outcome per Send, oldest first
        self.last_send = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="frame-composer")
        self._quiet = False  # set while the composer itself fills widgets, so observers do not react
        self._listing = False  # set while the history list is rebuilt (that resets its selection)
        self._derived_headers = {}
        self._last_derived_text = ""
        self._saved_modes = []  # (picker value, headers text) per history entry

        self.method_picker = widgets.Dropdown(options=[*client_methods(), RAW], value=method, description="Method")
        self.timeout_box = widgets.BoundedFloatText(value=timeout, min=0.1, max=600, step=0.5,
                                                    description="Timeout (s)", layout=widgets.Layout(width="11em"))
        self.send_button = widgets.Button(description="Send", button_style="primary", icon="paper-plane",
                                          tooltip="Send the frame exactly as written")
        self.editor = widgets.Textarea(layout=widgets.Layout(width="100%", height="17em"))
        self.check_view = widgets.HTML()
        self.headers_editor = widgets.Textarea(layout=widgets.Layout(width="100%", height="8em"))
        self.headers_note = widgets.HTML()
        self.derive_button = widgets.Button(description="Derive from the frame", icon="refresh",
                                            layout=widgets.Layout(width="auto"))
        self.status = widgets.HTML()
        self.reply_view = widgets.HTML()
        self.history_rows = widgets.Select(options=[], rows=6, layout=widgets.Layout(width="100%"))
        wide = widgets.Layout(width="auto")
        self.curl_button = widgets.Button(description="Copy as curl", icon="terminal", layout=wide)
        self.stdin_button = widgets.Button(description="Copy as stdin line", icon="keyboard-o", layout=wide)
        self.export_box = widgets.Textarea(placeholder="pick a row, then Copy as curl / stdin line",
                                           layout=widgets.Layout(width="100%", height="6em"))
        self.save_path = widgets.Text(value="composer-session.jsonl", description="File")
        self.save_button = widgets.Button(description="Save session as JSONL", icon="save", layout=wide)
        self.save_status = widgets.HTML()

        self.method_picker.observe(self._on_method, names="value")
        self.editor.observe(self._on_edit, names="value")
        self.headers_editor.observe(self._on_headers_edit, names="value")
        self.derive_button.on_click(lambda _: self._derive_headers(force=True))
        self.send_button.on_click(lambda _: self.send())
        self.history_rows.observe(self._on_history_pick, names="value")
        self.curl_button.on_click(lambda _: self._export("curl"))
        self.stdin_button.on_click(lambda _: self._export("stdin"))
        self.save_button.on_click(lambda _: self.save())

        headers_box = widgets.VBox([
            widgets.HTML("<b>HTTP headers</b> (Host and Content-Length are added when sending)"),
            self.headers_editor, widgets.HBox([self.derive_button, self.headers_note])])
        headers_box.layout.display = None if self.wire.headers_for({}) else "none"  # only HTTP has headers
        super().__init__([
            widgets.HTML(panels.STYLE),
            widgets.HTML(f'<div class="mw-transport"><b>Frame composer</b> · {panels.wire_label(self.wire)}</div>'),
            widgets.HBox([self.method_picker, self.timeout_box, self.send_button]),
            self.editor, self.check_view, headers_box, self.status, self.reply_view,
            widgets.HTML("<b>History</b> (pick a row to load it into the editor)"),
            widgets.HTML(f"<pre class='mw-history-head'>{HISTORY_HEAD}</pre>"), self.history_rows,
            widgets.HBox([self.curl_button, self.stdin_button]), self.export_box,
            widgets.HBox([self.save_path, self.save_button, self.save_status]),
        ])
        self.add_class("mcpwire")
        self.add_class("mcpwire-composer")
        self.editor.add_class("mcpwire-frame")
        self.headers_editor.add_class("mcpwire-headers")
        self.reply_view.add_class("mcpwire-reply")
        self.history_rows.add_class("mcpwire-history")
        if frame is None:
            self._fill_template()
        else:
            self.edit(frame)

    def __repr__(self):
        # What a notebook stores as text/plain: nothing that changes between runs.
        return f"FrameComposer({self.wire.transport}, {self.method_picker.value})"

    # --- editing -------------------------------------------------------------------

    @property
    def raw(self):
        return self.method_picker.value == RAW

    def edit(self, frame):
        """Open `frame` in the editor: a dict as readable JSON (picker on its method), a str as a raw line."""
        if isinstance(frame, str):
            picked, text = RAW, frame
        else:
            method = frame.get("method")
            picked = method if method in self.method_picker.options else self.method_picker.value
            text = json.dumps(frame, indent=2, ensure_ascii=False)
        self._pick_quietly(picked)
        self.editor.value = text

    def _pick_quietly(self, picked):
        """Set the method picker without replacing the editor's text by a template."""
        self._quiet = True
        try:
            self.method_picker.value = picked
        finally:
            self._quiet = False

    def _fill_template(self):
        self.editor.value = template_text(self.method_picker.value, self.wire.next_id)

    def _on_method(self, change):
        if not self._quiet:
            self._fill_template()

    def _on_edit(self, change):
        _, problems = sending.check(self.editor.value)
        self.check_view.value = panels.frame_check(problems)
        self._derive_headers()

    def _derive_headers(self, force=False):
        """Refresh the header list from the frame, unless the learner has edited it (then only on request)."""
        frame = sending.parse(self.editor.value)
        self._derived_headers = self.wire.headers_for(frame if isinstance(frame, dict) else {})
        derived_text = _header_lines(self._derived_headers)
        if force or not self._headers_edited():
            self._quiet = True
            try:
                self.headers_editor.value = derived_text
            finally:
                self._quiet = False
            self._last_derived_text = derived_text
        self._on_headers_edit(None)

    def _headers_edited(self):
        return self.headers_editor.value != self._last_derived_text

    def _on_headers_edit(self, change):
        if self._quiet:
            return
        _, problems = sending.parse_header_lines(self.headers_editor.value)
        if problems:
            self.headers_note.value = panels.problem_list(problems, heading="These lines are ignored:")
        elif self._headers_edited():
            self.headers_note.value = '<span class="mw-bad">edited by hand: Send uses exactly this list</span>'
        else:
            self.headers_note.value = '<span class="mw-ok">derived from the frame</span>'

    def _header_overrides(self):
        if not self._headers_edited():
            return None
        edited, _ = sending.parse_header_lines(self.headers_editor.value)
        return sending.header_overrides(self._derived_headers, edited)

    # --- sending -------------------------------------------------------------------

    def send(self):
        """Send what the editor holds, on a worker thread. Returns a Future of the Outcome."""
        text, raw = self.editor.value, self.raw
        headers, timeout = self._header_overrides(), self.timeout_box.value
        mode = (self.method_picker.value, self.headers_editor.value)
        self.send_button.disabled = True
        self.status.value = f"<i>sending… (waiting up to {timeout:g} s for the reply)</i>"
        self.last_send = self._executor.submit(self._send_and_show, text, raw, headers, timeout, mode)
        return self.last_send

    def _send_and_show(self, text, raw, headers, timeout, mode):
        try:
            restarted = self._restart_if_closed()
            outcome = sending.send(self.wire, text, raw=raw, headers=headers,
                                   timeout=max(timeout, STARTUP_S) if self._starting else timeout)
            self._starting = self._starting and outcome.reply is None
            outcome.notes[:0] = [restarted] if restarted else []
            self.reply_view.value = panels.outcome_html(outcome)
            self.status.value = ""
            self._remember(outcome, mode)
            return outcome
        except Exception as error:  # shown, not lost on the worker thread
            failure = html.escape(f"✗ the composer failed: {type(error).__name__}: {error}")
            self.status.value = f'<span class="mw-fail">{failure}</span>'
            raise
        finally:
            self.send_button.disabled = False

    def _restart_if_closed(self):
        """After Run All, a Try-it composer's wire was closed by the lesson's last cell: start that server again.

        The same command (a lab keeps its --auth, --apps or --tasks, a reference server stays itself), so the
        lesson's question still applies; a lab gets a fresh copy of the sample notes.
        """
        if not self.wire.closed:
            return None
        closed, self.wire = self.wire, _started_again(self.wire)
        if self._owns_wire:
            closed.close()
        self._owns_wire = self._starting = True
        return (f"The wire this composer was given is closed (a lesson's last cell closes its servers), so it started "
                f"that server again over {closed.transport} as one of its own (a lab with a fresh copy of the sample notes); that server "
                "stops when the composer closes. What the old server held (notes you wrote, a legacy session) is not there.")

    def _remember(self, outcome, mode):
        self.history.append(outcome)
        self._saved_modes.append(mode)
        self._listing = True
        try:
            self.history_rows.options = [(self._row_label(n, o), n) for n, o in enumerate(self.history)]
            self.history_rows.value = None
        finally:
            self._listing = False

    @staticmethod
    def _row_label(number, outcome):
        e, reply = outcome.exchange, outcome.reply
        if reply is not None and reply.error is not None:
            status = f"error {reply.code}"
        elif reply is not None and reply.ok:
            status = reply.result_type
        else:
            status = "no reply" if outcome.failure else "-"
        if reply is not None and reply.status is not None:
            status = f"{reply.status} {status}"
        up, down = (e.bytes_up, e.bytes_down) if e else (0, 0)
        tokens = f"{e.tokens_up}/{e.tokens_down}" if e else "-"
        row = f"{number + 1:>3}  {outcome.method or '(raw)':<26} {status:<22} ↑ {up:>6} B  ↓ {down:>7} B  {tokens:>11}"
        return row.replace(" ", NBSP)  # a <select> collapses runs of spaces; the columns must stay aligned

    # --- history -------------------------------------------------------------------

    @property
    def transcript(self):
        """The exchanges this composer sent, as a Transcript (for TranscriptView, ledgers, JSONL)."""
        return Transcript(o.exchange for o in self.history if o.exchange is not None)

    def _on_history_pick(self, change):
        if self._listing or change["new"] is None:
            return
        self.load(change["new"])

    def load(self, index):
        """Put history entry `index` back into the editor (and its headers, over HTTP)."""
        picked, headers_text = self._saved_modes[index]
        self._pick_quietly(picked)
        self.editor.value = self.history[index].text
        self.headers_editor.value = headers_text
        self._on_headers_edit(None)

    def _export(self, kind):
        index = self.history_rows.value
        if index is None:
            self.export_box.value = "Pick a row of the history first."
            return
        exchange = self.history[index].exchange
        if exchange is None:
            self.export_box.value = "Nothing went on the wire for this row."
            return
        one = Transcript([exchange])
        self.export_box.value = one.as_curl(0) if kind == "curl" else one.as_stdin_line(0)

    def save(self, path=None):
        """Write the session's exchanges as JSONL (one exchange per line, bytes exact)."""
        path = path or self.save_path.value
        transcript = self.transcript
        transcript.to_jsonl(path)
        self.save_status.value = f"saved {len(transcript)} exchanges to {path}"
        return path

    # --- shutdown ------------------------------------------------------------------

    def close(self):
        """Close the widget; stop the server if the composer started it. Never waits for a send in flight."""
        # ipywidgets also calls close() from __del__, even when __init__ failed half-way.
        if hasattr(self, "_executor"):
            self._executor.shutdown(wait=False, cancel_futures=True)
        if getattr(self, "_owns_wire", False):
            self.wire.close()
        super().close()
