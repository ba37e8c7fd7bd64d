"""Checks for exercise 06, tasks 1 and 2: read tool hints with their defaults; route content blocks by audience."""

import copy

from .attempt import attempt, missing
from .servers import stdio_lab
from .verdict import failed, not_done, passed, short

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
DEFAULTS = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}


def _is_for_model(block):
    return "assistant" in block.get("annotations", {}).get("audience", ["assistant"])


def _label(block):
    annotations = block.get("annotations", {})
    audience = f"audience {short(annotations['audience'])}" if "audience" in annotations else "no audience"
    return f"the {block.get('type')} block ({audience})"


def _types(blocks):
    return "[" + ", ".join(str(block.get("type")) for block in blocks) + "]"


def _by_priority(blocks):
    return sorted(blocks, key=lambda block: -block.get("annotations", {}).get("priority", 0))


# --- task 2: which blocks go to the model --------------------------------------------------------

MIXED_CONTENT = [
    {"type": "text", "text": "Two notes match."},
    {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png",
     "annotations": {"audience": ["user", "assistant"], "priority": 0.5}},
    {"type": "text", "text": "Showing the chart to you now.", "annotations": {"audience": ["user"]}},
    {"type": "resource_link", "uri": "notes://welcome", "name": "welcome", "annotations": {"priority": 0.2}},
    # An audience that names no one is given all the same: it does not include the model.
    {"type": "text", "text": "Draft: not for display.", "annotations": {"audience": []}},
]


def check_model_blocks(for_the_model, lab=None):
    """for_the_model(content): the blocks of a tool result a host passes to the model, judged by audience."""
    if missing(for_the_model):
        not_done("define for_the_model(content) first.")
        return
    with stdio_lab(lab) as wire:
        report = wire.request("tools/call", {"name": "night_report", "arguments": {}}).result["content"]
    cases = [("night_report's result", report), ("a result with blocks that say less", MIXED_CONTENT)]
    for story, content in cases:
        outcome = attempt(for_the_model, copy.deepcopy(content))
        if outcome.not_done:
            not_done("for_the_model still raises NotImplementedError. Keep the blocks whose audience includes the model.")
            return
        if not _judge_blocks(story, content, outcome, for_the_model):
            return
    passed("for_the_model kept the blocks whose audience includes \"assistant\" or is not given, in the server's order, "
           "and left out the ones for the user alone (the hypnogram image among them) and the one whose audience "
           "names no one.")


def _judge_blocks(story, content, outcome, for_the_model):
    if outcome.error:
        failed(f"For {story}, your function raised {outcome.error_text}",
               hint="Not every block has annotations, and not every annotations object has an audience.")
        return False
    got = outcome.value
    if not isinstance(got, list) or any(block not in content for block in got):
        failed(f"For {story}, you returned {short(got, 120)}; return a list of the blocks themselves.")
        return False
    for block in content:
        if block in got and not _is_for_model(block) and block["annotations"]["audience"] == []:
            failed(f"For {story}, you passed {_label(block)} to the model; an empty audience names no one, so not "
                   "the model.",
                   hint="Only a block with no audience at all is unrestricted. An audience of [] is given, and "
                        "\"assistant\" is not in it: test whether \"assistant\" is in the list, not whether the list "
                        "is empty.")
            return False
        if block in got and not _is_for_model(block):
            failed(f"For {story}, you passed {_label(block)} to the model; it is for the user only.",
                   hint="Decide by annotations.audience, not by the block's type.")
            return False
    missed = [block for block in content if _is_for_model(block) and block not in got]
    if missed:
        failed(f"For {story}, you left out {_label(missed[0])}, which the model should get.",
               hint=_left_out_hint(missed[0], for_the_model))
        return False
    if len(got) != len([block for block in content if _is_for_model(block)]):
        failed(f"For {story}, you returned some blocks more than once.", hint="Each block goes to the model once.")
        return False
    in_order = [block for block in content if _is_for_model(block)]
    if got != in_order:
        sorted_by = " by priority, most important first" if got == _by_priority(in_order) else ""
        failed(f"For {story}, you returned the right blocks in another order{sorted_by}: {_types(got)}; the server "
               f"sent them as {_types(in_order)}.",
               hint="Keep the blocks in the order the server sent them. priority says which blocks a host drops "
                    "first when the context is short, not where a block goes (the lesson sorted them only to print "
                    "them).")
        return False
    return True


