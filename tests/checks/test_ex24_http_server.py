"""Exercise 24 checks (a server over HTTP): the solution's server passes, servers with a learner's typical mistakes
fail with the rule they broke, right servers written differently pass, and stubs are "not done".

Each server is lesson 23's modules (as the exercise's first cell copies them) with the solution notebook's own
`%%writefile` modules beside them, one of them changed. The lesson's final server must be the same files, so the
exercise finishes the server the lesson built.
"""

import importlib.util
import re
import textwrap
from pathlib import Path

import pytest
from hand_server import written_modules

from checks import ex24_http_server as http_checks

LESSON_23 = written_modules("notebooks/23-a-server-by-hand.ipynb", "my_server")
SOLUTION = {name: re.sub(r"\n *### (BEGIN|END) SOLUTION", "", text)
            for name, text in written_modules("solutions/24-a-server-over-http.ipynb", "my_http_server").items()}
STUB = 'raise NotImplementedError("your code here")'


def server(tmp_path, changes=()):
    """The solution's server in tmp_path/my_http_server, with each (module, old, new) change applied."""
    folder = tmp_path / "my_http_server"
    folder.mkdir()
    for name, text in {**LESSON_23, **SOLUTION}.items():
        for module, old, new in changes:
            if module == name:
                assert old in text, f"{old!r} is not in {name}"
                text = text.replace(old, new)
        (folder / name).write_text(text)
    return str(folder)


def with_body(module, function, body):
    """A change that gives `function` of `module` another body (its signature and docstring kept)."""
    text = SOLUTION[module]
    head = re.search(rf"^def {function}\([^\n]*\):\n(    \"\"\"[^\n]*\"\"\"\n)?", text, re.M)
    end = re.search(r"^\S", text[head.end():], re.M)
    old = text[head.end():head.end() + end.start()] if end else text[head.end():]
    return module, old, textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n\n\n"


def test_the_lesson_builds_the_solutions_server():
    assert written_modules("notebooks/24-a-server-over-http.ipynb", "my_http_server") == SOLUTION


def test_the_given_guard_answers_a_foreign_origin_403_whatever_the_host(tmp_path):
    (tmp_path / "guard.py").write_text(SOLUTION["guard.py"])
    found = importlib.util.spec_from_file_location("given_guard", tmp_path / "guard.py")
    guard = importlib.util.module_from_spec(found)
    found.loader.exec_module(guard)
    rebound = {"Host": "evil.example:8000", "Origin": "http://evil.example:8000"}  # what a rebound page's fetch sends
    assert guard.refusal(rebound)[0] == 403
    assert guard.refusal({"Host": "evil.example:8000"})[0] == 421
    assert guard.refusal({"Host": "127.0.0.1:8000", "Origin": "http://localhost:8000"}) is None


def test_the_solution_passes_the_kits_checks(verdict, tmp_path):
    folder = server(tmp_path)
    assert verdict(http_checks.check_header_rules, folder).startswith(
        f"✓ Your server refused and answered all {len(http_checks.HEADER_CASES)}")
    assert verdict(http_checks.check_request_state, folder).startswith("✓ Your requestState is sealed")


def test_the_solution_passes_the_suite(verdict, tmp_path):
    out = verdict(http_checks.check_with_suite, server(tmp_path))
    assert out.startswith("✓ The official suite passed all") and "of its 6 scenarios" in out, out


def test_no_server_yet(verdict, tmp_path):
    assert verdict(http_checks.check_header_rules, str(tmp_path / "nothing")).startswith("not done yet: run the cells above")


def test_a_module_not_written_yet_is_not_done(verdict, tmp_path):
    folder = server(tmp_path)
    (Path(folder) / "sealed.py").unlink()
    out = verdict(http_checks.check_header_rules, folder)
    assert out.startswith("not done yet:") and "No module named 'sealed'" in out, out


def test_a_stub_check_is_not_done(verdict, tmp_path):
    folder = server(tmp_path, [with_body("mirror.py", "check", STUB)])
    assert verdict(http_checks.check_header_rules, folder).startswith("not done yet: mirror.check still raises")
    assert verdict(http_checks.check_request_state, folder).startswith("not done yet: mirror.check (task 1) still raises")
    assert verdict(http_checks.check_with_suite, folder).startswith("not done yet: mirror.check (task 1) still raises")


