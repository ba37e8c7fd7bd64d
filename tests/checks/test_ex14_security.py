"""Exercise 14 checks (poisoned descriptions, the Origin and Host guard): a right answer passes, typical wrong answers fail with the right explanation."""

import json
import re
import unicodedata
from urllib.parse import urlsplit

import pytest

from checks import ex14_security as security

INVISIBLE = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff\U000e0000-\U000e007f]")
RULES = [
    re.compile(r"</?\s*(important|system)\b", re.I),
    re.compile(r"\b(do not|don't|never)\s+(tell|mention|show)\b", re.I),
    re.compile(r"\bbefore (answering|calling)\b", re.I),
    re.compile(r"\b[a-z][a-z0-9+.-]*://", re.I),
    INVISIBLE,
]
# The same rules by name, for the table's flaggers that leave one out.
RULE_BY_NAME = dict(zip(("markup", "secrecy", "before", "uri", "invisible"), RULES))


def fails_naming(out, phrases):
    return out.startswith("✗") and all(phrase in out for phrase in phrases)


@pytest.fixture(scope="module")
def weather():
    with security.weather_server() as wire:
        yield wire


def stub(*args):
    raise NotImplementedError("your code here")


def all_text(tool):
    """Every description of a tool, joined (the JSON text keeps nested ones)."""
    return " ".join(re.findall(r'"description":\s*"((?:[^"\\]|\\.)*)"', json.dumps(tool, ensure_ascii=False)))


# --- task 1: poisoned descriptions ---------------------------------------------------------------

def flag_right(reply, other_tools):
    others = re.compile(r"\b(" + "|".join(map(re.escape, other_tools)) + r")\b")
    return {tool["name"] for tool in reply["result"]["tools"]
            if any(rule.search(all_text(tool)) for rule in RULES) or others.search(all_text(tool))}


def test_poison_flagger_right(verdict, weather, lab):
    out = verdict(security.check_poison_flagger, flag_right, weather, lab)
    assert out.startswith("✓ Your function flagged get_alerts, convert_temperature, air_quality")


def flag_with_a_stack(reply, other_tools):
    """Written differently: a stack walk of the descriptions, and any format character (Unicode Cf) as invisible."""
    flagged = set()
    for tool in reply["result"]["tools"]:
        stack, texts = [tool], []
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                texts += [v for k, v in node.items() if k == "description" and isinstance(v, str)]
                stack += [v for k, v in node.items() if k != "description"]
            elif isinstance(node, list):
                stack += node
        for text in texts:
            shown = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
            if shown != text or any(rule.search(shown) for rule in RULES[:4]) or any(
                    re.search(rf"(?<!\w){re.escape(name)}(?!\w)", shown) for name in other_tools):
                flagged.add(tool["name"])
    return flagged


def test_poison_flagger_written_differently(verdict, weather, lab):
    out = verdict(security.check_poison_flagger, flag_with_a_stack, weather, lab)
    assert out.startswith("✓ Your function flagged get_alerts, convert_temperature, air_quality"), out


def test_poison_flagger_that_reads_only_the_top_description(verdict, weather, lab):
    def top_only(reply, other_tools):
        return {t["name"] for t in reply["result"]["tools"] if any(r.search(t["description"]) for r in RULES)}
    out = verdict(security.check_poison_flagger, top_only, weather, lab)
    assert out.startswith("✗ On the weather server your function did not flag convert_temperature")
    assert "inputSchema properties" in out


def test_poison_flagger_without_the_invisible_rule(verdict, weather, lab):
    def visible_only(reply, other_tools):
        return {t["name"] for t in reply["result"]["tools"] if any(r.search(all_text(t)) for r in RULES[:-1])}
    out = verdict(security.check_poison_flagger, visible_only, weather, lab)
    assert "did not flag air_quality" in out and "invisible tag characters that spell" in out


def test_poison_flagger_that_flags_a_server_naming_its_own_tools(verdict, weather, lab):
    def any_tool_name(reply, other_tools):
        names = other_tools + [t["name"] for t in reply["result"]["tools"]]
        return {t["name"] for t in reply["result"]["tools"]
                if any(r.search(all_text(t)) for r in RULES) or any(n in t["description"] for n in names if n != t["name"])}
    out = verdict(security.check_poison_flagger, any_tool_name, weather, lab)
    assert out.startswith("✗ On the weather server your function flagged get_forecast, which is harmless")
    # Asked again without the get_alerts in its text, it flags nothing: the name is the cause, not the °C.
    assert "A server may name its own tools" in out and "Accented letters" not in out, out


