"""Checks for exercise 07: read a note through the URI template; fill the prompt with a completed argument."""

import copy

from mcpwire.frames import dumps
from .attempt import RecordingRequest, TooManySends, attempt, missing
from .servers import stdio_lab
from .verdict import failed, not_done, passed, said, short

MAX_REQUESTS = 4
PROMPT = "summarise_topic"
PROMPT_REF = {"type": "ref/prompt", "name": PROMPT}
HEADER_KEYS = ("id", "title", "tags", "date")


# --- task 1: a note through the URI template ------------------------------------------------

NOTE_IDS = ["spindle-density", "welcome", "lab-sync-2026-02-09"]
COLON_NOTE = {"title": "Lab sync: spindles at 10:30", "body": "Agenda: the 10:30 slot.", "tags": ["sync"]}
# The lab's front matter is not YAML: a value is the rest of its line as written. Quotes and brackets stay, a title
# may hold "---", and a body may hold a --- line (a Markdown rule) with key: value lines after it.
WRITTEN_NOTE = {"title": '[draft] Quiet rooms --- "v2"', "tags": ["sleep", "noise"],
                "body": "Before the break.\n\n---\n\nAfter: the second half.\n\n---\n\nThe end."}
UNTAGGED_NOTE = {"title": "Untagged idea", "body": "No tags yet."}  # its front matter says tags: []
# A template of the check's own, answered through its own request: a URI built without the template argument fails.
OWN_TEMPLATE = "archive://sleep-lab/notes/{note_id}.md"


def note_template(wire):
    """The uriTemplate the server lists (notes://{note_id})."""
    return wire.request("resources/templates/list").result["resourceTemplates"][0]["uriTemplate"]


def _header_from_tool(wire, note_id):
    """The answer key, from another primitive: read_note's structuredContent."""
    note = wire.request("tools/call", {"name": "read_note", "arguments": {"note_id": note_id}}).result
    return {key: note["structuredContent"][key] for key in HEADER_KEYS}


class OwnTemplateRequest(RecordingRequest):
    """The check's request for its own template: a resources/read of one of its URIs gets the lab's note under it."""

    def __init__(self, wire, *, max_requests, lab_template):
        super().__init__(wire, max_requests=max_requests)
        self.lab_template = lab_template

    def __call__(self, method, params=None):
        self._one_more()
        params = copy.deepcopy(params)
        note_id = _expanded_id(params.get("uri")) if method == "resources/read" and isinstance(params, dict) else None
        if note_id is None:
            message = self.wire.request(method, params).message
        else:
            message = self.wire.request(method, {**params, "uri": self.lab_template.replace("{note_id}", note_id)}).message
            for content in (message.get("result") or {}).get("contents", []):
                content["uri"] = params["uri"]
        self.sent.append((method, params, message))
        return copy.deepcopy(message)


def _expanded_id(uri):
    head, tail = OWN_TEMPLATE.split("{note_id}")
    if isinstance(uri, str) and uri.startswith(head) and uri.endswith(tail) and len(uri) > len(head + tail):
        return uri[len(head):len(uri) - len(tail)]
    return None


def check_templated_read(note_header, lab=None):
    """note_header(request, template, note_id): expand the template, resources/read it, parse the front matter."""
    if missing(note_header):
        not_done("define note_header(request, template, note_id) first.")
        return
    with stdio_lab(lab) as wire:
        template = note_template(wire)
        for note_id in NOTE_IDS:
            if not _read_one(note_header, wire, template, note_id):
                return
        own = OwnTemplateRequest(wire, max_requests=MAX_REQUESTS, lab_template=template)
        if not _read_one(note_header, wire, OWN_TEMPLATE, NOTE_IDS[0], request=own, lab_template=template):
            return
    # No sample note has a colon, quotes, brackets or --- in a value, or no tags, so the check writes such notes in a
    # lab of its own (yours keeps its notes).
    with stdio_lab(None) as own_lab:
        for note in (COLON_NOTE, WRITTEN_NOTE, UNTAGGED_NOTE):
            created = own_lab.request("tools/call", {"name": "create_note", "arguments": note}).result
            if not _read_one(note_header, own_lab, template, created["structuredContent"]["id"]):
                return
    passed(f"note_header read {', '.join(NOTE_IDS)} through {template}, {NOTE_IDS[0]} again through a template of the "
           f"check's own ({OWN_TEMPLATE}), and three notes it wrote: one titled {COLON_NOTE['title']!r}, one titled "
           f"{WRITTEN_NOTE['title']!r} with a --- line in its body, and one with no tags. Their id, title, tags (a "
           "list) and date agree with what read_note says.")


