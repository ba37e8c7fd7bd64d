"""Exercise 22's check rows share these: the right report with one step swapped for the variant a row is about, and a
right report written by hand with subprocess."""

import json
import queue
import subprocess
import threading

from checks.ex22_field_trip import DEFAULTS
from mcpwire import StdioWire, WireTimeout, count_tokens, frames

MODERN_ERRORS = (-32020, -32021, -32022)


def style(reply):
    return reply.code if reply.error else ("isError" if reply.is_tool_error else "result")


def first_requiring(tools):
    return next(tool for tool in tools if tool["inputSchema"].get("required"))


def probe_waiting(wire, **id):
    """The probe's reply, or None when none comes within the probe's own wait (SDK 2.3.0 waits 10 s too)."""
    try:
        return wire.request("server/discover", timeout=10, **id)
    except WireTimeout:
        return None


def legacy_by_the_spec(reply):
    return reply is None or not ((reply.ok and "resultType" in reply.result) or reply.code in MODERN_ERRORS)


def report_with(command, *, probe=probe_waiting, fallback=legacy_by_the_spec, handshake=("initialize", "notifications/initialized"), bare=True,
                initialize=frames.legacy_initialize, modern_frame=frames.request, ids=None,
                hint=lambda tool, name, default: tool.get("annotations", {}).get(name, default),
                pick=first_requiring, bad_call=lambda tool: {"name": tool["name"], "arguments": {}},
                error_style=style, cost=lambda wire, listing: (wire.transcript[-1].bytes_down, count_tokens(listing.text))):
    """The right report, with one step swapped for the variant a test is about. ids: an iterator of the ids for every
    request after the probe (the wire's next free integer when None)."""
    with StdioWire(command, timeout=30) as wire:
        def next_id():
            return wire.next_id if ids is None else next(ids)

        legacy = fallback(probe(wire))
        if legacy and "initialize" in handshake:
            wire.send(initialize(id=next_id()))
        if legacy and "notifications/initialized" in handshake:
            wire.send(frames.legacy_initialized())

        def call(method, params=None):
            if legacy and bare:
                return wire.send(frames.legacy_request(method, params, id=next_id()))
            return wire.send(modern_frame(method, params, id=next_id()))

        listing = call("tools/list")
        tools_list = cost(wire, listing)
        tools = listing.result["tools"]
        return {"era": "2025-11-25" if legacy else "2026-07-28",
                "hints": {tool["name"]: {name: hint(tool, name, default) for name, default in DEFAULTS.items()} for tool in tools},
                "unknown_tool": error_style(call("tools/call", {"name": "no_such_tool", "arguments": {}})),
                "bad_arguments": error_style(call("tools/call", bad_call(pick(tools)))),
                "tools_list": tools_list}


def report_by_hand(command, *, calls_open=True):
    # Right, written differently: raw lines with subprocess, a fresh process for the handshake, hints by dict merge,
    # silence read as a queue that stays empty. With calls_open=False the process for the calls gets no handshake.
    def session(lines, wait=30):
        # Reads until every request is answered (or nothing more comes within wait) before closing stdin: a bare SDK
        # server may drop what is open at EOF.
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        process.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
        process.stdin.flush()
        replies = queue.Queue()
        threading.Thread(target=lambda: [replies.put(json.loads(text)) for text in process.stdout], daemon=True).start()
        waiting, answers = {line["id"] for line in lines if "id" in line}, []
        try:
            while waiting:
                answers.append(replies.get(timeout=wait))
                waiting.discard(answers[-1].get("id"))
        except queue.Empty:
            pass
        process.stdin.close()
        process.wait(timeout=30)
        return answers

    envelope = frames.envelope()
    # 20 s, not the 10 s of SDK 2.3.0: what this row is about is the writing, and a test run loads the machine heavily.
    answered = session([{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": envelope}}], wait=20)
    modern = bool(answered) and ("resultType" in answered[0].get("result", {})
                                 or answered[0].get("error", {}).get("code") in MODERN_ERRORS)
    opening = [] if modern else [frames.legacy_initialize(id=0), frames.legacy_initialized()]
    params = {"_meta": envelope} if modern else {}
    listed = session([*opening, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}])[-1]
    line = json.dumps(listed, separators=(",", ":"), ensure_ascii=False)
    tools = listed["result"]["tools"]
    needy = [tool["name"] for tool in tools if tool["inputSchema"].get("required")][0]
    calls = [{"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {**params, "name": name, "arguments": {}}}
             for n, name in ((1, "no_such_tool"), (2, needy))]
    answers = {answer["id"]: answer for answer in session([*(opening if calls_open else []), *calls])
               if answer.get("id") in (1, 2)}

    def kind(answer):
        return answer["error"]["code"] if "error" in answer else ("isError" if answer["result"].get("isError") else "result")

    return {"era": "2026-07-28" if modern else "2025-11-25",
            "hints": {tool["name"]: {**DEFAULTS, **{k: v for k, v in tool.get("annotations", {}).items() if k in DEFAULTS}}
                      for tool in tools},
            "unknown_tool": kind(answers[1]), "bad_arguments": kind(answers[2]),
            "tools_list": (len(line.encode()) + 1, count_tokens(line))}