def test_a_stub_seal_is_not_done_and_leaves_task_1_alone(verdict, tmp_path):
    folder = server(tmp_path, [with_body("sealed.py", "seal", STUB), with_body("sealed.py", "open_state", STUB)])
    assert verdict(http_checks.check_request_state, folder).startswith("not done yet: sealed.seal still raises")
    assert verdict(http_checks.check_header_rules, folder).startswith("✓")
    assert verdict(http_checks.check_with_suite, folder).startswith("not done yet: sealed.seal (task 2) still raises")


RIGHT_DECODED = '''
    found = re.fullmatch(r"=\\?base64\\?(.*)\\?=", value, re.S)
    if found is None:
        return value
    try:
        return base64.b64decode(found.group(1), validate=True).decode()
    except ValueError:
        raise mismatch("bad base64") from None
'''
RIGHT_CHECK = '''
    body = message.get("params") if type(message.get("params")) is dict else {}
    wanted = {"MCP-Protocol-Version": None, "Mcp-Method": message["method"]}
    meta = body.get("_meta")
    if type(meta) is dict and type(meta.get("io.modelcontextprotocol/protocolVersion")) is str:
        wanted["MCP-Protocol-Version"] = meta["io.modelcontextprotocol/protocolVersion"]
    if message["method"] in NAME_FIELD:
        wanted["Mcp-Name"] = body.get(NAME_FIELD[message["method"]])
    for name, value in wanted.items():
        seen = header(headers, name)
        if seen is None:
            raise mismatch(f"{name} missing")
        if name == "Mcp-Name":
            seen = decoded(seen)
        if value is not None and seen != value:
            raise mismatch(f"{name} differs")
        if name == "MCP-Protocol-Version" and seen not in envelope.SUPPORTED:
            return
'''
RIGHT_SEAL = '''
    body = json.dumps({"c": carried, "e": -int(-(time.time() + LIFETIME_S) // 1), "a": digest(arguments), "n": name,
                       "m": method}, sort_keys=True).encode()
    return PREFIX + base64.urlsafe_b64encode(hmac.digest(KEY, body, "sha256") + body).decode().rstrip("=")
'''
RIGHT_OPEN = '''
    if type(state) is not str or state[:len(PREFIX)] != PREFIX:
        raise refused("malformed", "not ours")
    try:
        raw = base64.urlsafe_b64decode(state[len(PREFIX):] + "=" * (-len(state[len(PREFIX):]) % 4))
    except (TypeError, ValueError):
        raise refused("malformed", "unreadable") from None
    if not secrets.compare_digest(raw[:TAG_BYTES], hmac.digest(KEY, raw[TAG_BYTES:], "sha256")):
        raise refused("tampered", "does not verify")
    fields = json.loads(raw[TAG_BYTES:])
    if [fields["m"], fields["n"], fields["a"]] != [method, name, digest(arguments)]:
        raise refused("other_request", "another request")
    if time.time() > fields["e"]:
        raise refused("expired", "expired")
    return fields["c"]
'''
RIGHT_HEADER = '''
    for key in headers.keys():
        if key.lower() == name.lower():
            value = headers[key].strip(" \\t")
            if re.search(r"[^\\t\\x20-\\x7e]", value):
                raise mismatch(f"{name} is not printable ASCII")
            return value
    return None
'''


def test_right_headers_written_differently_pass(verdict, tmp_path):
    folder = server(tmp_path, [("mirror.py", "import base64\n", "import base64\nimport re\n"),
                               with_body("mirror.py", "decoded", RIGHT_DECODED), with_body("mirror.py", "check", RIGHT_CHECK),
                               with_body("mirror.py", "header", RIGHT_HEADER)])
    assert verdict(http_checks.check_header_rules, folder).startswith("✓")


def test_a_right_state_written_differently_passes(verdict, tmp_path):
    folder = server(tmp_path, [with_body("sealed.py", "seal", RIGHT_SEAL), with_body("sealed.py", "open_state", RIGHT_OPEN)])
    assert verdict(http_checks.check_request_state, folder).startswith("✓")


def test_a_state_that_imports_its_clock_and_compare_digest_by_name_passes(verdict, tmp_path):
    """The check's clock is time.time, set before sealed.py is imported: a name imported from time sees it too."""
    folder = server(tmp_path, [("sealed.py", "import time\n", "import time\nfrom hmac import compare_digest\nfrom time import time as now\n"),
                               ("sealed.py", "math.ceil(time.time() + LIFETIME_S)", "math.ceil(now() + LIFETIME_S)"),
                               ("sealed.py", "if time.time() > sealed", "if now() > sealed"),
                               ("sealed.py", "hmac.compare_digest(", "compare_digest(")])
    assert verdict(http_checks.check_request_state, folder).startswith("✓")