def _read_one(note_header, wire, template, note_id, *, request=None, lab_template=None):
    expected = _header_from_tool(wire, note_id)
    request = request or RecordingRequest(wire, max_requests=MAX_REQUESTS)
    outcome = attempt(note_header, request, template, note_id)
    if outcome.not_done:
        not_done("note_header still raises NotImplementedError. Build the URI, send resources/read, "
                 "parse the front matter.")
        return False
    ignored = lab_template.replace("{note_id}", note_id) if lab_template else None
    return _judge_note(note_id, template.replace("{note_id}", note_id), expected, request, outcome, ignored)


def _judge_note(note_id, uri, expected, request, outcome, ignored=None):
    story = f"For the note {note_id!r}"
    if isinstance(outcome.error, TooManySends):
        failed(f"{story}, your function sent {MAX_REQUESTS} requests and was still going.",
               hint="One resources/read is enough.")
        return False
    reads = [(params, message) for method, params, message in request.sent if method == "resources/read"]
    if not reads:
        failed(f"{story}, your function sent {request.methods or 'nothing'}, and no resources/read.",
               hint="The note is also a resource: read it by its URI.",
               more="The method is resources/read, and its params name the uri the template gives.")
        return False
    params, message = reads[0]
    asked = params.get("uri") if isinstance(params, dict) else None
    if asked != uri and asked == ignored:
        failed(f"{story}, the check gave your function the template {OWN_TEMPLATE!r}, and you read {asked!r}: your "
               "URI does not come from the template argument.",
               hint="A server may list any template: build the URI from template, the argument, not from "
                    "notes://{note_id}.")
        return False
    if asked != uri:
        failed(f"{story}, you read the URI {short(asked)}; the template gives {uri!r}.", server=said(message),
               hint="Replace the whole {note_id}, braces included, with the id.")
        return False
    if "error" in message:
        failed(f"{story}, the server refused your resources/read.", server=said(message))
        return False
    if outcome.error:
        failed(f"{story}, your function raised {outcome.error_text}", hint=_raised_hint(outcome.error, expected))
        return False
    got = outcome.value
    if not isinstance(got, dict):
        failed(f"{story}, you returned {short(got)}; return a dict with {', '.join(HEADER_KEYS)}.")
        return False
    for key in HEADER_KEYS:
        if got.get(key) != expected[key]:
            failed(f"{story}, you returned {key} = {short(got.get(key))}; the front matter says {short(expected[key])}.",
                   hint=_header_hint(key, got.get(key), expected[key]))
            return False
    beyond = [key for key in got if key not in HEADER_KEYS]  # the lab's front matter has exactly these four keys
    if beyond:
        failed(f"{story}, you also returned {', '.join(map(repr, beyond[:3]))}, which the front matter does not have: "
               "your parser read on past the front matter, into the note's body.",
               hint="The front matter is the lines between the first two --- lines; a body can have a --- line of "
                    "its own, and a body line can hold a colon too.")
        return False
    return True


FIRST_SPLIT = "split once, from the left, at the first \": \" (line.partition(\": \") or line.split(\": \", 1))"
NOT_YAML = ("The front matter is not YAML: each line is 'key: value', split at the first \": \", and the value is "
            "the rest of the line as written (quotes and brackets included, the date as text). Only tags is a list.")


def _raised_hint(error, expected):
    if "yaml" in type(error).__module__:
        return f"A YAML parser read this note's front matter ({_tricky(expected)}). {NOT_YAML}"
    colon = next((value for value in expected.values() if isinstance(value, str) and ": " in value), None)
    if colon is not None and not isinstance(error, (KeyError, IndexError, TypeError, AttributeError)):
        return (f"This note's front matter has a colon inside a value ({colon!r}), and it is not strict YAML: each "
                "line is 'key: value', so split it at the first \": \" only.")
    if isinstance(error, (KeyError, ValueError)) and "---" in expected["title"]:
        return ("This note's title holds ---, and its body has a --- line of its own: the front matter ends at the "
                "first line after the opening one that is --- and nothing else, not at the first --- in the text nor "
                "at the last --- line.")
    return "result[\"contents\"] is a list; the note's Markdown is contents[0][\"text\"]."


