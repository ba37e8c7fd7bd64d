"""Exercise 06, tasks 1 and 2 (hints, content blocks): right answers pass, mistakes are explained, the stub is not done."""

import checks
from checks.ex06_content import check_effective_hints, check_model_blocks

DEFAULTS = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}


def stub(*args):
    raise NotImplementedError("your code here")


# --- task 2 --------------------------------------------------------------------------------------

def for_the_model(content):
    return [block for block in content if "assistant" in block.get("annotations", {}).get("audience", ["assistant"])]


def for_the_model_in_a_loop(content):
    """Right, written differently: the keys tested one by one, the blocks appended in the server's order."""
    chosen = []
    for block in content:
        annotations = block.get("annotations") or {}
        if "audience" not in annotations or "assistant" in annotations["audience"]:
            chosen.append(block)
    return chosen


def sorted_by_priority(content):
    """A blind learner run: the right blocks, most important first."""
    return sorted(for_the_model(content), key=lambda block: -(block.get("annotations") or {}).get("priority", 0))


def empty_audience_taken_for_everyone(content):
    """A blind learner run: an audience of [] read as no audience at all."""
    return [block for block in content
            if not (block.get("annotations") or {}).get("audience") or "assistant" in block["annotations"]["audience"]]


def test_blocks_sorted_by_priority(verdict, lab):
    out = verdict(check_model_blocks, sorted_by_priority, lab)
    assert out.startswith("✗ For night_report's result, you returned the right blocks in another order by priority")
    assert "[text, resource, resource_link]" in out and "in the order the server sent them" in out, out


def test_an_empty_audience_taken_for_everyone(verdict, lab):
    out = verdict(check_model_blocks, empty_audience_taken_for_everyone, lab)
    assert out.startswith("✗ For a result with blocks that say less, you passed the text block (audience [])")
    assert "names no one" in out and "not whether the list is empty" in out, out


def only_exactly_assistant(content):
    return [block for block in content if block.get("annotations", {}).get("audience") in (None, ["assistant"])]


def needs_an_audience(content):
    return [block for block in content if "assistant" in block.get("annotations", {}).get("audience", [])]


def drops_images(content):
    return [block for block in content if block["type"] != "image"]


def reads_annotations_blindly(content):
    return [block for block in content if "assistant" in block["annotations"]["audience"]]


def drops_low_priority(content):
    return [block for block in for_the_model(content) if block.get("annotations", {}).get("priority", 1) >= 0.5]


def drops_images_by_type_too(content):
    return [block for block in for_the_model(content) if block["type"] != "image"]


def test_blocks_dropped_by_priority(verdict, lab):
    out = verdict(check_model_blocks, drops_low_priority, lab)
    assert out.startswith("✗") and "you left out the resource_link block" in out and "not by priority" in out, out


def drops_below_a_third(content):
    return [block for block in for_the_model(content) if block.get("annotations", {}).get("priority", 1) >= 0.3]


def test_a_block_without_audience_dropped_by_priority_is_blamed_on_priority(verdict, lab):
    # night_report's lowest priority is 0.3, so the first block this filter drops is one with no audience at all.
    out = verdict(check_model_blocks, drops_below_a_third, lab)
    assert out.startswith("✗") and "the resource_link block (no audience)" in out and "not by priority" in out, out


def test_blocks_dropped_by_type_after_the_audience_test(verdict, lab):
    out = verdict(check_model_blocks, drops_images_by_type_too, lab)
    assert out.startswith("✗") and "you left out the image block" in out and "not by the block's type" in out, out


def test_blocks_exported():
    assert checks.check_model_blocks is check_model_blocks and checks.check_effective_hints is check_effective_hints


def test_blocks_stub(verdict, lab):
    assert verdict(check_model_blocks, stub, lab).startswith("not done yet: for_the_model still raises")


def test_blocks_right(verdict, lab):
    assert verdict(check_model_blocks, for_the_model, lab).startswith("✓ for_the_model kept the blocks")


def test_blocks_right_written_differently(verdict, lab):
    assert verdict(check_model_blocks, for_the_model_in_a_loop, lab).startswith("✓")