MIRROR = "mirror.py"
# A learner's typical mistakes, as changes to the solution, and words the verdict must contain.
MISTAKES = [
    ("method-case-insensitive", [(MIRROR, "if method != message[\"method\"]:", "if method.lower() != message[\"method\"].lower():")],
     http_checks.check_header_rules, ["header values are case-sensitive", "TOOLS/CALL", "HTTP 200"]),
    ("sentinel-not-decoded", [(MIRROR, "if decoded(name) != params.get(field):", "if name != params.get(field):")],
     http_checks.check_header_rules, ["Base64 sentinel is decoded", "where a result (HTTP 200) was due"]),
    ("name-for-every-method", [(MIRROR, 'field = NAME_FIELD[message["method"]]', 'field = "name"')],
     http_checks.check_header_rules, ["resources/read carries its URI", "error -32020, where -32601 was due"]),
    ("missing-name-allowed", [(MIRROR, "if name is None:\n            raise", "if name is None:\n            return\n            raise")],
     http_checks.check_header_rules, ["tools/call needs Mcp-Name", "no Mcp-Name", "where HTTP 400 with error -32020 was due"]),
    ("body-version-required", [(MIRROR, "if isinstance(body_version, str) and version != body_version:",
                                "if version != body_version:")],
     http_checks.check_header_rules, ["no _meta has no version", "error -32020, where -32602 was due"]),
    # A blind learner's, each ✓ from the check before its case was added.
    ("name-only-for-tools-call", [(MIRROR, 'if message["method"] in NAME_FIELD:', 'if message["method"] == "tools/call":')],
     http_checks.check_header_rules, ["prompts/get's Mcp-Name must mirror params.name", "error -32601, where -32020 was due"]),
    ("name-compared-without-case", [(MIRROR, "if decoded(name) != params.get(field):",
                                     "if decoded(name).lower() != str(params.get(field)).lower():")],
     http_checks.check_header_rules, ["SHOUT", "compared case-sensitively"]),
    ("non-utf8-base64-uncaught", [(MIRROR, "except (binascii.Error, UnicodeDecodeError):", "except binascii.Error:")],
     http_checks.check_header_rules, ["not UTF-8 is a malformed header", "-32603"]),
    ("base64-not-validated", [(MIRROR, "validate=True", "validate=False")],
     http_checks.check_header_rules, ["a space inside is not Base64", "where HTTP 400 with error -32020 was due"]),
    ("sentinel-by-prefix-only", [(MIRROR, "value.startswith(start) and value.endswith(end)", "value.startswith(start)"),
                                 (MIRROR, "value[len(start):-len(end)]", "value[len(start):].removesuffix(end)")],
     http_checks.check_header_rules, ["without its ?= suffix", "where HTTP 400 with error -32020 was due"]),
    ("sentinel-in-any-case", [(MIRROR, "value.startswith(start) and", "value.lower().startswith(start) and")],
     http_checks.check_header_rules, ["=?BASE64? is no sentinel"]),
    ("method-before-version", [(MIRROR, "    if version not in envelope.SUPPORTED:\n        return  #", "    if False:\n        return  #")],
     http_checks.check_header_rules, ["a revision this server does not speak is judged first", "error -32020, where -32022 was due"]),
    ("state-with-padding", [("sealed.py", "return PREFIX + base64url(tag + payload)",
                             "return PREFIX + base64.urlsafe_b64encode(tag + payload).decode()")],
     http_checks.check_request_state, ["URL-safe Base64 without padding"]),
    ("mismatch-as-invalid-request", [(MIRROR, "return RpcError(-32020,", "return RpcError(-32600,")],
     http_checks.check_header_rules, ["error -32600, where -32020 was due"]),
    ("binascii-error-uncaught", [(MIRROR, "except (binascii.Error, UnicodeDecodeError):", "except UnicodeDecodeError:")],
     http_checks.check_header_rules, ["not Base64 is a malformed header", "-32603"]),
    ("no-signature", [with_body("sealed.py", "seal", "return PREFIX + base64url(json.dumps({'method': method, 'name': name, "
                                "'arguments': digest(arguments), 'expires': math.ceil(time.time() + LIFETIME_S), 'carried': carried}).encode())"),
                      with_body("sealed.py", "open_state", "try:\n    sealed = json.loads(base64.urlsafe_b64decode(state[3:] + '=' * (-len(state[3:]) % 4)))\n"
                                "except (AttributeError, TypeError, ValueError):\n    raise refused('malformed', 'unreadable') from None\n"
                                "if (sealed['method'], sealed['name'], sealed['arguments']) != (method, name, digest(arguments)):\n"
                                "    raise refused('other_request', 'x')\nif time.time() > sealed['expires']:\n    raise refused('expired', 'x')\n"
                                "return sealed['carried']")],
     http_checks.check_request_state, ["another process of this server", "where HTTP 400 with error -32602 was due"]),
    ("arguments-not-bound", [("sealed.py", "(method, name, digest(arguments))", "(method, name, sealed[\"arguments\"])")],
     http_checks.check_request_state, ["publish('one') sent with publish('two')", "user confirmed another text"]),
    ("name-not-bound", [("sealed.py", "(sealed[\"method\"], sealed[\"name\"], sealed[\"arguments\"]) != (method, name, digest(arguments))",
                         "(sealed[\"method\"], sealed[\"arguments\"]) != (method, digest(arguments))")],
     http_checks.check_request_state, ["bind the tool's name"]),
    ("expiry-not-checked", [("sealed.py", "if time.time() > sealed[\"expires\"]:", "if False:")],
     http_checks.check_request_state, ["after its expiry", "came back at 1301.5", "open_state returned"]),
    ("one-reason-for-every-failure", [("sealed.py", '{"reason": reason}', '{"reason": "invalid_request_state"}')],
     http_checks.check_request_state, ["one character of the state changed",
                                       "data.reason 'invalid_request_state', where 'malformed' or 'tampered' was due"]),
    ("other-request-told-as-tampered", [("sealed.py", 'raise refused("other_request",', 'raise refused("tampered",')],
     http_checks.check_request_state, ["publish('two')", "data.reason 'tampered', where 'other_request' was due"]),
    ("expired-told-as-tampered", [("sealed.py", 'raise refused("expired",', 'raise refused("tampered",')],
     http_checks.check_request_state, ["after its expiry", "open_state refused it: error -32602, data.reason 'tampered'"]),
    ("carried-not-returned", [("sealed.py", 'return sealed["carried"]', "return None")],
     http_checks.check_request_state, ["open_state returns what seal carried", "open_state returned None"]),
    ("carried-not-sealed", [("sealed.py", '"carried": carried}', '"carried": None}')],
     http_checks.check_request_state, ["open_state returns what seal carried", "open_state returned None"]),
    # A blind learner's: the tag covers the method and the name, not the payload, so a rewritten payload kept its tag.
    ("tag-not-over-the-payload", [("sealed.py", "tag = hmac.new(KEY, payload, hashlib.sha256).digest()",
                                   "tag = hmac.new(KEY, (method + name).encode(), hashlib.sha256).digest()"),
                                  with_body("sealed.py", "open_state",
                                            "try:\n    encoded = state[len(PREFIX):]\n"
                                            "    raw = base64.urlsafe_b64decode(encoded + '=' * (-len(encoded) % 4))\n"
                                            "    tag, sealed = raw[:TAG_BYTES], json.loads(raw[TAG_BYTES:])\n"
                                            "except (TypeError, ValueError):\n    raise refused('malformed', 'unreadable') from None\n"
                                            "expected = hmac.new(KEY, (sealed['method'] + sealed['name']).encode(), hashlib.sha256).digest()\n"
                                            "if not hmac.compare_digest(tag, expected):\n    raise refused('tampered', 'x')\n"
                                            "if (sealed['method'], sealed['name'], sealed['arguments']) != (method, name, digest(arguments)):\n"
                                            "    raise refused('other_request', 'x')\nif time.time() > sealed['expires']:\n"
                                            "    raise refused('expired', 'x')\nreturn sealed['carried']")],
     http_checks.check_request_state, ["its payload rewritten for publish('two')", "the tag must cover the whole payload"]),
    # A blind learner's, each ✓ from the check before its case was added.
    ("expiry-truncated", [("sealed.py", "math.ceil(time.time() + LIFETIME_S)", "int(time.time() + LIFETIME_S)")],
     http_checks.check_request_state, ["at 1300.75 it is still valid", "data.reason 'expired'", "int(...)"]),
    ("expiry-not-rounded", [("sealed.py", "math.ceil(time.time() + LIFETIME_S)", "time.time() + LIFETIME_S")],
     http_checks.check_request_state, ["at 1300.75 it is still valid", "data.reason 'expired'", "ends it at 1300.5"]),
    ("arguments-bound-by-str", [with_body("sealed.py", "digest", "return str(arguments)")],
     http_checks.check_request_state, ["keys in another order are the same request",
                                       "data.reason 'other_request'", "never str(arguments)"]),
    ("tag-16-bytes-padded", [("sealed.py", "tag = hmac.new(KEY, payload, hashlib.sha256).digest()",
                              "tag = hmac.new(KEY, payload, hashlib.sha256).digest()[:16] + bytes(16)"),
                             ("sealed.py", "hmac.compare_digest(tag, hmac.new(KEY, payload, hashlib.sha256).digest())",
                              "hmac.compare_digest(tag[:16], hmac.new(KEY, payload, hashlib.sha256).digest()[:16])")],
     http_checks.check_request_state, ["last 16 bytes of its 32-byte tag changed", "where HTTP 400 with error -32602 was due"]),
    ("hmac-sha1-padded", [("sealed.py", "tag = hmac.new(KEY, payload, hashlib.sha256).digest()",
                           "tag = hmac.new(KEY, payload, hashlib.sha1).digest() + bytes(12)"),
                          ("sealed.py", "hmac.compare_digest(tag, hmac.new(KEY, payload, hashlib.sha256).digest())",
                           "hmac.compare_digest(tag, hmac.new(KEY, payload, hashlib.sha1).digest() + bytes(12))")],
     http_checks.check_request_state, ["not HMAC-SHA256 under KEY", "SHA-1"]),
    ("tag-compared-with-==", [("sealed.py", "if not hmac.compare_digest(tag, hmac.new(KEY, payload, hashlib.sha256).digest()):",
                               "if tag != hmac.new(KEY, payload, hashlib.sha256).digest():")],
     http_checks.check_request_state, ["must compare the tag with hmac.compare_digest", "reads sealed.py"]),
    ("header-without-its-refusal", [(MIRROR, "    if not all(\" \" <= character <= \"~\" or character == \"\\t\" for character in value):\n"
                                             "        raise mismatch(f\"{name} holds a character a header value cannot carry\")\n", "")],
     http_checks.check_header_rules, ["not ASCII, sent as it is", "error -32602, where -32020 was due", "header()"]),
    ("decoded-name-stripped", [(MIRROR, '.decode("utf-8")', '.decode("utf-8").strip()')],
     http_checks.check_header_rules, ["the sentinel holds ' shout ', spaces and all", "where HTTP 400 with error -32020 was due"]),
    ("non-string-state-crashes", [("sealed.py", "if not isinstance(state, str) or not state.startswith(PREFIX):",
                                   "if not state.startswith(PREFIX):")],
     http_checks.check_request_state, ["not a string", "-32603"]),
]

