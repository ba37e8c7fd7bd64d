"""The lab server over stdio: every primitive, MRTR, progress, subscriptions, cancellation."""

from __future__ import annotations

import base64
import json

import pytest
from lab_harness import (
    CONFIRM_KEY,
    FORM_ELICITATION,
    TAG_KEY,
    check_error,
    check_notification,
    check_result,
    request,
    retry_with,
    sample_note_ids,
    stdio_lab,
    text_of,
    tool_call,
)

LIST_HINTS = {
    "tools/list": (300_000, "public"),
    "prompts/list": (300_000, "public"),
    "resources/templates/list": (300_000, "public"),
    "resources/list": (60_000, "private"),
}


@pytest.fixture(scope="module")
def lab():
    """One shared server for the calls that change nothing."""
    with stdio_lab() as server:
        yield server


@pytest.fixture(scope="module")
def own_lab(tmp_path_factory):
    """A server on a notes folder the tests can look into; each test writes different notes."""
    folder = tmp_path_factory.mktemp("notes")
    with stdio_lab("--notes", str(folder)) as server:
        server.folder = folder
        yield server


def test_discover_names_the_lab_and_is_cacheable_for_an_hour(lab):
    result = check_result("server/discover", lab.call(request(1, "server/discover")))
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "notes-lab", "version": "1.0.0"}
    assert result["supportedVersions"] == ["2026-07-28"]
    assert (result["ttlMs"], result["cacheScope"]) == (3_600_000, "public")
    assert result["instructions"]
    assert {"tools", "resources", "prompts", "completions"} <= set(result["capabilities"])


@pytest.mark.parametrize("method", sorted(LIST_HINTS))
def test_lists_carry_realistic_cache_hints(lab, method):
    result = check_result(method, lab.call(request(f"list-{method}", method)))
    assert (result["ttlMs"], result["cacheScope"]) == LIST_HINTS[method]


def test_tools_are_the_lab_tools_with_described_arguments(lab):
    tools = {tool["name"]: tool for tool in check_result("tools/list", lab.call(request(2, "tools/list")))["tools"]}
    assert set(tools) == {
        "search_notes",
        "read_note",
        "create_note",
        "tag_note",
        "delete_note",
        "reindex",
        "sync_notes",
        "night_report",
        "summarize_note",
        "plan_export",
        "publish_note",
        "count_words",
        "check_notes",
    }
    for tool in tools.values():
        assert tool["description"]
        assert all(prop.get("description") for prop in tool["inputSchema"]["properties"].values()), tool["name"]
    assert tools["read_note"]["inputSchema"]["properties"]["note_id"]["x-mcp-header"] == "Note-Id"
    assert tools["search_notes"]["outputSchema"]["type"] == "object"


def test_search_notes_returns_ranked_structured_hits(lab):
    result = check_result("tools/call", lab.call(tool_call(3, "search_notes", {"query": "spindle density", "limit": 3})))
    hits = result["structuredContent"]["hits"]
    assert result["isError"] is False and 1 <= len(hits) <= 3
    assert hits[0]["id"] == "spindle-density"
    assert [hit["score"] for hit in hits] == sorted((hit["score"] for hit in hits), reverse=True)
    assert set(hits[0]) == {"id", "title", "score", "snippet"}


def test_read_note_returns_the_whole_note(lab):
    result = check_result("tools/call", lab.call(tool_call(4, "read_note", {"note_id": "spindle-density"})))
    note = result["structuredContent"]
    assert note["id"] == "spindle-density" and note["title"] == "Spindle density and overnight recall"
    assert note["tags"] == ["spindles", "eeg", "memory"] and note["date"] == "2026-01-08"
    assert "spindles per minute" in note["body"]


@pytest.mark.parametrize(
    ("note_id", "message"),
    [
        ("no-such-note", "No note with id 'no-such-note'. Use search_notes to find ids."),
        ("../etc/passwd", "is not a valid note id"),
        ("a%2Fb", "is not a valid note id"),
    ],
)
def test_read_note_errors_are_tool_errors_the_model_can_read(lab, note_id, message):
    result = check_result("tools/call", lab.call(tool_call(f"read-{note_id}", "read_note", {"note_id": note_id})))
    assert result["isError"] is True and message in text_of(result)


def test_sync_notes_always_fails_as_a_tool_error(lab):
    result = check_result("tools/call", lab.call(tool_call(5, "sync_notes", {"remote": "git@example.org:lab/notes"})))
    assert result["isError"] is True and "no network access" in text_of(result)


