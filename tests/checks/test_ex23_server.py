"""Exercise 23 checks (a server by hand): the solution's server passes, servers with a learner's typical mistakes
fail with the rule they broke, and right servers written differently pass.

Each server is the solution notebook's own modules, written from its `%%writefile` cells into a folder, with one
function swapped for a variant. The lesson's final server must be the same files, so the exercise finishes the
server the lesson built.
"""

import re
import textwrap

import pytest
from hand_server import SOLUTION, write_server, written_modules

from checks import ex23_server as server_checks


def server(tmp_path, module=None, function=None, body=None):
    """The solution's server in tmp_path/my_server, with `function` of `module` given another body."""
    modules = {name: replace_function(text, function, body) if name == module else text for name, text in SOLUTION.items()}
    return write_server(tmp_path / "my_server", modules)


def replace_function(text, function, body):
    head = re.search(rf"^def {function}\([^\n]*\):\n(    \"\"\"[^\n]*\"\"\"\n)?", text, re.M)
    end = re.search(r"^\S", text[head.end():], re.M)
    tail = text[head.end() + end.start():] if end else ""
    return text[:head.end()] + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n\n\n" + tail


def test_the_lesson_builds_the_solutions_server():
    lesson = written_modules("notebooks/23-a-server-by-hand.ipynb")
    assert lesson == SOLUTION


@pytest.mark.parametrize("check", [server_checks.check_read, server_checks.check_envelope_rules,
                                   server_checks.check_call_tool])
def test_the_solution_passes(verdict, tmp_path, check):
    assert verdict(check, server(tmp_path)).startswith("✓ Your server answered all")


def test_the_sdk_client_takes_the_solution(verdict, tmp_path):
    assert verdict(server_checks.check_with_sdk_client, server(tmp_path)).startswith("✓ The mcp SDK's client listed your 3 tools over 2 pages")


def test_no_server_yet(verdict, tmp_path):
    assert verdict(server_checks.check_read, str(tmp_path / "my_server")).startswith("not done yet: run the cells above first")


STUB = 'raise NotImplementedError("your code here")'


def test_a_stub_read_is_not_done(verdict, tmp_path):
    folder = server(tmp_path, "jsonrpc.py", "read", STUB)
    assert verdict(server_checks.check_read, folder).startswith("not done yet: jsonrpc.read still raises")
    assert verdict(server_checks.check_call_tool, folder).startswith("not done yet: jsonrpc.read (task 1) still raises")
    assert verdict(server_checks.check_with_sdk_client, folder).startswith("not done yet: jsonrpc.read (task 1)")


def test_a_stub_call_tool_is_not_done(verdict, tmp_path):
    folder = server(tmp_path, "tools.py", "call_tool", STUB)
    assert verdict(server_checks.check_call_tool, folder).startswith("not done yet: tools.call_tool still raises")


RIGHT_READ = '''
    try:
        text = line.decode("utf-8")
        message = json.loads(text)
    except UnicodeDecodeError:
        raise RpcError(-32700, "not UTF-8") from None
    except json.JSONDecodeError:
        raise RpcError(-32700, "not JSON") from None
    except RecursionError:
        raise RpcError(-32700, "too deep") from None
    if type(message) is not dict:
        raise RpcError(-32600, "not an object")
    id = None
    if "id" in message:
        whole = type(message["id"]) is float and message["id"] % 1 == 0  # 1.0 is an integer to the schema
        if type(message["id"]) not in (str, int) and not whole:
            raise RpcError(-32600, "bad id")
        id = message["id"]
    bad = (message.get("jsonrpc") != "2.0" or type(message.get("method")) is not str
           or ("params" in message and type(message["params"]) not in (dict, list)))
    if bad:
        raise RpcError(-32600, "invalid", id=id)
    return message
'''

RIGHT_CHECK = '''
    meta = params.get("_meta")
    if type(meta) is not dict or VERSION not in meta or CAPABILITIES not in meta:
        raise RpcError(-32602, "bad envelope")
    version, capabilities = meta[VERSION], meta[CAPABILITIES]
    if type(version) is not str or type(capabilities) is not dict:
        raise RpcError(-32602, "bad envelope types")
    if version in SUPPORTED:
        return capabilities
    raise RpcError(-32022, "Unsupported protocol version", data={"requested": version, "supported": list(SUPPORTED)})
'''

