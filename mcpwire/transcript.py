"""Every exchange on a wire, with the exact bytes up and down.

Framing is every byte that is not a JSON-RPC payload: the newline on stdio; on
HTTP the request line and headers up, the status line, headers, chunk sizes and
SSE `event:`/`data:` lines down. Tokens count the payloads only (what a model
would read). Elapsed time is kept but never shown in the default view.
"""

import json
import shlex
from dataclasses import asdict, dataclass, field, fields
from functools import cached_property

from .display import ShownAsText, as_html


def _text(data):
    return data.decode("utf-8", "surrogateescape")


def _bytes(text):
    return text.encode("utf-8", "surrogateescape")


@dataclass(eq=True)
class Exchange:
    """One message up and whatever came back for it (or one unsolicited message down)."""

    transport: str
    method: str | None
    id: object
    up: bytes
    down: bytes
    up_payloads: list = field(default_factory=list)
    down_payloads: list = field(default_factory=list)
    elapsed_ms: float = 0.0
    status: int | None = None
    url: str | None = None

    @property
    def bytes_up(self):
        return len(self.up)

    @property
    def bytes_down(self):
        return len(self.down)

    @property
    def framing_up(self):
        return self.bytes_up - sum(len(_bytes(p)) for p in self.up_payloads)

    @property
    def framing_down(self):
        return self.bytes_down - sum(len(_bytes(p)) for p in self.down_payloads)

    @cached_property
    def tokens_up(self):
        from .costs import count_tokens
        return sum(count_tokens(p) for p in self.up_payloads)

    @cached_property
    def tokens_down(self):
        from .costs import count_tokens
        return sum(count_tokens(p) for p in self.down_payloads)

    def __repr__(self):
        # No elapsed time and no URL: both change from run to run.
        return (f"<Exchange {self.transport} {self.method or '(raw)'} id={self.id!r}: "
                f"{self.bytes_up} B up (framing {self.framing_up}), {self.bytes_down} B down (framing {self.framing_down})>")

    def to_dict(self):
        data = asdict(self)
        data["up"], data["down"] = _text(self.up), _text(self.down)
        return data

    @classmethod
    def from_dict(cls, data):
        # Keys a writer added beside ours (the tap's times_up/times_down) are not part of an Exchange.
        names = {f.name for f in fields(cls)}
        data = {key: value for key, value in data.items() if key in names}
        data["up"], data["down"] = _bytes(data["up"]), _bytes(data["down"])
        return cls(**data)


class Transcript(ShownAsText):
    """The list of exchanges on one wire, in the order they completed."""

    def __init__(self, exchanges=()):
        self.exchanges = list(exchanges)

    def append(self, exchange):
        self.exchanges.append(exchange)  # list.append is atomic: safe from the reader thread

    def __len__(self):
        return len(self.exchanges)

    def __getitem__(self, index):
        return self.exchanges[index]

    def __iter__(self):
        return iter(list(self.exchanges))

    def __eq__(self, other):
        return isinstance(other, Transcript) and self.exchanges == other.exchanges

    __hash__ = None

    def to_jsonl(self, path):
        """Save one JSON object per exchange (bytes kept exactly)."""
        with open(path, "w", encoding="utf-8") as out:
            for exchange in self.exchanges:
                out.write(json.dumps(exchange.to_dict()) + "\n")

    @classmethod
    def from_jsonl(cls, path):
        with open(path, encoding="utf-8") as source:
            return cls(Exchange.from_dict(json.loads(line)) for line in source if line.strip())

    def as_stdin_line(self, index):
        """The JSON line to type into a stdio server for this exchange (without the newline)."""
        exchange = self.exchanges[index]
        if exchange.transport == "stdio":
            return _text(exchange.up).removesuffix("\n")
        return exchange.up_payloads[0] if exchange.up_payloads else ""

    def as_curl(self, index, url=None):
        """A curl command that sends the same POST: the exact headers and body, shell-quoted.

        A stdio exchange gets the headers an HTTP client would derive from its frame.
        """
        from . import headers as derived_headers
        exchange = self.exchanges[index]
        if exchange.transport == "http":
            head, _, body = exchange.up.partition(b"\r\n\r\n")
            lines = _text(head).split("\r\n")[1:]
            pairs = [line.split(": ", 1) for line in lines]
            pairs = [(name, value) for name, value in pairs if name.lower() not in ("host", "content-length")]
            body = _text(body)
        else:
            body = self.as_stdin_line(index)
            try:
                frame = json.loads(body)
            except (ValueError, RecursionError):
                frame = {}
            pairs = list(derived_headers.derive(frame).items())
        target = url or exchange.url or "http://127.0.0.1:8000/mcp"
        parts = [f"curl -sS -X POST {shlex.quote(target)}"]
        parts += [f"-H {shlex.quote(f'{name}: {value}')}" for name, value in pairs]
        parts.append(f"--data-raw {shlex.quote(body)}")
        return " \\\n  ".join(parts)

    def totals(self):
        """Sums over all exchanges: bytes, framing and tokens up and down."""
        keys = ("bytes_up", "bytes_down", "framing_up", "framing_down", "tokens_up", "tokens_down")
        return {key: sum(getattr(e, key) for e in self.exchanges) for key in keys}

    def display_text(self):
        # The column widens for a longer transport name ("postMessage", lesson 21's View wire) so rows stay aligned.
        width = max([len("transport"), *(len(e.transport) for e in self.exchanges)])
        rows = [f"{'#':>3}  {'transport':<{width}} {'method':<28} {'id':>5}  {'up B':>6} {'down B':>7} "
                f"{'framing':>9}  {'tokens':>9}"]
        for number, e in enumerate(self.exchanges):
            method = e.method or "(raw)"
            rows.append(f"{number:>3}  {e.transport:<{width}} {method:<28} {str(e.id if e.id is not None else '-'):>5}  "
                        f"{e.bytes_up:>6} {e.bytes_down:>7} {f'{e.framing_up}/{e.framing_down}':>9}  "
                        f"{f'{e.tokens_up}/{e.tokens_down}':>9}")
        return "\n".join(rows)

    def _repr_html_(self):
        return as_html(self)

