"""Charts of what MCP traffic costs: bytes on the wire and tokens in a model's context.

Each chart takes plain inputs (a Transcript, lists of numbers, a cache log), returns
its matplotlib Figure and says in a footer which tokenizer counted. Nothing is timed:
the same inputs always give the same chart. Bytes are what crossed the wire, framing
included; tokens count the JSON-RPC payloads only (framing never reaches a model).
"""

import copy

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator, StrMethodFormatter

# exchange_costs is the charts' input; it lives in costs, where a check can use it without importing matplotlib.
from .costs import TOKENIZER_NAME, count_tokens, exchange_costs, ledger  # noqa: F401
from .frames import dumps

TOKENIZER_LABEL = f"{TOKENIZER_NAME} (tiktoken, offline)"
UP_COLOR, DOWN_COLOR = "#4c72b0", "#dd8452"
PAYLOAD_COLOR, FRAMING_COLOR = "#55a868", "#c44e52"
MODERN_COLOR, LEGACY_COLOR = "#4c72b0", "#8172b3"
WITH_COLOR, WITHOUT_COLOR = "#4c72b0", "#937860"
COMMA = StrMethodFormatter("{x:,.0f}")


def tokenizer_note(tokenizer=None, tokenizer_name=None):
    """The footer naming the tokenizer: ours by default, else the given name or the callable's name."""
    if tokenizer_name is None:
        tokenizer_name = TOKENIZER_LABEL if tokenizer is None else getattr(tokenizer, "__name__", "a custom tokenizer")
    return f"tokens: {tokenizer_name}; other model families tokenize differently"


def _footer(fig, text):
    fig.text(0.01, 0.01, text, fontsize=8, color="0.35", ha="left", va="bottom")


def _finish(fig, title, footer):
    fig.suptitle(title)
    _footer(fig, footer)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


def _tokens(payloads, tokenizer):
    return sum(count_tokens(p, tokenizer) for p in payloads)


def _grouped_bars(ax, labels, ups, downs, ylabel):
    positions = range(len(labels))
    width = 0.4
    ax.bar([p - width / 2 for p in positions], ups, width, label="client → server", color=UP_COLOR)
    ax.bar([p + width / 2 for p in positions], downs, width, label="server → client", color=DOWN_COLOR)
    ax.set_xticks(list(positions), labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.yaxis.set_major_formatter(COMMA)
    ax.legend(fontsize=8)


# --- 1. one session, frame by frame ------------------------------------------------------

def frame_costs(transcript, *, by="frame", tokenizer=None, tokenizer_name=None, title=None):
    """Chart 1: bytes (top) and tokens (bottom) of each exchange, or of each method (`by="method"`), up vs down."""
    if by == "frame":
        exchanges = list(transcript)
        labels = [f"{n} {e.method or '(raw)'}" for n, e in enumerate(exchanges)]
        byte_pairs = [(e.bytes_up, e.bytes_down) for e in exchanges]
        token_pairs = [(_tokens(e.up_payloads, tokenizer), _tokens(e.down_payloads, tokenizer)) for e in exchanges]
        xlabel = "exchange (# and method)"
    elif by == "method":
        rows = ledger(transcript, tokenizer).rows
        labels = [f"{r.method} ×{r.count}" if r.count > 1 else r.method for r in rows]
        byte_pairs = [(r.bytes_up, r.bytes_down) for r in rows]
        token_pairs = [(r.tokens_up, r.tokens_down) for r in rows]
        xlabel = "method (× number of exchanges)"
    else:
        raise ValueError('by must be "frame" or "method"')
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 6.5), sharex=True)
    _grouped_bars(top, labels, [u for u, _ in byte_pairs], [d for _, d in byte_pairs],
                  "bytes on the wire (B)")
    _grouped_bars(bottom, labels, [u for u, _ in token_pairs], [d for _, d in token_pairs],
                  "tokens (payload only)")
    bottom.set_xlabel(xlabel)
    total_bytes = sum(u + d for u, d in byte_pairs)
    total_tokens = sum(u + d for u, d in token_pairs)
    title = title or f"One session: {total_bytes:,} bytes on the wire, {total_tokens:,} tokens of JSON-RPC"
    return _finish(fig, title, tokenizer_note(tokenizer, tokenizer_name))