def test_blocks_exact_audience_match(verdict, lab):
    out = verdict(check_model_blocks, only_exactly_assistant, lab)
    assert out.startswith("✗ For night_report's result, you left out the resource_link block (audience [\"user\",\"assistant\"])")
    assert "test whether \"assistant\" is among them" in out


def test_blocks_without_audience_dropped(verdict, lab):
    out = verdict(check_model_blocks, needs_an_audience, lab)
    assert "you left out the text block (no audience)" in out and "not restricted" in out


def test_blocks_by_type(verdict, lab):
    out = verdict(check_model_blocks, drops_images, lab)
    assert out.startswith("✗ For a result with blocks that say less, you passed the text block (audience [\"user\"])")
    assert "for the user only" in out and "not by the block's type" in out


def test_blocks_key_error(verdict, lab):
    out = verdict(check_model_blocks, reads_annotations_blindly, lab)
    assert "your function raised KeyError: 'annotations'" in out


# --- task 1 --------------------------------------------------------------------------------------

def effective_hints(tool, trusted):
    given = tool.get("annotations", {}) if trusted else {}
    return {hint: given.get(hint, default) for hint, default in DEFAULTS.items()}


def effective_hints_written_differently(tool, trusted):
    hints = dict(DEFAULTS)
    if trusted:
        for hint in hints:
            if hint in (tool.get("annotations") or {}):
                hints[hint] = tool["annotations"][hint]
    return hints


def false_by_default(tool, trusted):
    given = tool.get("annotations", {}) if trusted else {}
    return {hint: given.get(hint, False) for hint in DEFAULTS}


def trusts_everyone(tool, trusted):
    return effective_hints(tool, True)


def keeps_the_title(tool, trusted):
    return {**effective_hints(tool, trusted), "title": tool.get("annotations", {}).get("title")}


def hints_as_numbers(tool, trusted):
    return {hint: int(value) for hint, value in effective_hints(tool, trusted).items()}


def test_hints_as_numbers(verdict, lab):
    out = verdict(check_effective_hints, hints_as_numbers, lab)
    assert out.startswith("✗") and "(int); every hint is a boolean" in out, out


def hints_as_numpy_booleans(tool, trusted):
    import numpy
    return {hint: numpy.bool_(value) for hint, value in effective_hints(tool, trusted).items()}


def test_hints_as_numpy_booleans_name_their_type(verdict, lab):
    out = verdict(check_effective_hints, hints_as_numpy_booleans, lab)
    assert out.startswith("✗") and "(numpy.bool); every hint is a boolean" in out, out


def test_hints_stub(verdict, lab):
    assert verdict(check_effective_hints, stub, lab).startswith("not done yet: effective_hints still raises")


def test_hints_right(verdict, lab):
    assert verdict(check_effective_hints, effective_hints, lab).startswith("✓ effective_hints filled every missing hint")


def test_hints_right_written_differently(verdict, lab):
    assert verdict(check_effective_hints, effective_hints_written_differently, lab).startswith("✓")


def test_hints_false_by_default(verdict, lab):
    out = verdict(check_effective_hints, false_by_default, lab)
    assert out.startswith("✗ For no_annotations from a trusted server, which does not state destructiveHint, you returned False")
    assert "the defaults assume the worst" in out


def test_hints_trusting_an_unknown_server(verdict, lab):
    out = verdict(check_effective_hints, trusts_everyone, lab)
    assert out.startswith("✗ For read_note from a server you have not trusted, you returned readOnlyHint True, as the server claims")
    assert "not evidence" in out


def test_hints_extra_keys(verdict, lab):
    out = verdict(check_effective_hints, keeps_the_title, lab)
    assert "exactly the four hints" in out


def hints_or_default(tool, trusted):
    """`value or default` takes a hint stated as false for a missing one."""
    given = tool.get("annotations", {}) if trusted else {}
    return {hint: given.get(hint) or default for hint, default in DEFAULTS.items()}


def test_hints_stated_false_taken_for_missing(verdict, lab):
    # Found by the learner run of round 3: the message said only that the tool states the hint.
    out = verdict(check_effective_hints, hints_or_default, lab)
    assert out.startswith("✗ For read_note from a trusted server, you returned destructiveHint True; the tool says False")
    assert "`value or default`" in out, out
