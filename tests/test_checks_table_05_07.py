"""Exercises 05, 06 and 07: each wrong answer a learner might write gets ✗ with a message naming its mistake."""

import pytest

import checks


def fails_naming(out, phrases):
    return out.startswith("✗") and all(phrase in out for phrase in phrases)


# --- 05 task 1 · search, then read the best hit ---------------------------------------------------------

def best_note_tags(*, query_key="query", limit=1, read="read_note", argument="note_id", empty_check=True,
                   from_hit=False, calls_after=0):
    def work(call_tool, topic):
        search = {query_key: topic} if limit is None else {query_key: topic, "limit": limit}
        hits = call_tool("search_notes", search)["result"]["structuredContent"]["hits"]
        if empty_check and not hits:
            return None
        if from_hit:
            return hits[0].get("tags")
        for _ in range(calls_after):
            call_tool("search_notes", search)
        note = call_tool(read, {argument: hits[0]["id"]})
        return note["result"]["structuredContent"]["tags"]
    return work


def best_note_tags_written_differently(call_tool, topic):
    found = call_tool("search_notes", {"limit": 1, "query": topic})["result"]["structuredContent"]
    for hit in found["hits"]:
        return list(call_tool("read_note", {"note_id": hit["id"]})["result"]["structuredContent"]["tags"])
    return None


SEARCH_RIGHT = [
    pytest.param(best_note_tags(), id="solution"),
    pytest.param(best_note_tags_written_differently, id="loop-over-hits"),
]
SEARCH_WRONG = [
    pytest.param(best_note_tags(limit=None), ("no limit (the default is 5)",), id="no-limit"),
    pytest.param(best_note_tags(limit="1"), ("'1' is not of type 'integer'",), id="limit-as-text"),
    pytest.param(best_note_tags(limit=0), ("less than the minimum",), id="limit-zero"),
    pytest.param(best_note_tags(query_key="q"), ("'query' is a required property",), id="query-misnamed"),
    pytest.param(best_note_tags(argument="id"), ("'note_id' is a required property",), id="note-id-misnamed"),
    pytest.param(best_note_tags(read="get_note"), ("a tool named 'get_note'",), id="tool-misnamed"),
    pytest.param(best_note_tags(empty_check=False), ("'zebrafish'", "IndexError", "return None"), id="no-hits-unhandled"),
    pytest.param(best_note_tags(from_hit=True), ("read the hit with read_note",), id="tags-from-the-hit"),
    pytest.param(best_note_tags(calls_after=5), ("called tools 6 times",), id="too-many-calls"),
    pytest.param(lambda call_tool, topic: (lambda tags: tags if tags is None else tuple(tags))(
        best_note_tags()(call_tool, topic)), ("a tuple of the right tags, not a list",), id="tags-as-tuple"),
    pytest.param(lambda call_tool, topic: best_note_tags()(call_tool, topic.split()[0]),
                 ("You searched for 'spindle', not for the topic",), id="first-word-of-the-topic"),
]


@pytest.mark.parametrize("work", SEARCH_RIGHT)
def test_search_then_read_right_answers_pass(verdict, lab, work):
    assert verdict(checks.check_search_then_read, work, lab).startswith("✓")


@pytest.mark.parametrize("work, phrases", SEARCH_WRONG)
def test_search_then_read_wrong_answers_name_their_mistake(verdict, lab, work, phrases):
    out = verdict(checks.check_search_then_read, work, lab)
    assert fails_naming(out, phrases), out


# --- 05 task 2 · result, tool error or protocol error ------------------------------------------------------

def classify(*, is_error_default=False, joiner="\n", detail_text=False, pair=tuple, get_error=True):
    def work(message):
        if (get_error and "error" in message) or (not get_error and message.get("result") is None):
            return pair(("protocol error", message["error"]["code"]))
        result = message["result"]
        if result.get("isError", is_error_default):
            return pair(("tool error", joiner.join(block.get("text", "") for block in result.get("content", []))))
        if detail_text:
            return pair(("result", result["content"][0]["text"]))
        return pair(("result", result.get("structuredContent")))
    return work