# --- 2. the same session on several transports ----------------------------------------------

def framing_by_transport(transcripts, *, tokenizer=None, tokenizer_name=None, title=None):
    """Chart 2: one stacked bar per transport, payload bytes under framing bytes.

    `transcripts` maps a label (e.g. "stdio") to the Transcript (or list of exchanges) of one session.
    """
    labels, payloads, framings, token_counts = [], [], [], []
    for label, exchanges in transcripts.items():
        exchanges = list(exchanges)
        framing = sum(e.framing_up + e.framing_down for e in exchanges)
        total = sum(e.bytes_up + e.bytes_down for e in exchanges)
        labels.append(label)
        payloads.append(total - framing)
        framings.append(framing)
        token_counts.append(sum(_tokens(e.up_payloads, tokenizer) + _tokens(e.down_payloads, tokenizer)
                                for e in exchanges))
    fig, ax = plt.subplots(figsize=(9, 4.8))
    positions = list(range(len(labels)))
    ax.bar(positions, payloads, 0.55, label="payload: the JSON-RPC messages", color=PAYLOAD_COLOR)
    ax.bar(positions, framings, 0.55, bottom=payloads, color=FRAMING_COLOR,
           label="framing: newlines, HTTP lines and headers, SSE fields, chunk sizes")
    for x, payload, framing in zip(positions, payloads, framings):
        share = 100 * framing / (payload + framing) if payload + framing else 0
        ax.annotate(f"{payload + framing:,} B\nframing {share:.0f}%", (x, payload + framing),
                    ha="center", va="bottom", fontsize=8, xytext=(0, 2), textcoords="offset points")
    ax.set_xticks(positions, [f"{label}\n{tokens:,} payload tokens" for label, tokens in zip(labels, token_counts)],
                  fontsize=8)
    ax.set_ylabel("bytes on the wire (B)")
    ax.yaxis.set_major_formatter(COMMA)
    ax.set_ylim(0, max(p + f for p, f in zip(payloads, framings)) * 1.25 if labels else 1)
    ax.legend(fontsize=8, loc="upper left")
    title = title or "The same session on each transport: payload and framing"
    return _finish(fig, title, tokenizer_note(tokenizer, tokenizer_name))


# --- 3. tools/list as the number of tools grows ----------------------------------------------

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")


def without_descriptions(value, _names=False):
    """A copy of a tool definition (or any JSON) with every `description` removed.

    Inside `properties` (and other maps of names) the keys are argument names, so an
    argument that happens to be called "description" stays.
    """
    if isinstance(value, list):
        return [without_descriptions(item) for item in value]
    if not isinstance(value, dict):
        return value
    return {key: without_descriptions(item, _names=key in _SCHEMA_MAPS and not _names)
            for key, item in value.items() if _names or key != "description"}


def _renamed(tool, name):
    tool = copy.deepcopy(tool)
    old = tool["name"]
    tool["name"] = name
    schema = tool.get("inputSchema")
    if isinstance(schema, dict) and schema.get("title") == f"{old}Arguments":
        schema["title"] = f"{name}Arguments"  # what the SDK would generate for a function of that name
    return tool


def grown_tools_list(reply_message, count, *, descriptions=True):
    """The exact text of a tools/list reply holding `count` tools.

    The tools are the server's own definitions from `reply_message` (a parsed tools/list
    response), repeated under numbered names (`search_notes_2`, ...) until there are
    `count`; everything else in the reply stays as the server wrote it.
    With `descriptions=False` every description is dropped (tool and schema fields).
    """
    tools = reply_message["result"]["tools"]
    grown = [tool if n < len(tools) else _renamed(tool, f"{tool['name']}_{n // len(tools) + 1}")
             for n, tool in ((n, tools[n % len(tools)]) for n in range(count))]
    if not descriptions:
        grown = [without_descriptions(tool) for tool in grown]
    message = copy.deepcopy(reply_message)
    message["result"]["tools"] = grown
    return dumps(message)