def test_poison_flagger_stub(verdict, weather, lab):
    assert verdict(security.check_poison_flagger, stub, weather, lab).startswith("not done yet")


# --- task 2: an Origin and Host guard --------------------------------------------------------------

def guard_right(host, origin, port):
    local = {f"127.0.0.1:{port}", f"localhost:{port}"}
    if host not in local:
        return 421
    if origin is not None and origin not in {f"http://{name}" for name in local}:
        return 403
    return None


def test_origin_guard_right(verdict, http):
    out = verdict(security.check_origin_guard, guard_right, http)
    assert out.startswith("✓ Your guard served the 5 local requests and refused the 11 others")
    assert "stricter than SDK 2.3.0" in out


def test_origin_guard_that_checks_only_origin(verdict, http):
    out = verdict(security.check_origin_guard, lambda h, o, p: 403 if o and "evil" in o else None, http)
    assert out.startswith("✗ a sandboxed frame or a file:// page")
    assert "the lab server (SDK 2.3.0) answers 403 Invalid Origin header" in out


def test_origin_guard_with_prefix_tests(verdict, http):
    def prefixes(host, origin, port):
        if not host.startswith(("127.0.0.1", "localhost")):
            return 421
        if origin and not origin.startswith(("http://127.0.0.1", "http://localhost")):
            return 403
        return None
    out = verdict(security.check_origin_guard, prefixes, http)
    assert out.startswith("✗ a look-alike host name") and "answers 421 Invalid Host header" in out
    assert re.search(r":\d{2,5}", out) is None, "the endpoint's port is never printed"


def test_origin_guard_with_an_unsendable_answer(verdict, http):
    out = verdict(security.check_origin_guard, lambda h, o, p: "refuse", http)
    assert out.startswith("✗ Your guard did not give an answer the endpoint can send")


# --- rules the first tester found the check let through ---------------------------------------------------

