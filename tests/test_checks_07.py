"""Exercise 07 checks: a right answer passes, typical wrong answers fail with the right explanation."""

import pytest

import checks


def stub(*args):
    raise NotImplementedError("your code here")


# --- task 1: a note through the URI template -----------------------------------------------------

def note_header(request, template, note_id, *, expand=lambda t, i: t.replace("{note_id}", i), tags_as_list=True):
    text = request("resources/read", {"uri": expand(template, note_id)})["result"]["contents"][0]["text"]
    front = text.removeprefix("---\n").split("\n---\n", 1)[0]
    header = dict(line.split(": ", 1) for line in front.splitlines())
    if tags_as_list:
        header["tags"] = [tag.strip() for tag in header["tags"].strip("[]").split(",") if tag.strip()]
    return {key: header[key] for key in ("id", "title", "tags", "date")}


def test_templated_read_right(verdict, lab):
    out = verdict(checks.check_templated_read, note_header, lab)
    assert out.startswith("✓ note_header read spindle-density, welcome, lab-sync-2026-02-09, a note titled "
                          "'Lab sync: spindles at 10:30'")


def test_templated_read_keeping_the_braces(verdict, lab):
    keep_braces = lambda r, t, i: note_header(r, t, i, expand=lambda t, i: t.replace("note_id", i))  # noqa: E731
    out = verdict(checks.check_templated_read, keep_braces, lab)
    assert out.startswith("✗") and "notes://{spindle-density}" in out and "-32602" in out and "braces included" in out


def test_templated_read_tags_left_as_text(verdict, lab):
    out = verdict(checks.check_templated_read, lambda r, t, i: note_header(r, t, i, tags_as_list=False), lab)
    assert out.startswith("✗") and "tags = [spindles, eeg, memory]" in out and "Return a list" in out


def test_templated_read_through_the_tool(verdict, lab):
    def through_the_tool(request, template, note_id):
        note = request("tools/call", {"name": "read_note", "arguments": {"note_id": note_id}})
        return {key: note["result"]["structuredContent"][key] for key in ("id", "title", "tags", "date")}
    out = verdict(checks.check_templated_read, through_the_tool, lab)
    assert out.startswith("✗") and "no resources/read" in out


# --- task 2: complete, then get the prompt -----------------------------------------------------------


def header_read_past_the_front_matter(request, template, note_id):
    """Every 'key: value' line of the resource, body included: the body of spindle-density has such lines."""
    text = request("resources/read", {"uri": template.replace("{note_id}", note_id)})["result"]["contents"][0]["text"]
    header = {}
    for line in text.splitlines():
        if ": " in line:
            key, value = line.split(": ", 1)
            header.setdefault(key, value)
    header["tags"] = [tag.strip() for tag in header["tags"].strip("[]").split(",")]
    return header


def test_templated_read_past_the_front_matter(verdict, lab):
    out = verdict(checks.check_templated_read, header_read_past_the_front_matter, lab)
    assert out.startswith("✗") and "'Question'" in out and "past the front matter" in out, out

def summary_prompt(request, prefix, audience, *, name="summarise_topic", use_prefix=False, check_empty=True, arguments=True):
    completion = request("completion/complete", {"ref": {"type": "ref/prompt", "name": name},
                                                 "argument": {"name": "topic", "value": prefix}})
    values = completion["result"]["completion"]["values"]
    if check_empty and not values:
        return None
    topic = prefix if use_prefix else values[0]
    params = {"name": "summarise_topic"}
    if arguments:
        params["arguments"] = {"topic": topic, "audience": audience}
    return request("prompts/get", params)["result"]["messages"][0]["content"]["text"]


def test_prompt_completion_right(verdict, lab):
    out = verdict(checks.check_prompt_completion, summary_prompt, lab)
    assert out.startswith("✓ summary_prompt completed the topic ('tm' → 'tmr', 'sl' → 'sleep', 'zz' → nothing)")


def test_prompt_completion_with_the_prefix_as_topic(verdict, lab):
    out = verdict(checks.check_prompt_completion, lambda r, p, a: summary_prompt(r, p, a, use_prefix=True), lab)
    assert out.startswith("✗ For the prefix 'tm'") and "not the prefix" in out


def test_prompt_completion_with_a_misspelt_prompt(verdict, lab):
    out = verdict(checks.check_prompt_completion, lambda r, p, a: summary_prompt(r, p, a, name="summarize_topic"), lab)
    assert out.startswith("✗") and "completion values []" in out and "empty values, not an error" in out


def test_prompt_completion_without_arguments(verdict, lab):
    out = verdict(checks.check_prompt_completion, lambda r, p, a: summary_prompt(r, p, a, arguments=False), lab)
    assert out.startswith("✗") and "-32603" in out and "the spec says -32602" in out


def test_prompt_completion_without_handling_no_value(verdict, lab):
    out = verdict(checks.check_prompt_completion, lambda r, p, a: summary_prompt(r, p, a, check_empty=False), lab)
    assert out.startswith("✗ For the prefix 'zz'") and "IndexError" in out


# --- unfinished work -----------------------------------------------------------------------------------

@pytest.mark.parametrize("check", [checks.check_templated_read, checks.check_prompt_completion])
@pytest.mark.parametrize("answer", [stub, None], ids=["stub", "none"])
def test_an_unfinished_task_is_not_done_yet(verdict, lab, check, answer):
    assert verdict(check, answer, lab).startswith("not done yet:")