CLASSIFY_RIGHT = [
    pytest.param(classify(), id="solution"),
    pytest.param(classify(pair=list), id="a-list-pair"),
    pytest.param(classify(get_error=False), id="tested-through-result"),
]
CLASSIFY_WRONG = [
    pytest.param(classify(is_error_default=True), ("classify said 'tool error'", "leaves out isError"),
                 id="missing-isError-taken-as-true"),
    pytest.param(classify(joiner=" "), ("two blocks", "joined by newlines"), id="texts-joined-by-space"),
    pytest.param(classify(detail_text=True), ("structuredContent",), id="text-instead-of-structured"),
    pytest.param(lambda m: ("protocol error", m["error"]["code"]) if "error" in m else ("result", m["result"]["structuredContent"]),
                 ("raised KeyError: 'structuredContent'", "isError true"), id="tool-errors-forgotten"),
    pytest.param(lambda m: ("tool error", m["error"]["message"]) if "error" in m else classify()(m),
                 ("this is a 'protocol error'", "no tool ran"), id="protocol-error-taken-for-a-tool-error"),
    pytest.param(lambda m: ("result" if "result" in m else "protocol error",), ("return a pair",), id="one-tuple"),
    pytest.param(lambda m: classify()(m) if "error" not in m else ("protocol error", str(m["error"]["code"])),
                 ("expected -32", "an integer"), id="code-as-text"),
    pytest.param(lambda m: classify()(m) if "error" in m else (
        ("result", m["result"]["structuredContent"]) if "structuredContent" in m["result"]
        else ("tool error", "\n".join(block.get("text", "") for block in m["result"]["content"]))),
        ("night_report", "this is a 'result'", "structuredContent is optional"), id="sorted-by-structured-content"),
    pytest.param(lambda m: classify()(m) if "error" in m else (
        ("result", m["result"]["structuredContent"]) if "structuredContent" in m["result"]
        else ("tool error", "\n".join(block["text"] for block in m["result"]["content"]))),
        ("night_report", "raised KeyError: 'text'", "no structuredContent", "not every block", "Decide the kind by isError"),
        id="sorted-by-structured-content-reading-text-of-every-block"),
    pytest.param(lambda m: classify()(m) if "error" in m or m["result"].get("isError") else (
        "result", m["result"]["structuredContent"]),
        ("night_report", "raised KeyError: 'structuredContent'", "no outputSchema", ".get()"),
        id="structured-content-read-as-required"),
    pytest.param(lambda m: classify()(m) if "error" in m else (
        ("tool error", "\n".join(block.get("text", "") for block in m["result"]["content"]))
        if m["result"]["content"][0].get("text", "").startswith(("Error", "Unknown tool"))
        else ("result", m["result"].get("structuredContent"))),
        ("does not start with", "this is a 'tool error'", "wording"), id="sorted-by-error-text"),
]


@pytest.mark.parametrize("work", CLASSIFY_RIGHT)
def test_reply_kinds_right_answers_pass(verdict, lab, work):
    assert verdict(checks.check_reply_kinds, work, lab).startswith("✓ classify sorted all 12 replies")


@pytest.mark.parametrize("work, phrases", CLASSIFY_WRONG)
def test_reply_kinds_wrong_answers_name_their_mistake(verdict, lab, work, phrases):
    out = verdict(checks.check_reply_kinds, work, lab)
    assert fails_naming(out, phrases), out


def test_a_long_detail_is_cut_the_same_way_on_both_sides(verdict, lab):
    out = verdict(checks.check_reply_kinds, classify(joiner=" | "), lab)
    detail_line = out.splitlines()[0]
    assert detail_line.count("characters in all") in (0, 2) and detail_line.count("'") % 2 == 0, out


# --- 06 task 3 · a shorter description ----------------------------------------------------------------------

