"""The HTML the widgets show: one outcome of Send, and the shared style.

Byte views mark line endings with a small LF (or CRLF, HTTP's) badge because at
this level they are part of the message. Class names starting with `mw-` are
what the browser test reads.
"""

import html
import re
import sys

from ..display import pretty

STYLE = """<style>
.mcpwire { font-size: 13px; }
.mcpwire textarea, .mcpwire select, .mcpwire pre { font-family: var(--jp-code-font-family, monospace); font-size: 12px; }
.mcpwire pre { white-space: pre-wrap; word-break: break-all; max-height: 16em; overflow: auto; margin: 2px 0 6px;
  padding: 4px 6px; background: var(--jp-layout-color2, #f5f5f5); border-radius: 3px; }
.mcpwire pre.mw-history-head { background: none; padding: 0 5px; margin: 4px 0 0; white-space: pre; }
.mcpwire .mw-eol { color: #888; font-size: 9px; border: 1px solid #bbb; border-radius: 2px; padding: 0 2px; margin-left: 2px; }
.mcpwire .mw-ok { color: #1a7f37; } .mcpwire .mw-bad { color: #b35900; } .mcpwire .mw-fail { color: #c62828; }
.mcpwire .mw-summary { font-weight: 600; margin: 4px 0; }
.mcpwire .mw-figure { font-variant-numeric: tabular-nums; }
.mcpwire table.mw-rows { border-collapse: collapse; font-family: var(--jp-code-font-family, monospace); font-size: 12px; }
.mcpwire table.mw-rows td, .mcpwire table.mw-rows th { padding: 1px 8px; text-align: right; white-space: nowrap; }
.mcpwire table.mw-rows td.mw-left, .mcpwire table.mw-rows th.mw-left { text-align: left; }
.mcpwire .mw-scroll { max-height: 20em; overflow: auto; }
</style>"""


_EOL = {"\r\n": '<span class="mw-eol">CRLF</span>\n', "\n": '<span class="mw-eol">LF</span>\n'}


def wire_bytes(data):
    """Exact bytes as HTML, line endings made visible."""
    text = html.escape(data.decode("utf-8", "replace"))
    return re.sub(r"\r?\n", lambda end: _EOL[end[0]], text)


def _figure(kind, value):
    return f'<span class="mw-figure mw-{kind}">{value}</span>'


def problem_list(problems, *, heading):
    if not problems:
        return ""
    items = "".join(f"<li>{html.escape(p)}</li>" for p in problems)
    return f'<div class="mw-bad mw-problems">{html.escape(heading)}<ul>{items}</ul></div>'


def frame_check(problems):
    """The line under the editor: valid, or what is wrong."""
    if not problems:
        return '<div class="mw-ok mw-check">✓ a valid 2026-07-28 message</div>'
    return problem_list(problems, heading=f"⚠ {len(problems)} problem{'s' * (len(problems) > 1)} "
                                          "(you can still send it: the reply is the lesson)")


def summary(outcome):
    """One line: status, resultType or error code, bytes and tokens up/down, elapsed time."""
    e, reply = outcome.exchange, outcome.reply
    parts = []
    if reply is not None and reply.status is not None:
        parts.append(f'HTTP <span class="mw-status">{reply.status}</span>')
    if reply is not None and reply.ok:
        parts.append(f'resultType <span class="mw-result-type">{html.escape(str(reply.result_type))}</span>')
    elif reply is not None and reply.error is not None:
        parts.append(f'error <span class="mw-error-code">{html.escape(str(reply.code))}</span>')
    elif outcome.failure:
        parts.append("no reply")
    if e is not None:
        parts.append(f"↑ {_figure('bytes-up', e.bytes_up)} B · {_figure('tokens-up', e.tokens_up)} tokens")
        parts.append(f"↓ {_figure('bytes-down', e.bytes_down)} B · {_figure('tokens-down', e.tokens_down)} tokens")
        parts.append(f"{_figure('elapsed', f'{e.elapsed_ms:.0f}')} ms")
    tone = "mw-fail" if outcome.failure else "mw-bad" if reply is not None and not reply.ok else "mw-ok"
    return f'<div class="mw-summary {tone}">{" · ".join(parts)}</div>'


def outcome_html(outcome):
    """Everything one Send produced, most telling first."""
    reply, e = outcome.reply, outcome.exchange
    blocks = [summary(outcome)]
    if outcome.failure:
        blocks.append(f'<div class="mw-fail mw-failure">{html.escape(outcome.failure)}</div>')
    blocks.append(problem_list(outcome.problems, heading="Sent anyway, although the frame has problems:"))
    blocks += [f'<div class="mw-bad mw-note">{html.escape(note)}</div>' for note in outcome.notes]
    if reply is not None and (reply.error is not None or reply.problem):
        blocks.append(f'<pre class="mw-fail mw-explain">{html.escape(reply.explain())}</pre>')
    if reply is not None and reply.is_tool_error:
        blocks.append('<div class="mw-bad">The tool ran and failed (isError: true): '
                      'a result for the model to read, not a protocol error.</div>')
    if e is not None:
        blocks.append(f'<div>Request bytes ({e.bytes_up}, framing {e.framing_up})</div>'
                      f'<pre class="mw-request">{wire_bytes(e.up)}</pre>')
        down = wire_bytes(e.down) if e.down else "(nothing)"
        blocks.append(f'<div>Reply bytes ({e.bytes_down}, framing {e.framing_down})</div>'
                      f'<pre class="mw-reply">{down}</pre>')
    if reply is not None and reply.notifications:
        items = "".join(f"<li><code>{html.escape(str(n.get('method')))}</code> "
                        f"{html.escape(str(n.get('params', {})))}</li>" for n in reply.notifications)
        blocks.append(f'<div class="mw-notifications">Notifications that arrived first:<ul>{items}</ul></div>')
    blocks.append(problem_list(outcome.reply_problems, heading="The reply does not match the 2026-07-28 schema:"))
    if reply is not None and reply.message is not None:
        blocks.append(f'<details><summary>Reply, readable</summary><pre>{html.escape(pretty(reply.message))}</pre>'
                      "</details>")
    return "".join(blocks)



def wire_label(wire):
    """Which transport a wire uses and where it goes, in a few words."""
    if wire.transport == "http":
        return f"Streamable HTTP · POST {wire.url}"
    command = list(wire.command)
    if command and command[0] == sys.executable:
        command[0] = "python"
    return f"stdio · {' '.join(command)}"