def _tricky(expected):
    title = expected["title"]
    if ": " in title:
        return f"the title {title!r} holds a colon"
    return f"the title is {title!r}" if any(mark in title for mark in "\"[]") else "the date is a date to YAML"


def _header_hint(key, value, expected):
    if not isinstance(value, (str, list)) and value is not None and str(value) == str(expected):
        return (f"Your parser turned the {key} into a {type(value).__module__}.{type(value).__name__}, the way YAML "
                f"reads it. {NOT_YAML}")
    if isinstance(value, str) and isinstance(expected, str) and value != expected:
        for marks, hint in (("\"'", f"The quotes are part of the title as written. {NOT_YAML}"),
                            ("[]", "The brackets are part of the title: strip [ and ] from the tags only.")):
            if any(mark in expected for mark in marks) and _without(expected, marks) == _without(value, marks):
                return hint
        if "---" in expected and "---" not in value and expected.startswith(value.strip()):
            return ("The title itself holds ---: the front matter ends at the first line that is --- and nothing "
                    "else, not at the first --- in the text.")
        if ":" in expected and value.strip() != expected and expected.startswith(value.strip()):
            return ("A value can hold \": \" too: each front-matter line is 'key: value', so split at the first "
                    "\": \" only.")
    if key == "tags" and expected == [] and isinstance(value, list):
        return "A note without tags says tags: [], which is an empty list: splitting an empty string gives ['']."
    if key == "tags":
        return ("The front matter writes tags as [a, b, c]: strip the brackets, split on commas, strip each tag. "
                "Return a list.")
    if isinstance(value, str) and value != value.strip():
        return "Strip the spaces around each value."
    if value is None:
        return (f"Your dict has no {key!r}: the key is what comes before the first \": \" of its line, and a value may "
                f"hold \": \" too, so {FIRST_SPLIT}.")
    return f"Each front-matter line is 'key: value'; {FIRST_SPLIT}."


# --- task 2: complete the prompt's argument, then get the prompt ----------------------------------

PROMPT_CASES = [("tm", "new student"), ("sl", "lab meeting"), ("zz", "lab meeting")]  # zz completes to nothing


def _completions(wire, prefix):
    reply = wire.request("completion/complete", {"ref": PROMPT_REF, "argument": {"name": "topic", "value": prefix}})
    return reply.result["completion"]["values"]


def _prompt_text(wire, topic, audience):
    reply = wire.request("prompts/get", {"name": PROMPT, "arguments": {"topic": topic, "audience": audience}})
    return reply.result["messages"][0]["content"]["text"]


def check_prompt_completion(summary_prompt, lab=None):
    """summary_prompt(request, prefix, audience): complete the topic, then prompts/get; None when nothing completes."""
    if missing(summary_prompt):
        not_done("define summary_prompt(request, prefix, audience) first.")
        return
    shown = []
    with stdio_lab(lab) as wire:
        for prefix, audience in PROMPT_CASES:
            values = _completions(wire, prefix)
            expected = _prompt_text(wire, values[0], audience) if values else None
            request = RecordingRequest(wire, max_requests=MAX_REQUESTS)
            outcome = attempt(summary_prompt, request, prefix, audience)
            if outcome.not_done:
                not_done("summary_prompt still raises NotImplementedError. Send completion/complete, then prompts/get.")
                return
            if not _judge_prompt(prefix, audience, values, expected, request, outcome):
                return
            shown.append(f"{prefix!r} → {values[0]!r}" if values else f"{prefix!r} → nothing")
    passed(f"summary_prompt completed the topic ({', '.join(shown)}), got {PROMPT} with the completed value and "
           "the audience, and returned its text; with no completion it did not call prompts/get.")