DESCRIPTION_RIGHT = [
    pytest.param("Search the lab notes; best hits first. Read one in full with read_note.", id="solution"),
    pytest.param("Finds lab notes, ranked by relevance. Hits are snippets: read_note(note_id) gives the whole note.",
                 id="names-read-notes-argument"),
    pytest.param("Search the lab notes; best first. Read one with read_note, passing the hit's `id`.",
                 id="names-the-hits-id-field"),
    pytest.param("Search lab notes, best first; search_notes(query, limit=5). Then read_note(note_id=\"…\").",
                 id="calls-with-the-real-argument-names"),
    # A value passed in a call is no argument name: only bare names and names before = or : are.
    pytest.param("Search the lab notes; best first. Read one in full with read_note(note_id=hit.id).",
                 id="a-call-passing-the-hits-id-by-name"),
    pytest.param("Search the lab notes; best first. Read one in full with read_note(hit['id']).",
                 id="a-call-passing-the-hits-id"),
    # Words with one lowercase letter before a capital are words, not camelCase arguments.
    pytest.param("Search the lab notes (EEG, mRNA, pH, iPhone logs); best first. Read one with read_note.",
                 id="science-and-product-words"),
    pytest.param("Search the lab notes; best first. Read one in full with `read_note(note_id)`.",
                 id="a-backticked-call"),
]
DESCRIPTION_WRONG = [
    pytest.param(checks.VERBOSE_SEARCH_DESCRIPTION, ("tokens", "the budget is 40"), id="the-verbose-one"),
    pytest.param("Search the lab notes. Read one in full with read_note.", ("best hits come first",), id="no-ranking"),
    pytest.param("Search the lab notes; best hits first.", ("read_note",), id="no-read-note"),
    pytest.param("Best hits first; read one in full with read_note.", ("what the tool does",), id="no-purpose"),
    pytest.param("Search the lab notes; best 10 hits first. Read one with read_note.",
                 ("the number 10", "rule 2"), id="a-number-the-schema-lacks"),
    pytest.param("Search the lab notes by `keywords`; best first. Read one with read_note.",
                 ("the name 'keywords'", "rule 2"), id="an-argument-that-does-not-exist"),
    pytest.param("Search the lab notes; best hits first. Read one in full with read_note(id).",
                 ("read_note(id)", "its arguments are note_id", "rule 2"), id="read-note-with-id"),
    pytest.param("Search the lab notes; best first. Read one with read_note(id=hit.id).",
                 ("names 'id' as an argument", "its arguments are note_id"), id="read-note-with-id-by-name"),
    pytest.param("Search the lab notes; best first. Read one with read_note(noteId: hit.id).",
                 ("'noteId'", "rule 2"), id="read-note-with-a-colon"),
    pytest.param("Search the lab notes; best first. Read one with `read_note(id)`.",
                 ("names 'id' as an argument",), id="a-backticked-call-with-id"),
    pytest.param("Search the lab notes; best first. Read one with read_note(noteId).",
                 ("'noteId'", "rule 2"), id="camel-case-argument-in-a-call"),
    pytest.param("Search the lab notes; best first; pass maxResults to cap hits. Read one with read_note.",
                 ("the name 'maxResults'", "rule 2"), id="camel-case-argument"),
    pytest.param("Search the lab notes; top ten hits, best first. Read one with read_note.",
                 ("the number 10 (written 'ten')", "rule 2"), id="a-number-in-words"),
    pytest.param("Search the lab notes; best first. Read one with fetch_note.",
                 ("read_note",), id="the-wrong-tool"),
    pytest.param(["Search the lab notes; best first. Read one with read_note."], ("must be a string",), id="a-list"),
]


@pytest.mark.parametrize("description", DESCRIPTION_RIGHT)
def test_short_description_right_answers_pass(verdict, lab, description):
    assert verdict(checks.check_short_description, description, lab).startswith("✓")


@pytest.mark.parametrize("description, phrases", DESCRIPTION_WRONG)
def test_short_description_wrong_answers_name_their_mistake(verdict, lab, description, phrases):
    out = verdict(checks.check_short_description, description, lab)
    assert fails_naming(out, phrases), out


# --- 05 task 1 · a note through the URI template -------------------------------------------------------------

def note_header(*, braces=True, separator=": ", split_once=True, tags_list=True, strip=True, method="resources/read",
                keep_empty_tags=False, parse="split"):
    def work(request, template, note_id):
        uri = template.replace("{note_id}" if braces else "note_id", note_id)
        text = request(method, {"uri": uri})["result"]["contents"][0]["text"]
        front = text.removeprefix("---\n").split("\n---\n", 1)[0]
        if parse == "yaml":
            import yaml
            header = yaml.safe_load(front)
            return {**header, "date": str(header["date"])}
        if parse == "dict":
            header = dict(line.split(separator) for line in front.splitlines())
        else:
            pairs = [line.split(separator, 1) if split_once else line.split(separator) for line in front.splitlines()]
            header = {pair[0]: (pair[1] if strip else " " + pair[1]) for pair in pairs}
        tags = header["tags"]
        if tags_list:
            tags = [tag.strip() for tag in tags.strip("[]").split(",") if keep_empty_tags or tag.strip()]
        return {"id": header["id"], "title": header["title"], "tags": tags, "date": header["date"]}
    return work


def note_header_by_regex(request, template, note_id):
    import re
    text = request("resources/read", {"uri": template.format(note_id=note_id)})["result"]["contents"][0]["text"]
    header = dict(re.findall(r"^(\w+):\s*(.*?)\s*$", text.split("---")[1], re.M))
    return {**{key: header[key] for key in ("id", "title", "date")}, "tags": re.findall(r"[\w-]+", header["tags"])}


def note_header_split_at_every_colon(request, template, note_id):
    text = request("resources/read", {"uri": template.replace("{note_id}", note_id)})["result"]["contents"][0]["text"]
    header = {}
    for line in text.split("---")[1].strip().splitlines():
        key, value = line.split(":")[:2]
        header[key.strip()] = value.strip()
    tags = [tag.strip() for tag in header["tags"].strip("[]").split(",") if tag.strip()]
    return {"id": header["id"], "title": header["title"], "tags": tags, "date": header["date"]}