FIELDS_FIRST = """
if not isinstance(state, str) or not state.startswith(PREFIX):
    raise refused("malformed", "not ours")
encoded = state[len(PREFIX):]
try:
    raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    sealed = json.loads(raw[TAG_BYTES:])
except ValueError:
    raise refused("malformed", "unreadable") from None
if (sealed["method"], sealed["name"], sealed["arguments"]) != (method, name, digest(arguments)):
    raise refused("other_request", "another request")
if time.time() > sealed["expires"]:
    raise refused("expired", "expired")
if not hmac.compare_digest(raw[:TAG_BYTES], hmac.new(KEY, raw[TAG_BYTES:], hashlib.sha256).digest()):
    raise refused("tampered", "does not verify")
return sealed["carried"]
"""
SEALED = "sealed.py"
# A blind learner's (session 11), each ✓ from the check at 74951b4.
MISTAKES += [
    ("sentinel-text-stripped", [(MIRROR, "value[len(start):-len(end)], validate=True", "value[len(start):-len(end)].strip(), validate=True")],
     http_checks.check_header_rules, ["=?base64? c2hvdXQ=?=", "the value's own", "where HTTP 400 with error -32020 was due"]),
    ("body-name-indexed", [(MIRROR, "if decoded(name) != params.get(field):", "if decoded(name) != params[field]:")],
     http_checks.check_header_rules, ["a tools/call without a name", "error -32603, where -32020 or -32602 was due"]),
    ("non-string-body-version-compared", [(MIRROR, "if isinstance(body_version, str) and version != body_version:",
                                           "if body_version is not None and version != body_version:")],
     http_checks.check_header_rules, ["_meta version is not a string", "error -32020, where -32602 was due"]),
    ("body-name-stringified", [(MIRROR, "if decoded(name) != params.get(field):", "if decoded(name) != str(params.get(field)):")],
     http_checks.check_header_rules, ["the number 42", "error -32602, where -32020 was due"]),
    ("url-safe-alphabet-accepted", [(MIRROR, "validate=True)", 'altchars=b"-_", validate=True)')],
     http_checks.check_header_rules, ["=?base64?Pz8-?=", "standard alphabet", "where -32020 was due"]),
    ("prefix-not-checked", [(SEALED, "if not isinstance(state, str) or not state.startswith(PREFIX):",
                             "if not isinstance(state, str) or len(state) <= len(PREFIX):")],
     http_checks.check_request_state, ["v2.", "open_state returned"]),
    ("method-not-bound", [(SEALED, '(sealed["method"], sealed["name"], sealed["arguments"]) != (method, name, digest(arguments))',
                           '(sealed["name"], sealed["arguments"]) != (name, digest(arguments))')],
     http_checks.check_request_state, ["prompts/get", "open_state returned"]),
    ("expiry-int-plus-one", [(SEALED, "math.ceil(time.time() + LIFETIME_S)", "int(time.time() + LIFETIME_S) + 1")],
     http_checks.check_request_state, ["sealed at 1000.0", "at 1060.5", "open_state returned"]),
    ("lifetime-hard-coded", [(SEALED, "math.ceil(time.time() + LIFETIME_S)", "math.ceil(time.time() + 300)")],
     http_checks.check_request_state, ["LIFETIME_S = 60", "at 1060.5", "open_state returned"]),
    ("tag-verified-last", [with_body(SEALED, "open_state", FIELDS_FIRST)],
     http_checks.check_request_state, ["the tag is verified first", "data.reason 'other_request', where 'tampered' was due"]),
    ("standard-base64", [(SEALED, "return PREFIX + base64url(tag + payload)",
                          "return PREFIX + base64.b64encode(tag + payload).rstrip(b'=').decode()")],
     http_checks.check_request_state, ["not v1. followed by URL-safe Base64 without padding", "writes - and _"]),
    ("clock-monotonic", [(SEALED, "if time.time() > sealed", "if time.monotonic() > sealed")],
     http_checks.check_request_state, ["open_state returns what seal carried", "'expired'", "time.time()"]),
]