RIGHT_CALL_TOOL = '''
    tools_by_name = {tool["name"]: tool for tool in toolbox.TOOLS}
    name = params.get("name")
    if not isinstance(name, str) or name not in tools_by_name:
        raise RpcError(-32602, "Unknown tool: %s" % (name,))
    arguments = params["arguments"] if "arguments" in params else {}
    if type(arguments) is not dict:
        raise RpcError(-32602, "arguments must be an object")
    for problem in problems(tools_by_name[name]["inputSchema"], arguments):
        return toolbox.result("Fix this and call again: " + problem, is_error=True)
    return toolbox.run(name, arguments)
'''


@pytest.mark.parametrize("module, function, body, check", [
    ("jsonrpc.py", "read", RIGHT_READ, server_checks.check_read),
    ("envelope.py", "check", RIGHT_CHECK, server_checks.check_envelope_rules),
    ("tools.py", "call_tool", RIGHT_CALL_TOOL, server_checks.check_call_tool),
], ids=["read-in-another-order", "check-with-type-tests", "call-tool-by-a-dict"])
def test_right_answers_written_differently_pass(verdict, tmp_path, module, function, body, check):
    folder = server(tmp_path, module, function, body)
    assert verdict(check, folder).startswith("✓")


def mutated(module, old, new, *more):
    """One learner's change: `old` replaced by `new` in `module` (and each further old, new pair in `more`)."""
    pairs = [(old, new), *zip(more[::2], more[1::2])]
    for before, _ in pairs:
        assert before in SOLUTION[module], f"the solution no longer has {before!r}"
    return module, pairs