NOTE_RIGHT = [
    pytest.param(note_header(), id="solution"),
    pytest.param(note_header_by_regex, id="format-and-regex"),
]
NOTE_WRONG = [
    pytest.param(note_header(braces=False), ("you read the URI", "braces included"), id="braces-kept"),
    pytest.param(note_header(tags_list=False), ("tags", "Return a list"), id="tags-as-text"),
    pytest.param(note_header(strip=False), ("Strip the spaces",), id="values-not-stripped"),
    pytest.param(note_header(method="resources/get"), ("no resources/read",), id="misspelt-method"),
    pytest.param(note_header(split_once=False), ("the front matter says Lab sync: spindles at 10:30", "split at the first colon only"),
                 id="splits-at-every-colon-space"),
    pytest.param(note_header_split_at_every_colon, ("split at the first colon only",), id="splits-at-every-colon"),
    pytest.param(note_header(keep_empty_tags=True), ("'untagged-idea'", "tags = [\"\"]", "tags: []", "empty list"),
                 id="empty-tags-kept-as-an-empty-string"),
    pytest.param(note_header(parse="dict"), ("ValueError", "a colon inside a value", "first colon only"),
                 id="dict-of-split-lines"),
    pytest.param(note_header(parse="yaml"), ("'Lab sync: spindles at 10:30'", "not strict YAML"), id="yaml-safe-load"),
]


@pytest.mark.parametrize("work", NOTE_RIGHT)
def test_templated_read_right_answers_pass(verdict, lab, work):
    assert verdict(checks.check_templated_read, work, lab).startswith("✓")


@pytest.mark.parametrize("work, phrases", NOTE_WRONG)
def test_templated_read_wrong_answers_name_their_mistake(verdict, lab, work, phrases):
    out = verdict(checks.check_templated_read, work, lab)
    assert fails_naming(out, phrases), out


# --- 05 task 2 · complete, then get the prompt ---------------------------------------------------------------

PROMPT_REF = {"type": "ref/prompt", "name": "summarise_topic"}


def summary_prompt(*, ref=PROMPT_REF, use_prefix=False, audience=True, check_empty=True, name="summarise_topic",
                   complete_first=True):
    def work(request, prefix, audience_):
        if not complete_first:
            return request("prompts/get", {"name": name, "arguments": {"topic": prefix, "audience": audience_}})
        completion = request("completion/complete", {"ref": ref, "argument": {"name": "topic", "value": prefix}})
        values = completion["result"]["completion"]["values"]
        if check_empty and not values:
            return None
        arguments = {"topic": prefix if use_prefix else values[0]}
        if audience:
            arguments["audience"] = audience_
        prompt = request("prompts/get", {"name": name, "arguments": arguments})
        return prompt["result"]["messages"][0]["content"]["text"]
    return work


PROMPT_RIGHT = [
    pytest.param(summary_prompt(), id="solution"),
    pytest.param(summary_prompt(ref={**PROMPT_REF, "title": "Summarise a topic"}), id="ref-with-a-title"),
]
PROMPT_WRONG = [
    pytest.param(summary_prompt(use_prefix=True), ("not the prefix",), id="prefix-as-topic"),
    pytest.param(summary_prompt(audience=False), ("Pass the audience too",), id="no-audience"),
    pytest.param(summary_prompt(check_empty=False), ("'zz'", "return None"), id="no-completion-unhandled"),
    pytest.param(summary_prompt(ref={"type": "ref/prompt", "name": "summarize_topic"}),
                 ("completion/complete params",), id="misspelt-ref"),
    pytest.param(summary_prompt(ref={"type": "ref/resource", "uri": "notes://index"}),
                 ("completion/complete params",), id="resource-ref"),
    pytest.param(summary_prompt(name="summarize_topic"), ("refused your prompts/get", "'summarise_topic'"),
                 id="misspelt-prompt"),
    pytest.param(summary_prompt(complete_first=False), ("start with completion/complete",), id="no-completion"),
]


@pytest.mark.parametrize("work", PROMPT_RIGHT)
def test_prompt_completion_right_answers_pass(verdict, lab, work):
    assert verdict(checks.check_prompt_completion, work, lab).startswith("✓")


@pytest.mark.parametrize("work, phrases", PROMPT_WRONG)
def test_prompt_completion_wrong_answers_name_their_mistake(verdict, lab, work, phrases):
    out = verdict(checks.check_prompt_completion, work, lab)
    assert fails_naming(out, phrases), out