def test_index_resource_lists_every_note_sorted(lab):
    result = check_result("resources/read", lab.call(request(6, "resources/read", {"uri": "notes://index"})))
    (content,) = result["contents"]
    assert content["mimeType"] == "text/plain"
    lines = content["text"].splitlines()
    assert [line.split(" — ")[0] for line in lines] == sample_note_ids()
    assert "spindle-density — Spindle density and overnight recall" in lines
    assert (result["ttlMs"], result["cacheScope"]) == (30_000, "private")


def test_note_template_returns_the_markdown_file(lab):
    result = check_result("resources/read", lab.call(request(7, "resources/read", {"uri": "notes://welcome"})))
    (content,) = result["contents"]
    assert content["mimeType"] == "text/markdown" and content["text"].startswith("---\nid: welcome\n")


def test_hypnogram_attachment_is_a_png_blob(lab):
    uri = "notes://attachments/hypnogram.png"
    result = check_result("resources/read", lab.call(request(8, "resources/read", {"uri": uri})))
    (content,) = result["contents"]
    assert content["mimeType"] == "image/png" and "text" not in content
    assert base64.b64decode(content["blob"]).startswith(b"\x89PNG\r\n\x1a\n")


@pytest.mark.parametrize("uri", ["notes://no-such-note", "notes://..", "elsewhere://x"])
def test_unknown_resources_are_invalid_params_naming_the_uri(lab, uri):
    error = check_error(lab.call(request(f"read-{uri}", "resources/read", {"uri": uri})), -32602)
    assert error["data"] == {"uri": uri}


def test_unknown_note_via_the_template_says_how_to_find_ids(lab):
    error = check_error(lab.call(request(9, "resources/read", {"uri": "notes://no-such-note"})), -32602)
    assert error["message"] == "No note with id 'no-such-note'. Use search_notes to find ids."


def test_summarise_prompt_gathers_the_notes_on_a_topic(lab):
    params = {"name": "summarise_topic", "arguments": {"topic": "tmr", "audience": "grant panel"}}
    result = check_result("prompts/get", lab.call(request(10, "prompts/get", params)))
    (message,) = result["messages"]
    text = message["content"]["text"]
    assert message["role"] == "user" and "grant panel" in text
    assert "targeted-memory-reactivation" in text


def test_prompt_arguments_are_described(lab):
    prompts = check_result("prompts/list", lab.call(request(11, "prompts/list")))["prompts"]
    prompt = next(prompt for prompt in prompts if prompt["name"] == "summarise_topic")
    assert [(arg["name"], arg["required"]) for arg in prompt["arguments"]] == [("topic", True), ("audience", False)]
    assert all(arg["description"] for arg in prompt["arguments"])


def test_completion_of_the_topic_argument_offers_tags(lab):
    params = {"ref": {"type": "ref/prompt", "name": "summarise_topic"}, "argument": {"name": "topic", "value": "s"}}
    result = check_result("completion/complete", lab.call(request(12, "completion/complete", params)))
    assert result["completion"]["values"] == ["scoring", "sleep", "slow-oscillations", "spindles"]


def test_completion_of_the_template_argument_offers_note_ids(lab):
    params = {"ref": {"type": "ref/resource", "uri": "notes://{note_id}"}, "argument": {"name": "note_id", "value": "lab"}}
    result = check_result("completion/complete", lab.call(request(13, "completion/complete", params)))
    assert result["completion"]["values"] == ["lab-sync-2026-01-12", "lab-sync-2026-02-09"]


def test_reindex_reports_progress_per_note_before_its_reply(lab):
    lab.send(tool_call(14, "reindex", {"pause_ms": 0}, progressToken="reindex-1"))
    reply, before = lab.read_until(14)
    progress = [check_notification(m) for m in before if m.get("method") == "notifications/progress"]
    total = len(sample_note_ids())
    assert [p["progress"] for p in progress] == list(range(1, total + 1))
    assert all(p["progressToken"] == "reindex-1" and p["total"] == total for p in progress)
    assert f"Re-indexed {total} notes" in text_of(check_result("tools/call", reply))