@pytest.mark.parametrize("changes, check, phrases", [case[1:] for case in MISTAKES], ids=[case[0] for case in MISTAKES])
def test_a_typical_mistake_fails_naming_its_rule(verdict, tmp_path, changes, check, phrases):
    out = verdict(check, server(tmp_path, changes))
    assert out.startswith("✗"), out
    missing = [phrase for phrase in phrases if phrase not in out]
    assert not missing, f"{missing} not in:\n{out}"


def test_the_suite_names_each_failing_check(verdict, tmp_path):
    folder = server(tmp_path, MISTAKES[0][1])
    out = verdict(http_checks.check_with_suite, folder, ["http-header-validation"])
    assert out.startswith("✗ the official suite found"), out
    assert "FAILURE http-header-validation sep-2243-server-reject-invalid-headers: Expected HTTP 400, got 200" in out, out


def test_a_module_that_does_not_compile_is_named_with_its_line(verdict, tmp_path):
    # A blind learner's: "not done yet ... Run every %%writefile cell above" sent a learner who had run them all back
    # to the cells; the SyntaxError was the cause.
    broken = SOLUTION["sealed.py"].replace("def seal(method, name, arguments, carried=None):",
                                           "def seal(method, name, arguments, carried=None)")
    folder = server(tmp_path, [("sealed.py", SOLUTION["sealed.py"], broken)])
    line = broken.splitlines().index("def seal(method, name, arguments, carried=None)") + 1
    for check in (http_checks.check_header_rules, http_checks.check_request_state, http_checks.check_with_suite):
        out = verdict(check, folder)
        assert out.startswith(f"✗ Your server cannot start: sealed.py, line {line}: SyntaxError:"), out
