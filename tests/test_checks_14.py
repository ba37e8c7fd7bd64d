"""Exercise 14 checks (poisoned descriptions, the Origin and Host guard): a right answer passes, typical wrong answers fail with the right explanation."""

import json
import re
import unicodedata

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
    assert out.startswith("✓ Your guard served the 3 local requests and refused the 9 others")
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


@pytest.mark.parametrize("work, phrases", [
    pytest.param(flag_texts(lambda text, others: "before" in text.lower() or any(ord(ch) > 127 for ch in text)),
                 ("flagged get_forecast, which is harmless", "°C"), id="any-non-ascii"),
    pytest.param(flag_texts(lambda text, others: "before" in text.lower() or bool(INVISIBLE.search(text))),
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