# A learner's typical mistakes, as one change to the solution each, and words the verdict must contain.
MISTAKES = [
    ("only-jsondecodeerror", mutated("jsonrpc.py", "except (ValueError, RecursionError):", "except (json.JSONDecodeError, RecursionError):"),
     server_checks.check_read, ["The line", "the server exited", "UnicodeDecodeError"]),
    ("no-recursionerror", mutated("jsonrpc.py", "except (ValueError, RecursionError):", "except ValueError:"),
     server_checks.check_read, ["the server exited", "RecursionError"]),
    ("batch-as-parse-error", mutated("jsonrpc.py", 'raise RpcError(-32600, "Invalid Request: a batch',
                                     'raise RpcError(-32700, "Invalid Request: a batch'),
     server_checks.check_read, ["error -32700", "where -32600 was due", "batch"]),
    ("unreadable-id-echoed", mutated("jsonrpc.py", 'raise RpcError(-32600, "Invalid Request: an id must be a string or an integer")',
                                     'raise RpcError(-32600, "Invalid Request: an id must be a string or an integer", id=id)'),
     server_checks.check_read, ['"id": 5.5', "leaves it out"]),
    ("bool-ids-accepted", mutated("jsonrpc.py", "    return isinstance(value, (str, int)) and not isinstance(value, bool)",
                                  "    return isinstance(value, (str, int))"),
     server_checks.check_read, ["true", "a bool is an int"]),
    ("id-not-echoed", mutated("jsonrpc.py", "raise RpcError(-32600, 'Invalid Request: \"jsonrpc\" must be \"2.0\"', id=readable)",
                              "raise RpcError(-32600, 'Invalid Request: \"jsonrpc\" must be \"2.0\"')"),
     server_checks.check_read, ['"jsonrpc":"1.0"', "the request's id was 3"]),
    ("params-list-refused", mutated("jsonrpc.py", "isinstance(message[\"params\"], (dict, list))", "isinstance(message[\"params\"], dict)"),
     server_checks.check_read, ["error -32600", "where -32601 was due", "params as an array is valid JSON-RPC"]),
    ("falsy-id-0", mutated("jsonrpc.py", 'if "id" in message and readable is None:', 'if "id" in message and not readable:'),
     server_checks.check_read, ['"id":0', "0 is a valid id"]),
    ("response-id-dropped", mutated("jsonrpc.py", '"Invalid Request: a client sends requests and notifications, never responses", id=readable)',
                                    '"Invalid Request: a client sends requests and notifications, never responses")'),
     server_checks.check_read, ['"result":{}', "the request's id was 9"]),
    ("missing-key-as-unsupported", mutated("envelope.py", "if missing:\n        raise RpcError(-32602",
                                           "if missing:\n        raise RpcError(-32022"),
     server_checks.check_envelope_rules, ["error -32022", "where -32602 was due", "the protocol version is required"]),
    ("unsupported-as-invalid-params", mutated("envelope.py", 'raise RpcError(-32022, "Unsupported protocol version", {',
                                              'raise RpcError(-32602, "Unsupported protocol version", {'),
     server_checks.check_envelope_rules, ["error -32602", "where -32022 was due"]),
    ("unsupported-without-requested", mutated("envelope.py", '{"supported": SUPPORTED, "requested": version}', '{"supported": SUPPORTED}'),
     server_checks.check_envelope_rules, ["data.requested must be the version asked for ('2025-11-25')"]),
    ("version-number-accepted", mutated("envelope.py", "if not isinstance(version, str):", "if version is None:"),
     server_checks.check_envelope_rules, ['"id":25', "where -32602 was due", "the version is a string"]),
    ("unknown-keys-refused", mutated("envelope.py", "missing = [key for key in (VERSION, CAPABILITIES) if key not in meta]",
                                     "missing = [key for key in (VERSION, CAPABILITIES) if key not in meta] + "
                                     "[key for key in meta if key not in (VERSION, CAPABILITIES, 'io.modelcontextprotocol/clientInfo')]"),
     server_checks.check_envelope_rules, ["traceparent", "where a result was due", "keys the server does not know"]),
    ("unknown-tool-as-tool-error", mutated("tools.py", 'raise RpcError(-32602, f"Unknown tool: {name}")',
                                           'return toolbox.result(f"Unknown tool: {name}", is_error=True)'),
     server_checks.check_call_tool, ["multiply", "a result where error -32602 was due", "an unknown tool is a protocol error"]),
    ("bad-arguments-as-protocol-error", mutated("tools.py", 'return toolbox.result(f"Invalid arguments for {name}: " + "; ".join(wrong) + ".", is_error=True)',
                                                'raise RpcError(-32602, "Invalid arguments: " + "; ".join(wrong))'),
     server_checks.check_call_tool, ["count_words", "where a result was due", "input validation error"]),
    ("arguments-not-checked", mutated("tools.py", "    if wrong:\n", "    if False:\n"),
     server_checks.check_call_tool, ["count_words", "error -32603", "where a result was due"]),
    ("list-arguments-not-refused", mutated("tools.py", 'raise RpcError(-32602, "Invalid params: arguments must be an object")',
                                           'arguments = {}'),
     server_checks.check_call_tool, ['"arguments":["hello"]', "a result where error -32602 was due", "CallToolRequest"]),
]