def _left_out_hint(block, for_the_model):
    """Name the rule the learner's filter follows, found by trying it on blocks that tell the rules apart."""
    same_type = {**block, "annotations": {"audience": ["assistant"], "priority": 0.9}}
    low = {"type": "text", "text": "A footnote.", "annotations": {"audience": ["assistant"], "priority": 0.1}}
    kept = attempt(for_the_model, copy.deepcopy([same_type, low])).value
    if isinstance(kept, list) and same_type not in kept and block.get("type") != "text":
        return (f"Decide by annotations.audience, not by the block's type: you leave out {block.get('type')} "
                "blocks even when they are for the model.")
    if isinstance(kept, list) and low not in kept:
        return ("Decide by annotations.audience, not by priority: priority says how much a block matters, not "
                "who it is for.")
    if "audience" not in block.get("annotations", {}):  # after the probes: a block dropped for its priority has none
        return "No audience means the block is not restricted: it is for the model as well as the user."
    return "audience lists everyone a block is for: test whether \"assistant\" is among them."


# --- task 1: hints with their defaults, and only from a trusted server ------------------------------

SPARSE_TOOLS = [
    {"name": "no_annotations", "inputSchema": {"type": "object"}},
    {"name": "says_read_only", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}},
    {"name": "title_only", "inputSchema": {"type": "object"}, "annotations": {"title": "Only a title"}},
]


def _expected_hints(tool, trusted):
    given = tool.get("annotations", {}) if trusted else {}
    return {hint: given.get(hint, default) for hint, default in DEFAULTS.items()}


def check_effective_hints(effective_hints, lab=None):
    """effective_hints(tool, trusted): the four hints a host acts on, defaults filled in, worst case if untrusted."""
    if missing(effective_hints):
        not_done("define effective_hints(tool, trusted) first.")
        return
    with stdio_lab(lab) as wire:
        listed = {tool["name"]: tool for tool in wire.request("tools/list").result["tools"]}
    cases = [(listed[name], True, "trusted") for name in ("read_note", "delete_note", "sync_notes")]
    cases += [(tool, True, "trusted") for tool in SPARSE_TOOLS]
    cases += [(listed["read_note"], False, "not trusted"), (listed["delete_note"], False, "not trusted")]
    for tool, trusted, trust in cases:
        outcome = attempt(effective_hints, copy.deepcopy(tool), trusted)
        if outcome.not_done:
            not_done("effective_hints still raises NotImplementedError. Start from the schema's defaults.")
            return
        story = f"For {tool['name']} from a server you have {trust}" if trust == "not trusted" else \
            f"For {tool['name']} from a trusted server"
        if not _judge_hints(story, tool, trusted, outcome):
            return
    passed("effective_hints filled every missing hint with the schema's default (not read-only, destructive, "
           "not idempotent, open world), took the hints of a trusted server as given, and ignored them from a "
           "server you do not trust.")


def _judge_hints(story, tool, trusted, outcome):
    if outcome.error:
        failed(f"{story}, your function raised {outcome.error_text}",
               hint="A tool may have no annotations at all, or only some of them.")
        return False
    got, expected = outcome.value, _expected_hints(tool, trusted)
    if not isinstance(got, dict) or set(got) != set(HINTS):
        keys = sorted(got) if isinstance(got, dict) else short(got, 80)
        failed(f"{story}, you returned {keys}; return a dict with exactly the four hints {', '.join(HINTS)}.")
        return False
    for hint in HINTS:
        if not isinstance(got[hint], bool):  # 1 == True in Python, but a host reads JSON, where 1 is no boolean
            kind = type(got[hint])  # numpy's bool is named bool too: say whose it is
            kind = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
            failed(f"{story}, you returned {hint} {short(got[hint])} ({kind}); every hint is "
                   "a boolean, True or False.")
            return False
        if got[hint] == expected[hint]:
            continue
        claimed = tool.get("annotations", {}).get(hint)
        if not trusted and claimed is not None and got[hint] == claimed:
            failed(f"{story}, you returned {hint} {got[hint]}, as the server claims.",
                   hint="Annotations from a server you do not trust are not evidence: act on the worst case, the defaults.")
        elif hint not in tool.get("annotations", {}):
            failed(f"{story}, which does not state {hint}, you returned {got[hint]}; the schema's default is {expected[hint]}.",
                   hint="A missing hint takes the schema's default, and the defaults assume the worst.")
        elif claimed is False and got[hint] == DEFAULTS[hint]:
            failed(f"{story}, you returned {hint} {got[hint]}; the tool says {claimed}.",
                   hint="A hint stated as false is stated: `value or default` and `if value:` take False for a "
                        "missing hint. Test whether the key is there (`hint in annotations`, or .get(hint, default)).")
        else:
            failed(f"{story}, you returned {hint} {got[hint]}; the tool says {claimed}.",
                   hint="From a trusted server, a hint the tool states is the one to use.")
        return False
    return True