def _judge_prompt(prefix, audience, values, expected, request, outcome):
    story = f"For the prefix {prefix!r}"
    if isinstance(outcome.error, TooManySends):
        failed(f"{story}, your function sent {MAX_REQUESTS} requests and was still going.",
               hint="Two requests: completion/complete, then prompts/get.")
        return False
    if not request.sent or request.methods[0] != "completion/complete":
        failed(f"{story}, your function sent {request.methods or 'nothing'}; it should start with completion/complete.",
               hint="Complete the argument first: a prefix is not a topic the server knows.")
        return False
    _, params, message = request.sent[0]
    params = params if isinstance(params, dict) else {}
    if not _is_prompt_ref(params.get("ref")) or params.get("argument") != {"name": "topic", "value": prefix}:
        failed(f"{story}, your completion/complete params were {short(params)}.", server=_values_said(message),
               hint="completion/complete names what is being completed (ref) and the argument with what is typed "
                    "so far. SDK 2.3.0 answers empty values, not an error, for a prompt it does not know.",
               more=f"ref is {dumps(PROMPT_REF)}; argument names the prompt's argument \"topic\" and its value, the prefix.")
        return False
    gets = [(params, message) for method, params, message in request.sent if method == "prompts/get"]
    if not values:
        if gets:
            failed(f"{story}, completion offered no value, yet your function called prompts/get.",
                   hint="With an empty values list there is no topic to fill in: return None.")
            return False
        if outcome.error or outcome.value is not None:
            failed(f"{story}, completion offered no value; return None "
                   f"(you {'raised ' + outcome.error_text if outcome.error else 'returned ' + short(outcome.value)}).",
                   hint="values is an empty list here: check it before taking values[0].")
            return False
        return True
    if not gets:
        failed(f"{story}, your function sent {request.methods} and no prompts/get.",
               hint="The completed value is a topic: now get the prompt with it.",
               more=f"prompts/get takes the prompt's name ({PROMPT!r}) and its arguments.")
        return False
    get_params, get_message = gets[0]
    arguments = (get_params or {}).get("arguments") if isinstance(get_params, dict) else None
    wanted = {"topic": values[0], "audience": audience}
    if arguments != wanted:
        failed(f"{story}, your prompts/get arguments were {short(arguments)}; expected {short(wanted)}.",
               server=said(get_message), hint=_arguments_hint(prefix, arguments, values))
        return False
    if "error" in get_message:
        failed(f"{story}, the server refused your prompts/get.", server=said(get_message),
               hint=f"The prompt is named {PROMPT!r}.")
        return False
    if outcome.error:
        failed(f"{story}, your function raised {outcome.error_text}",
               hint="The text is result[\"messages\"][0][\"content\"][\"text\"].")
        return False
    if outcome.value != expected:
        failed(f"{story}, you returned {short(outcome.value)}; return the text of the prompt's first message.",
               hint="result[\"messages\"][0][\"content\"][\"text\"], as it is.")
        return False
    return True


def _is_prompt_ref(ref):
    """PromptReference: type and name, and optionally a display title (a string)."""
    if not isinstance(ref, dict) or not isinstance(ref.get("title", ""), str):
        return False
    return {key: value for key, value in ref.items() if key != "title"} == PROMPT_REF


def _values_said(message):
    completion = (message.get("result") or {}).get("completion")
    return f"completion values {short(completion.get('values'))}" if isinstance(completion, dict) else said(message)


def _without(text, marks):
    return text.translate({ord(mark): None for mark in marks})


def _arguments_hint(prefix, arguments, values=()):
    if isinstance(arguments, dict) and arguments.get("topic") in values[1:]:
        return (f"The topic is the first value offered, values[0] ({values[0]!r}); you took "
                f"values[{values.index(arguments['topic'])}] ({arguments['topic']!r}).")
    if not isinstance(arguments, dict):
        return ("prompts/get needs arguments; without them SDK 2.3.0 answers -32603 \"Internal server error\" "
                "(the spec says -32602).")
    if arguments.get("topic") == prefix:
        return "The topic is the completed value, values[0], not the prefix you started from."
    if "audience" not in arguments:
        return "Pass the audience too; without it the prompt says 'lab meeting'."
    return "arguments maps each prompt argument's name to its value: topic and audience."
