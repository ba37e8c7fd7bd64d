"""Path attacks on note ids and resource URIs, over stdio and HTTP, against a planted canary.

Beside the notes folder sits a canary folder with a secret file; the notes folder
holds a symlink to it (`leak.md`) and a dangling one (`fresh.md`) pointing at a file
the server must never create. Every attack must be refused, no reply may carry the
secret, and nothing outside the notes folder may be created or changed.
"""

from __future__ import annotations

import contextlib

import pytest
from test_hardening_support import Sandbox

from mcpwire import HttpWire, StdioWire, frames

SECRET = "not for the lab server"
ELICITATION = {frames.CLIENT_CAPABILITIES_KEY: {"elicitation": {"form": {}}}}

ATTACK_IDS = [
    "..",
    "../canary/secret",
    "../../etc/passwd",
    "/etc/passwd",
    "CANARY_ABSOLUTE",  # replaced by the canary file's absolute path
    "..%2fcanary%2fsecret",
    "%2e%2e%2fcanary%2fsecret",
    "..%252fcanary%252fsecret",
    "..\uff0fcanary\uff0fsecret",  # fullwidth solidus
    "..\u2215canary\u2215secret",  # division slash
    "\u2024\u2024/canary/secret",  # one dot leader
    "..\\canary\\secret",
    "welcome\x00",
    "welcome\x00/../../canary/secret",
    "welcome/../../canary/secret",
    "leak",  # the planted symlink
    "fresh",  # the planted dangling symlink
    "~/secret",
    "file:///etc/passwd",
]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    sandbox = Sandbox(tmp_path_factory.mktemp("paths"))
    (sandbox.notes / "fresh.md").symlink_to(sandbox.canary / "created-by-server.md")
    sandbox.before = sandbox.outside_notes()
    yield sandbox
    assert sandbox.outside_notes() == sandbox.before, "a file outside the notes folder was created or changed"
    assert not (sandbox.canary / "created-by-server.md").exists()


@pytest.fixture(scope="module", params=["stdio", "http"])
def wire(request, sandbox):
    with contextlib.chdir(sandbox.cwd):
        if request.param == "stdio":
            opened = StdioWire.labserver("--notes", str(sandbox.notes))
        else:
            opened = HttpWire.labserver("--notes", str(sandbox.notes))
    with opened:
        if request.param == "http":
            assert opened.request("tools/list").ok  # HttpWire learns read_note's Mcp-Param header from it
        yield opened


def attack_id(sandbox: Sandbox, note_id: str) -> str:
    return str(sandbox.canary / "secret") if note_id == "CANARY_ABSOLUTE" else note_id


def assert_refused_tool_call(reply) -> None:
    assert reply.ok and reply.result_type == "complete" and reply.is_tool_error, reply.text[:300]
    assert SECRET not in reply.text


@pytest.mark.parametrize("note_id", ATTACK_IDS)
def test_read_tag_and_delete_refuse_the_id(wire, sandbox, note_id):
    note_id = attack_id(sandbox, note_id)
    assert_refused_tool_call(wire.request("tools/call", {"name": "read_note", "arguments": {"note_id": note_id}}))
    for tool in ("tag_note", "delete_note"):  # refused before the user is even asked
        reply = wire.request("tools/call", {"name": tool, "arguments": {"note_id": note_id}}, meta=ELICITATION)
        assert_refused_tool_call(reply)


@pytest.mark.parametrize("note_id", ATTACK_IDS)
def test_the_note_template_refuses_the_id(wire, sandbox, note_id):
    reply = wire.request("resources/read", {"uri": "notes://" + attack_id(sandbox, note_id)})
    assert reply.code == -32602 and SECRET not in reply.text, reply.text[:300]


@pytest.mark.parametrize(
    "uri",
    [
        "notes:///etc/passwd",
        "notes://attachments/../../canary/secret",
        "notes://attachments/hypnogram.png/../../../canary/secret",
        "notes://index/../leak",
        "notes:/leak",
        "notes://%6c%65%61%6b",  # "leak", percent-encoded
        "file:///etc/passwd",
        "NOTES://leak",
    ],
)
def test_uris_beside_the_templates_are_unknown(wire, uri):
    reply = wire.request("resources/read", {"uri": uri})
    assert reply.code == -32602 and SECRET not in reply.text, reply.text[:300]


def test_planted_links_are_neither_listed_nor_searched(wire):
    index = wire.request("resources/read", {"uri": "notes://index"}).result["contents"][0]["text"]
    ids = [line.split(" — ")[0] for line in index.splitlines()]
    assert "leak" not in ids and "fresh" not in ids and "welcome" in ids
    hits = wire.request("tools/call", {"name": "search_notes", "arguments": {"query": "lab server secret"}})
    assert SECRET not in hits.text


def test_create_note_does_not_write_through_a_planted_link(wire, sandbox):
    reply = wire.request("tools/call", {"name": "create_note", "arguments": {"title": "Fresh", "body": "through the link?"}})
    assert reply.is_tool_error and "symbolic link" in reply.text
    assert not (sandbox.canary / "created-by-server.md").exists()


def test_a_title_full_of_separators_creates_a_note_inside_the_folder(wire, sandbox):
    title = f"../../canary/{wire.transport}\\evil\x00"
    reply = wire.request("tools/call", {"name": "create_note", "arguments": {"title": title, "body": "inside"}})
    note_id = reply.result["structuredContent"]["id"]
    assert note_id == f"canary-{wire.transport}-evil"
    assert (sandbox.notes / f"{note_id}.md").is_file()