def descriptions_in(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "description" and isinstance(value, str):
                yield value
            else:
                yield from descriptions_in(value)
    elif isinstance(node, list):
        for item in node:
            yield from descriptions_in(item)


def flag_texts(suspicious):
    """Flag a tool when suspicious(text, other_tools) holds for any description in its whole definition."""
    def work(reply, other_tools):
        return {tool["name"] for tool in reply["result"]["tools"]
                if any(suspicious(text, other_tools) for text in descriptions_in(tool))}
    return work


def names_another(text, others):
    return any(re.search(rf"\b{re.escape(name)}\b", text) for name in others)


@pytest.mark.parametrize("work, phrases", [
    pytest.param(flag_texts(lambda text, others: "before" in text.lower() or any(ord(ch) > 127 for ch in text)
                            or names_another(text, others)),
                 ("flagged get_forecast, which is harmless", "Accented letters and symbols such as °C are ordinary"),
                 id="any-non-ascii"),
    pytest.param(flag_texts(lambda text, others: "before" in text.lower() or bool(INVISIBLE.search(text))
                            or names_another(text, others)),
                 ("flagged sun_times, which is harmless", "before sunrise"), id="the-word-before"),
    pytest.param(flag_texts(lambda text, others: bool(re.search("[\U000e0000-\U000e007f]", text))
                            or bool(re.search(r"before (answering|calling)|never mention|<important>", text, re.I))
                            or any(name in text for name in others)),
                 ("did not flag pollen_count", "U+200B"), id="tag-characters-only"),
])
def test_poison_flagger_with_rules_that_fit_only_the_first_sample(verdict, weather, lab, work, phrases):
    out = verdict(security.check_poison_flagger, work, weather, lab)
    assert out.startswith("✗") and all(phrase in out for phrase in phrases), out


def test_poison_flagger_that_reads_only_the_top_and_the_arguments(verdict, weather, lab):
    def shallow(reply, other_tools):
        flagged = set()
        for tool in reply["result"]["tools"]:
            texts = [tool.get("description", "")] + [
                prop.get("description", "") for prop in tool.get("inputSchema", {}).get("properties", {}).values()]
            if any(rule.search(text) for rule in RULES for text in texts):
                flagged.add(tool["name"])
        return flagged
    out = verdict(security.check_poison_flagger, shallow, weather, lab)
    assert out.startswith("✗ On the weather server your function did not flag marine_forecast"), out
    assert "$defs" in out, out


# --- 14 task 1 · poisoned descriptions ----------------------------------------------------------------

def descriptions(tool, nested=True):
    if not nested:
        return tool.get("description", "")
    return " ".join(re.findall(r'"description":\s*"((?:[^"\\]|\\.)*)"', json.dumps(tool, ensure_ascii=False)))


def flagger(*, rules=tuple(RULE_BY_NAME), nested=True, others=True):
    def work(reply, other_tools):
        named = re.compile(r"\b(" + "|".join(map(re.escape, other_tools)) + r")\b") if other_tools else None
        flagged = set()
        for tool in reply["result"]["tools"]:
            text = descriptions(tool, nested)
            if any(RULE_BY_NAME[rule].search(text) for rule in rules) or (others and named and named.search(text)):
                flagged.add(tool["name"])
        return flagged
    return work


FLAG_RIGHT = [
    pytest.param(flagger(), id="solution"),
    pytest.param(lambda reply, others: sorted(flagger()(reply, others)), id="a-sorted-list"),
]
FLAG_WRONG = [
    pytest.param(flagger(nested=False), ("did not flag convert_temperature", "inputSchema properties"),
                 id="top-description-only"),
    pytest.param(flagger(rules=("markup", "secrecy", "before", "uri")), ("did not flag air_quality",
                                                                         "invisible tag characters"), id="no-invisible-rule"),
    pytest.param(flagger(rules=("invisible",), others=False), ("did not flag get_alerts",), id="invisible-only"),
    pytest.param(lambda reply, others: {t["name"] for t in reply["result"]["tools"]},
                 ("flagged", "which is harmless"), id="flags-everything"),
    pytest.param(lambda reply, others: any(INVISIBLE.search(descriptions(t)) for t in reply["result"]["tools"]),
                 ("return the names of the flagged tools",), id="returns-a-bool"),
    pytest.param(lambda reply, others: {t["name"] for t in reply["result"]["tools"] if not descriptions(t).isprintable()
                                        or any(mark in descriptions(t) for mark in ("<", "://"))},
                 ("did not flag get_alerts", "what it says"), id="shape-not-meaning"),
]


@pytest.mark.parametrize("work", FLAG_RIGHT)
def test_poison_flagger_right_answers_pass(verdict, weather, lab, work):
    assert verdict(security.check_poison_flagger, work, weather, lab).startswith("✓ Your function flagged")


@pytest.mark.parametrize("work, phrases", FLAG_WRONG)
def test_poison_flagger_wrong_answers_name_their_mistake(verdict, weather, lab, work, phrases):
    out = verdict(security.check_poison_flagger, work, weather, lab)
    assert fails_naming(out, phrases), out


# --- 14 task 2 · the Origin and Host guard ------------------------------------------------------------------

def guard(*, host_check=True, origin_check=True, host_codes=(421, 403), refuse_as=int, prefix=False):
    def work(host, origin, port):
        local = {f"127.0.0.1:{port}", f"localhost:{port}"}
        host_ok = host.startswith(("127.0.0.1", "localhost")) if prefix else host in local
        if host_check and not host_ok:
            return refuse_as(host_codes[0])
        origins = {f"http://{name}" for name in local}
        origin_ok = origin.startswith(("http://127.0.0.1", "http://localhost")) if prefix and origin else (
            origin is None or origin in origins)
        if origin_check and not origin_ok:
            return refuse_as(host_codes[1])
        return None
    return work


GUARD_RIGHT = [
    pytest.param(guard(), id="solution"),
    pytest.param(lambda host, origin, port: (421 if (urlsplit(f"//{host}").hostname, urlsplit(f"//{host}").port) not in
                                             {("127.0.0.1", port), ("localhost", port)} else
                                             403 if origin is not None and (urlsplit(origin).scheme, urlsplit(origin).netloc)
                                             not in {("http", f"127.0.0.1:{port}"), ("http", f"localhost:{port}")}
                                             else None), id="parsed-name-and-port"),
]
GUARD_WRONG = [
    # Decided against a blind learner's ✓: the task calls both names this endpoint, and SDK 2.3.0 serves the pair.
    pytest.param(lambda host, origin, port: (421 if host.rsplit(":", 1) not in (["127.0.0.1", str(port)],
                                                                              ["localhost", str(port)])
                                             else 403 if origin and origin != f"http://{host}" else None),
                 ("a page this endpoint served as localhost, calling it as 127.0.0.1", "should answer 200",
                  "the lab server (SDK 2.3.0) answers 200", "not with the Host of the request"),
                 id="origin-compared-with-host"),
    pytest.param(lambda host, origin, port: 421 if host.split(":")[0] not in ("127.0.0.1", "localhost") else
                 403 if origin and origin not in (f"http://127.0.0.1:{port}", f"http://localhost:{port}") else None,
                 ("a request for another local port (Host: 127.0.0.1:8080)", "should answer 421",
                  "SDK 2.3.0 allows any port", "cutting Host at ':' drops it"), id="host-port-ignored"),
    pytest.param(lambda host, origin, port: 421 if urlsplit(f"//{host}").hostname not in ("127.0.0.1", "localhost") else
                 403 if origin and origin not in (f"http://127.0.0.1:{port}", f"http://localhost:{port}") else None,
                 ("Host: 127.0.0.1:8080", "should answer 421"), id="host-parsed-port-ignored"),
    pytest.param(guard(refuse_as=str), ("guard returned '4",), id="status-as-text"),
    pytest.param(guard(host_check=False), ("DNS rebinding", "should answer 421"), id="no-host-check"),
    pytest.param(guard(origin_check=False), ("a page on another site", "should answer 403"), id="no-origin-check"),
    pytest.param(guard(host_codes=(403, 421)), ("answered 421, it should answer 403",), id="codes-swapped"),
    pytest.param(guard(prefix=True), ("a look-alike host name", "prefix test"), id="prefix-tests"),
    pytest.param(lambda host, origin, port: 403 if origin else None, ("a page this endpoint served", "should answer 200"),
                 id="every-origin-refused"),
    pytest.param(lambda host, origin, port: 1 / 0, ("raised ZeroDivisionError", "Host: 127.0.0.1:<port>"), id="raises"),
    # Unpacks 'name:port': the Host without a port (localhost) makes it raise, and the message names that request.
    pytest.param(lambda host, origin, port: (lambda name, number: 421 if name not in ("127.0.0.1", "localhost") or
                                             number != str(port) else None)(*host.split(":")),
                 ("raised TypeError", "for a request with Host: localhost.", "a Host without a port"),
                 id="unpacks-name-and-port"),
    pytest.param(lambda host, origin, port: 421 if host.rsplit(":", 1)[0] not in ("127.0.0.1", "localhost") else
                 403 if origin is not None and urlsplit(origin).hostname not in ("127.0.0.1", "localhost") else None,
                 ("https at this address", "should answer 403"), id="origin-hostname-only"),
    pytest.param(lambda host, origin, port: 421 if not host.startswith(("127.0.0.1:", "localhost")) else
                 403 if origin and origin not in (f"http://127.0.0.1:{port}", f"http://localhost:{port}") else None,
                 ("Host: localhost.evil.example", "should answer 421"), id="host-prefix-localhost"),
    pytest.param(lambda host, origin, port: 421 if host not in (f"127.0.0.1:{port}", f"localhost:{port}") else
                 403 if origin and not origin.startswith(("http://127.0.0.1", "http://localhost:")) else None,
                 ("Origin: http://127.0.0.1.evil.example", "should answer 403"), id="origin-prefix-127"),
]


@pytest.mark.parametrize("work", GUARD_RIGHT)
def test_origin_guard_right_answers_pass(verdict, http, work):
    assert verdict(security.check_origin_guard, work, http).startswith("✓ Your guard served the 5 local requests")


@pytest.mark.parametrize("work, phrases", GUARD_WRONG)
def test_origin_guard_wrong_answers_name_their_mistake(verdict, http, work, phrases):
    out = verdict(security.check_origin_guard, work, http)
    assert fails_naming(out, phrases), out


# --- answers a blind learner run found the check passed or blamed on the wrong cause ------------------------------

def walk(node, into_lists=True):
    """Every description in a definition; into_lists=False walks dicts only, as the learner's first walker did."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "description" and isinstance(value, str):
                yield value
            else:
                yield from walk(value, into_lists)
    elif isinstance(node, list) and into_lists:
        for item in node:
            yield from walk(item, into_lists)


def flag_by(texts, *, others=True, extra=lambda text: False):
    """The solution's rules over texts(tool); others=False leaves out the names of other servers' tools."""
    def work(reply, other_tools):
        return {tool["name"] for tool in reply["result"]["tools"]
                if any(any(rule.search(text) for rule in RULES) or extra(text)
                       or (others and names_another(INVISIBLE.sub("", text), other_tools)) for text in texts(tool))}
    return work


def flag_returning_at_the_first_hit(reply, other_tools):
    for tool in reply["result"]["tools"]:
        if any(any(rule.search(text) for rule in RULES) or names_another(text, other_tools) for text in walk(tool)):
            return {tool["name"]}
    return set()


def flag_by_object_hook(reply, other_tools):
    """Right, written differently: json.loads hands every object of the definition to a hook that collects."""
    flagged = set()
    for tool in reply["result"]["tools"]:
        texts = []
        json.loads(json.dumps(tool), object_hook=lambda obj: texts.extend(
            v for k, v in obj.items() if k == "description" and isinstance(v, str)) or obj)
        if any(any(rule.search(text) for rule in RULES) or names_another(INVISIBLE.sub("", text), other_tools)
               for text in texts):
            flagged.add(tool["name"])
    return flagged


@pytest.mark.parametrize("work, phrases", [
    pytest.param(flag_by(walk, others=False), ("did not flag uv_index", "sync_notes", "other_tools"),
                 id="other-servers-ignored"),
    pytest.param(flag_by(lambda tool: walk(tool, into_lists=False)), ("did not flag wind_chill", "anyOf", "lists"),
                 id="dicts-walked-lists-skipped"),
    pytest.param(flag_by(lambda tool: walk({key: tool.get(key) for key in ("description", "inputSchema")})),
                 ("did not flag tide_times", "outputSchema"), id="output-schema-skipped"),
    # The harmless sun_times says "the user's local time": the hint names that, not its 'before sunrise'.
    pytest.param(flag_by(walk, extra=lambda text: "user" in text.lower()),
                 ("flagged sun_times, which is harmless", "Without the word \"user's\"", "the user's local"),
                 id="the-word-user"),
    pytest.param(flag_returning_at_the_first_hit, ("flagged only get_alerts", "without get_alerts, it flags",
                                                   "stops at the first tool it flags", "return the set after it"),
                 id="returns-at-the-first-hit"),
])
def test_poison_flagger_wrong_answers_the_learner_found_name_their_mistake(verdict, weather, lab, work, phrases):
    out = verdict(security.check_poison_flagger, work, weather, lab)
    assert fails_naming(out, phrases), out
    hints = out.partition("Hint:")[2]
    assert "before sunrise" not in hints and "inputSchema properties" not in hints, out


@pytest.mark.parametrize("work", [pytest.param(flag_by(walk), id="recursive-walk"),
                                  pytest.param(flag_by_object_hook, id="object-hook")])
def test_poison_flagger_right_answers_written_differently_pass(verdict, weather, lab, work):
    assert verdict(security.check_poison_flagger, work, weather, lab).startswith("✓ Your function flagged")


def test_origin_guard_comparing_parsed_origins_passes(verdict, http):
    def parsed(host, origin, port):
        if host not in (f"127.0.0.1:{port}", f"localhost:{port}"):
            return 421
        if origin is None:
            return None
        parts = urlsplit(origin)
        return None if (parts.scheme, parts.hostname, parts.port) in {("http", "127.0.0.1", port),
                                                                     ("http", "localhost", port)} else 403
    assert verdict(security.check_origin_guard, parsed, http).startswith("✓ Your guard served the 5 local requests")