# What a blind learner got past the check before these cases were added (each failed the check at 83ad1ff).
MISTAKES += [
    ("jsonrpc-stripped-or-2", mutated("jsonrpc.py", 'if message.get("jsonrpc") != "2.0":',
                                      'if str(message.get("jsonrpc")).strip() not in ("2.0", "2"):'),
     server_checks.check_read, ['"jsonrpc":2.0', "where -32600 was due", "the number 2.0"]),
    ("params-null-accepted", mutated("jsonrpc.py", 'if "params" in message and not isinstance',
                                     'if message.get("params") is not None and not isinstance'),
     server_checks.check_read, ['"params":null', "neither an object nor an array"]),
    ("bad-utf8-replaced", mutated("jsonrpc.py", 'line.decode("utf-8")', 'line.decode("utf-8", errors="replace")'),
     server_checks.check_read, ["where -32700 was due", "do not replace it"]),
    ("id-0-as-missing", mutated("jsonrpc.py", "readable = id if is_id(id) else None", "readable = id if is_id(id) and id != 0 else None",
                                'if "id" in message and readable is None:', 'if "id" in message and not is_id(id):'),
     server_checks.check_read, ['"id":0', "the request's id was 0"]),
    ("empty-method-refused", mutated("jsonrpc.py", 'if not isinstance(message.get("method"), str):',
                                     'if not isinstance(message.get("method"), str) or not message["method"]:'),
     server_checks.check_read, ['"method":""', "where -32601 was due"]),
    ("large-ids-refused", mutated("jsonrpc.py", "and not isinstance(value, bool)",
                                  "and not isinstance(value, bool) and (not isinstance(value, int) or abs(value) < 2**31)"),
     server_checks.check_read, ["1099511627776", "a large integer is a valid id"]),
    ("check-returns-nothing", mutated("envelope.py", "    return meta[CAPABILITIES]", "    return None"),
     server_checks.check_envelope_rules, ["check(params) returned null", "Return the client's capabilities"]),
    ("supported-as-a-string", mutated("envelope.py", '{"supported": SUPPORTED, "requested": version}',
                                      '{"supported": SUPPORTED[0], "requested": version}'),
     server_checks.check_envelope_rules, ["data.supported must list"]),
    ("null-capabilities-accepted", mutated("envelope.py", "if not isinstance(meta[CAPABILITIES], dict):",
                                           "if meta[CAPABILITIES] is not None and not isinstance(meta[CAPABILITIES], dict):"),
     server_checks.check_envelope_rules, ["null capabilities are not an object"]),
    ("list-capabilities-accepted", mutated("envelope.py", "if not isinstance(meta[CAPABILITIES], dict):",
                                           "if not isinstance(meta[CAPABILITIES], (dict, list)):"),
     server_checks.check_envelope_rules, ["a list is not an object"]),
    ("meta-tested-by-truth", mutated("envelope.py", "if not isinstance(meta, dict):", "if not meta:"),
     server_checks.check_envelope_rules, ["a list that holds the key names is not one"]),
    ("version-stripped", mutated("envelope.py", "if version not in SUPPORTED:", "if version.strip() not in SUPPORTED:"),
     server_checks.check_envelope_rules, ["compared exactly", "-32022 was due"]),
    ("version-as-a-substring", mutated("envelope.py", "if version not in SUPPORTED:", "if version not in SUPPORTED[0]:"),
     server_checks.check_envelope_rules, ["a whole string", "-32022 was due"]),
    ("falsy-arguments-as-empty", mutated("tools.py", 'params.get("arguments", {})', 'params.get("arguments") or {}'),
     server_checks.check_call_tool, ['"arguments":null', "a result where error -32602 was due"]),
    ("unhashable-name-crashes", mutated("tools.py", 'tool = next((tool for tool in toolbox.TOOLS if tool["name"] == name), None)',
                                        'tool = {tool["name"]: tool for tool in toolbox.TOOLS}.get(name)'),
     server_checks.check_call_tool, ['"name":["shout"]', "error -32603", "test that the name is a string first"]),
    ("generic-tool-error", mutated("tools.py", 'return toolbox.result(f"Invalid arguments for {name}: " + "; ".join(wrong) + ".", is_error=True)',
                                   'return toolbox.result("Invalid arguments.", is_error=True)'),
     server_checks.check_call_tool, ["does not name 'text'"]),
    ("forgiving-tool-names", mutated("tools.py", 'if tool["name"] == name), None)',
                                     'if tool["name"] == (name.strip().lower() if isinstance(name, str) else name)), None)'),
     server_checks.check_call_tool, ['"name":"Shout"', "compared exactly"]),
]


