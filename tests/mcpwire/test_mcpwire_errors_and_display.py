import json

import pytest

from mcpwire import explain, frames, show
from mcpwire.codes import CODES
from mcpwire.reply import Reply


@pytest.mark.parametrize("code, words", [
    (-32700, "Parse error"), (-32600, "Invalid Request"), (-32601, "Method not found"),
    (-32602, "Invalid params"), (-32603, "Internal error"), (-32000, "Connection closed"),
    (-32001, "Request timeout"), (-32002, "retired"), (-32020, "Header mismatch"),
    (-32021, "Missing required client capability"), (-32022, "Unsupported protocol version"),
    (-32042, "retired"),
])
def test_every_code_is_explained(code, words):
    text = explain(code)
    assert text.startswith(f"{code} ") and words in text and "Usually:" in text


def test_every_code_of_the_2026_schema_is_known():
    for code in (-32700, -32600, -32601, -32602, -32603, -32020, -32021, -32022):
        assert code in CODES


@pytest.mark.parametrize("code, words", [(-32050, "reserved for future"), (-32010, "implementation-defined"),
                                         (-32500, "reserved by JSON-RPC"), (42, "application-defined")])
def test_unknown_codes_are_placed_in_their_range(code, words):
    assert words in explain(code)


def error_reply(code, data=None):
    error = {"code": code, "message": "boom", **({"data": data} if data else {})}
    return Reply.from_bytes(json.dumps({"jsonrpc": "2.0", "id": 1, "error": error}).encode())


def test_reply_explain_includes_the_server_message_and_supported_versions():
    text = error_reply(-32022, {"supported": ["2026-07-28"], "requested": "x"}).explain()
    assert "'boom'" in text and "Versions this server supports: 2026-07-28." in text
    assert "Not an error" in Reply.from_bytes(b'{"jsonrpc":"2.0","id":1,"result":{}}').explain()


def test_show_prints_the_wire_text_then_a_sorted_view(capsys):
    frame = frames.request("tools/list", id=1)
    show(frame)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "→ " + frames.dumps(frame)
    assert json.loads("\n".join(lines[1:])) == frame
    assert lines[1:3] == ["{", '  "id": 1,']


def test_reply_repr_is_the_wire_text_and_a_sorted_view():
    raw = b'{"jsonrpc":"2.0","id":1,"result":{"z":1,"a":2}}'
    reply = Reply.from_bytes(raw)
    lines = repr(reply).splitlines()
    assert lines[0] == "← " + raw.decode()
    assert lines[1:] == json.dumps(json.loads(raw), indent=2, sort_keys=True).splitlines()


@pytest.mark.parametrize("code", [-32601, -32020, -32021, -32022])
def test_a_status_the_spec_requires_is_given_plainly(code):
    assert explain(code).splitlines()[-1] in ("HTTP status: 400.", "HTTP status: 404.")


@pytest.mark.parametrize("code", [-32700, -32600, -32603])
def test_a_status_the_spec_does_not_set_is_called_the_sdks(code):
    assert "the spec sets none; SDK 2.3.0 answers" in explain(code).splitlines()[-1]


def test_invalid_params_says_which_400_the_spec_requires_and_which_is_the_sdks():
    status = explain(-32602).splitlines()[-1]
    assert "missing (the spec requires it)" in status and "the spec sets none and SDK 2.3.0 answers 400" in status


def test_every_exception_is_a_wire_error_named_in_the_tree():
    from mcpwire import errors
    classes = [value for value in vars(errors).values() if isinstance(value, type) and issubclass(value, Exception)]
    assert {cls.__name__ for cls in classes} == {"WireError", "WireTimeout", "ServerExited", "ResponseTooLarge",
                                                 "InvalidHeaderAnnotation"}
    assert all(issubclass(cls, errors.WireError) and cls.__name__ in errors.__doc__ for cls in classes)


def test_invalid_params_does_not_promise_400_on_a_stream():
    # SDK 2.3.0 answers 200 text/event-stream once it has opened a stream, whatever the error's code.
    assert "200 once it has opened an SSE stream" in explain(-32602).splitlines()[-1]