def tools_list_series(reply_message, counts):
    """{"with descriptions": [reply text per count], "without descriptions": [...]} for `tools_list_growth`."""
    return {
        "with descriptions": [grown_tools_list(reply_message, n) for n in counts],
        "without descriptions": [grown_tools_list(reply_message, n, descriptions=False) for n in counts],
    }


def tools_list_growth(counts, series, *, tokenizer=None, tokenizer_name=None, title=None):
    """Chart 3: size of the tools/list reply in bytes (left) and tokens (right) against the number of tools.

    `series` maps a label to one reply text per entry of `counts`.
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    colors = [WITH_COLOR, WITHOUT_COLOR, "#55a868", "#c44e52"]
    for (label, texts), color in zip(series.items(), colors):
        sizes = [len(text.encode("utf-8")) for text in texts]
        tokens = [count_tokens(text, tokenizer) for text in texts]
        left.plot(counts, sizes, marker=".", label=label, color=color)
        right.plot(counts, tokens, marker=".", label=label, color=color)
        left.annotate(f"{sizes[-1]:,}", (counts[-1], sizes[-1]), fontsize=8, xytext=(-4, 4),
                      textcoords="offset points", ha="right")
        right.annotate(f"{tokens[-1]:,}", (counts[-1], tokens[-1]), fontsize=8, xytext=(-4, 4),
                       textcoords="offset points", ha="right")
    for ax, unit in ((left, "bytes (B)"), (right, "tokens")):
        ax.set_xlabel("tools in the reply")
        ax.set_ylabel(f"tools/list reply, {unit}")
        ax.yaxis.set_major_formatter(COMMA)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    title = title or "tools/list grows with every tool, and descriptions are much of it"
    return _finish(fig, title, tokenizer_note(tokenizer, tokenizer_name))


# --- 4. the per-request envelope against the legacy handshake ---------------------------------

def cumulative(setup, per_request, requests):
    """Running totals of (bytes, tokens) after 0, 1, ... `requests` requests.

    `setup` is paid once before the first request; `per_request` is cycled when
    more requests are asked for than were measured.
    """
    total_bytes = sum(b for b, _ in setup)
    total_tokens = sum(t for _, t in setup)
    running = [(total_bytes, total_tokens)]
    for n in range(requests):
        size, tokens = per_request[n % len(per_request)]
        total_bytes += size
        total_tokens += tokens
        running.append((total_bytes, total_tokens))
    return running


def crossing(modern, legacy, handshake, *, modern_setup=(), limit=10_000):
    """After how many requests the two running totals swap order, for bytes and for tokens (None if never).

    Usually the modern total starts below (no handshake) and passes the legacy one
    because every request carries its own envelope.
    """
    ours = cumulative(modern_setup, modern, limit)
    theirs = cumulative(handshake, legacy, limit)
    found = {}
    for index, unit in enumerate(("bytes", "tokens")):
        start = ours[0][index] < theirs[0][index]
        found[unit] = next((n for n in range(1, limit + 1) if (ours[n][index] < theirs[n][index]) != start), None)
    return found


def envelope_vs_handshake(modern, legacy, handshake, *, requests=20, modern_setup=(), transport=None,
                          tokenizer_name=None, title=None):
    """Chart 4: running bytes (left) and tokens (right) over the first `requests` requests of a session.

    Top row: both running totals; bottom row: their gap (modern minus legacy), which
    changes sign where the curves cross. `modern`/`legacy`: measured (bytes, tokens)
    per request, cycled; `handshake`: the legacy initialize exchanges; `modern_setup`:
    anything the modern client sends first (e.g. a server/discover), empty by default.
    Take them from `exchange_costs(...)`; if you counted with another tokenizer, name it
    in `tokenizer_name`.
    """
    ours = cumulative(modern_setup, modern, requests)
    theirs = cumulative(handshake, legacy, requests)
    crossed = crossing(modern, legacy, handshake, modern_setup=modern_setup)
    fig, axes = plt.subplots(2, 2, figsize=(10, 6.5), sharex=True, height_ratios=(3, 2))
    xs = list(range(requests + 1))
    for index, unit in enumerate(("bytes", "tokens")):
        top, bottom = axes[0][index], axes[1][index]
        top.plot(xs, [point[index] for point in ours], marker=".", color=MODERN_COLOR,
                 label="2026-07-28: _meta envelope on every request")
        top.plot(xs, [point[index] for point in theirs], marker=".", color=LEGACY_COLOR,
                 label="2025-11-25: initialize handshake, then bare requests")
        gap = [a[index] - b[index] for a, b in zip(ours, theirs)]
        bottom.bar(xs, gap, color=[FRAMING_COLOR if g > 0 else PAYLOAD_COLOR for g in gap],
                   label="modern minus legacy")
        bottom.axhline(0, color="0.3", linewidth=0.8)
        n = crossed[unit]
        if n is not None and n <= requests:
            for ax in (top, bottom):
                ax.axvline(n - 0.5, color="0.5", linestyle=":")
            bottom.text(n - 0.5, 0.95, f" the curves cross at request {n}", fontsize=8, va="top",
                        transform=bottom.get_xaxis_transform())
        unit_label = "bytes (B)" if unit == "bytes" else "tokens"
        top.set_ylabel(f"running total, {unit_label}")
        bottom.set_ylabel(f"gap, {unit_label}")
        bottom.set_xlabel("requests sent after setup")
        for ax in (top, bottom):
            ax.yaxis.set_major_formatter(COMMA)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(alpha=0.3)
        top.legend(fontsize=8, loc="upper left")
        bottom.legend(fontsize=8, loc="lower right")
    where = f" over {transport}" if transport else ""
    title = title or f"Envelope on every request vs one handshake{where}"
    return _finish(fig, title, tokenizer_note(tokenizer_name=tokenizer_name))


# --- 5. what a cache saves ------------------------------------------------------------------

def _running(log, counted):
    xs, trips, sizes = [0.0], [0], [0]
    for event in log:
        xs.append(event.at_ms / 60_000)
        trips.append(trips[-1] + (1 if counted(event) else 0))
        sizes.append(sizes[-1] + (event.bytes if counted(event) else 0))
    return xs, trips, sizes


def cache_savings(plain_log, cached_log, *, marks=(), title=None):
    """Chart 5: running round trips (left) and bytes (right) over simulated time, without and with a cache.

    The logs are `CachingClient.log` lists (anything with `at_ms`, `bytes`, `round_trip`);
    `marks` is a list of (time in ms, label) drawn as vertical lines, e.g. a list_changed.
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    for log, label, color in ((plain_log, "sends every request", WITHOUT_COLOR),
                              (cached_log, "honors ttlMs / cacheScope", WITH_COLOR)):
        xs, trips, sizes = _running(log, lambda event: event.round_trip)
        left.plot(xs, trips, drawstyle="steps-post", label=f"{label}: {trips[-1]:,}", color=color)
        right.plot(xs, sizes, drawstyle="steps-post", label=f"{label}: {sizes[-1]:,} B", color=color)
    for ax, unit in ((left, "round trips"), (right, "bytes on the wire (B)")):
        for at_ms, label in marks:
            ax.axvline(at_ms / 60_000, color="0.5", linestyle=":")
            ax.annotate(label, (at_ms / 60_000, 0), fontsize=8, rotation=90, xytext=(3, 4),
                        textcoords="offset points", va="bottom")
        ax.set_xlabel("simulated time (min)")
        ax.set_ylabel(f"running total, {unit}")
        ax.yaxis.set_major_formatter(COMMA)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    title = title or f"{len(cached_log)} requests: what honoring the cache hints saves"
    footer = ("bytes on the wire, no tokens: a cache hit saves a round trip, not model input "
              "(the host still gives the model the same definitions)")
    return _finish(fig, title, footer)