# A blind learner's (session 11), each ✓ from the check at 74951b4.
MISTAKES += [
    ("method-checked-only-with-an-id", mutated("jsonrpc.py", 'if not isinstance(message.get("method"), str):',
                                               'if "id" in message and not isinstance(message.get("method"), str):'),
     server_checks.check_read, ['{"jsonrpc":"2.0"}', "the server exited", "not a notification"]),
    ("params-checked-only-with-an-id", mutated("jsonrpc.py", 'if "params" in message and not isinstance',
                                               'if "id" in message and "params" in message and not isinstance'),
     server_checks.check_read, ['"params":"all"', "took the line for a notification", "not a notification"]),
    ("version-by-its-first-ten-characters", mutated("envelope.py", "if version not in SUPPORTED:",
                                                    "if version[:10] not in SUPPORTED:"),
     server_checks.check_envelope_rules, ["a space after it", "where error -32022 was due", "compared exactly"]),
    ("version-right-stripped", mutated("envelope.py", "if version not in SUPPORTED:",
                                       "if version.rstrip() not in SUPPORTED:"),
     server_checks.check_envelope_rules, ["a space after it", "where error -32022 was due"]),
    ("meta-keys-without-case", mutated("envelope.py", 'meta = params.get("_meta")',
                                       'meta = params.get("_meta")\n    if isinstance(meta, dict):\n'
                                       '        meta = {key.lower(): value for key, value in meta.items()} | meta\n'
                                       '        meta |= {VERSION: meta.get(VERSION.lower(), meta.get(VERSION)), '
                                       'CAPABILITIES: meta.get(CAPABILITIES.lower(), meta.get(CAPABILITIES))}\n'
                                       '        meta = {key: value for key, value in meta.items() if value is not None}'),
     server_checks.check_envelope_rules, ["where error -32602 was due", "member names are exact"]),
    ("tool-error-names-only-the-argument", mutated(
        "tools.py", 'return toolbox.result(f"Invalid arguments for {name}: " + "; ".join(wrong) + ".", is_error=True)',
        'return toolbox.result("Check these arguments: " + ", ".join(re.findall(r"\'([^\']+)\'", " ".join(wrong))), '
        'is_error=True)', "import base64\n", "import base64\nimport re\n"),
     server_checks.check_call_tool, ["Check these arguments: text", "what is wrong with it"]),
]


@pytest.mark.parametrize("change, check, phrases", [case[1:] for case in MISTAKES], ids=[case[0] for case in MISTAKES])
def test_a_typical_mistake_fails_naming_its_rule(verdict, tmp_path, change, check, phrases):
    module, pairs = change
    text = SOLUTION[module]
    for before, after in pairs:
        text = text.replace(before, after)
    folder = write_server(tmp_path / "my_server", {**SOLUTION, module: text})
    out = verdict(check, folder)
    assert out.startswith("✗"), out
    missing = [phrase for phrase in phrases if phrase not in out]
    assert not missing, f"{missing} not in:\n{out}"


def test_a_reply_to_a_notification_fails(verdict, tmp_path):
    loop = SOLUTION["__main__.py"].replace("        return []  # a notification", "        return [jsonrpc.result(0, {})]  # a notification")
    assert loop != SOLUTION["__main__.py"]
    out = verdict(server_checks.check_read, write_server(tmp_path / "my_server", {**SOLUTION, "__main__.py": loop}))
    assert out.startswith("✗") and "a reply to a notification" in out and "never gets a reply" in out, out


def test_a_print_on_stdout_fails(verdict, tmp_path):
    tools = SOLUTION["tools.py"].replace("    wrong = problems(", '    print("checking", name)\n    wrong = problems(')
    out = verdict(server_checks.check_call_tool, write_server(tmp_path / "my_server", {**SOLUTION, "tools.py": tools}))
    assert out.startswith("✗") and "a line on stdout that is not JSON: checking" in out, out
    assert "write anything else to stderr" in out, out


def test_a_read_that_refuses_an_integral_float_id_fails(verdict, tmp_path):
    # A learner who tests ids with isinstance(id, (str, int)) refuses 1.0, which the 2026-07-28 schema counts as an
    # integer (a fresh reader found the lesson's own server doing it).
    narrow = SOLUTION["jsonrpc.py"].replace("    if isinstance(value, float):", "    if False:")
    assert narrow != SOLUTION["jsonrpc.py"]
    out = verdict(server_checks.check_read, write_server(tmp_path / "my_server", {**SOLUTION, "jsonrpc.py": narrow}))
    assert out.startswith("✗") and "1.0 is an integer to the 2026-07-28 schema" in out, out


def test_a_module_that_does_not_compile_is_named_with_its_line(verdict, tmp_path):
    # A blind learner's: the server died at its start, and the check judged the first line it sent ("hello").
    broken = SOLUTION["jsonrpc.py"].replace("def read(line):", "def read(line:")
    folder = write_server(tmp_path / "my_server", {**SOLUTION, "jsonrpc.py": broken})
    line = broken.splitlines().index("def read(line:") + 1
    for check in (server_checks.check_read, server_checks.check_with_sdk_client):
        out = verdict(check, folder)
        assert out.startswith(f"✗ Your server cannot start: jsonrpc.py, line {line}: SyntaxError:"), out
        assert "The line" not in out, out