def test_tag_note_asks_which_tag_then_adds_it(own_lab):
    first = tool_call(20, "tag_note", {"note_id": "welcome"}, capabilities=FORM_ELICITATION)
    asked = check_result("tools/call", own_lab.call(first))
    assert asked["resultType"] == "input_required"
    question = asked["inputRequests"][TAG_KEY]
    assert question["method"] == "elicitation/create"
    assert question["params"]["requestedSchema"]["properties"]["tag"]["type"] == "string"

    answer = {TAG_KEY: {"action": "accept", "content": {"tag": "onboarding"}}}
    done = check_result("tools/call", own_lab.call(retry_with(first, 21, answer, asked["requestState"])))
    assert done["resultType"] == "complete" and done["isError"] is False
    assert "tags: [admin, onboarding]" in (own_lab.folder / "welcome.md").read_text()


def test_delete_note_deletes_only_after_a_yes(own_lab):
    first = tool_call(30, "delete_note", {"note_id": "reading-list"}, capabilities=FORM_ELICITATION)
    asked = check_result("tools/call", own_lab.call(first))
    assert list(asked["inputRequests"]) == [CONFIRM_KEY]
    state = asked["requestState"]

    declined = own_lab.call(retry_with(first, 31, {CONFIRM_KEY: {"action": "decline"}}, state))
    assert "Nothing deleted" in text_of(check_result("tools/call", declined))
    said_no = own_lab.call(retry_with(first, 32, {CONFIRM_KEY: {"action": "accept", "content": {"confirm": False}}}, state))
    assert "Nothing deleted" in text_of(check_result("tools/call", said_no))
    assert (own_lab.folder / "reading-list.md").exists()

    said_yes = own_lab.call(retry_with(first, 33, {CONFIRM_KEY: {"action": "accept", "content": {"confirm": True}}}, state))
    assert text_of(check_result("tools/call", said_yes)) == "Deleted note reading-list."
    assert not (own_lab.folder / "reading-list.md").exists()


def test_a_tampered_request_state_is_refused_and_deletes_nothing(own_lab):
    first = tool_call(40, "delete_note", {"note_id": "welcome"}, capabilities=FORM_ELICITATION)
    state = check_result("tools/call", own_lab.call(first))["requestState"]
    tampered = state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB")
    yes = {CONFIRM_KEY: {"action": "accept", "content": {"confirm": True}}}
    error = check_error(own_lab.call(retry_with(first, 41, yes, tampered)), -32602)
    assert error["message"] == "Invalid or expired requestState"
    assert (own_lab.folder / "welcome.md").exists()


def test_asking_without_the_elicitation_capability_is_refused(lab):
    error = check_error(lab.call(tool_call(42, "delete_note", {"note_id": "welcome"})), -32021)
    assert error["data"]["requiredCapabilities"] == {"elicitation": {"form": {}}}


def test_asking_about_an_unknown_note_fails_before_asking(lab):
    result = check_result("tools/call", lab.call(tool_call(43, "tag_note", {"note_id": "nope"}, capabilities=FORM_ELICITATION)))
    assert result["isError"] is True and "No note with id 'nope'" in text_of(result)


def test_listen_sees_list_changes_after_create_and_delete(own_lab):
    listen = request("listen-1", "subscriptions/listen", {"notifications": {"resourcesListChanged": True}})
    own_lab.send(listen)
    ack = own_lab.next_message()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert check_notification(ack)["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-1"

    created = own_lab.call(tool_call(50, "create_note", {"title": "Nap study idea", "body": "Naps after learning?"}))
    assert check_result("tools/call", created)["structuredContent"]["id"] == "nap-study-idea"
    first = tool_call(51, "delete_note", {"note_id": "nap-study-idea"}, capabilities=FORM_ELICITATION)
    state = check_result("tools/call", own_lab.call(first))["requestState"]
    yes = {CONFIRM_KEY: {"action": "accept", "content": {"confirm": True}}}
    own_lab.call(retry_with(first, 52, yes, state))

    changes = [m for m in own_lab.notifications if m.get("method") == "notifications/resources/list_changed"]
    assert len(changes) == 2
    for change in changes:
        assert check_notification(change)["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-1"


def test_create_note_refuses_an_existing_title(lab):
    result = check_result("tools/call", lab.call(tool_call(60, "create_note", {"title": "Welcome", "body": "again"})))
    assert result["isError"] is True and "already exists" in text_of(result)


def test_a_cancelled_request_gets_no_reply_and_eof_does_not_wait_for_it():
    with stdio_lab() as server:
        server.send(tool_call(70, "reindex", {"pause_ms": 300}))
        server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 70}})
        server.send(request(71, "tools/list"))
        server.read_until(71)
        assert server.close() == 0
        rest = []
        while (line := server.lines.get(timeout=5)) is not None:
            rest.append(json.loads(line))
        assert [m for m in rest if m.get("id") == 70] == []
