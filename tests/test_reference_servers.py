"""What lesson 22 tells learners about servers no one here wrote, pinned: a release that changes it fails here by name.

The reference time and git servers (2026.10.19, SDK 2.3.0) come from the kit's lock; the legacy time server
(2025.9.25, SDK 1.30.0) from .venv-legacy/, which `make legacy-server` builds from requirements/legacy.txt.
`make canary` runs these tests against the newest releases pyproject.toml allows and lists the ones that fail.
"""

import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from mcpwire import StdioWire, frames

ROOT = Path(__file__).resolve().parents[1]
LEGACY_PYTHON = ROOT / ".venv-legacy" / "bin" / "python"
ZONE = ["--local-timezone", "Etc/UTC"]
HINTS = {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
NOON = {"name": "convert_time", "arguments": {"source_timezone": "Etc/UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}}
# The lesson's commit: fixed names and dates, so the same hash on any machine.
FIXED_GIT = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
             "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com", "GIT_AUTHOR_DATE": "1785240000 +0000",
             "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.com", "GIT_COMMITTER_DATE": "1785240000 +0000"}


def legacy_request(wire, method, params=None):
    return wire.send(frames.legacy_request(method, params, id=wire.next_id))


def text_of(reply):
    return reply.result["content"][0]["text"]


@pytest.fixture(scope="module")
def time_server():
    with StdioWire([sys.executable, "-m", "mcp_server_time", *ZONE], timeout=30) as wire:
        yield wire


@pytest.fixture(scope="module")
def legacy():
    """The legacy time server after the lesson's probe: a refused server/discover, then the handshake."""
    with StdioWire([str(LEGACY_PYTHON), "-m", "mcp_server_time", *ZONE], timeout=30) as wire:
        probe = wire.request("server/discover")
        handshake = wire.send(frames.legacy_initialize(id=wire.next_id))
        wire.send(frames.legacy_initialized())
        yield wire, probe, handshake


@pytest.fixture(scope="module")
def trip(tmp_path_factory):
    folder = tmp_path_factory.mktemp("field-trip")
    env = {**os.environ, **FIXED_GIT}
    subprocess.run(["git", "init", "--quiet", "--initial-branch=main", "repo"], cwd=folder, env=env, check=True)
    (folder / "repo" / "notes.md").write_text("# Field notes\n")
    (folder / "outside").mkdir()
    (folder / "outside" / "diary.txt").write_text("not for the server\n")
    with StdioWire([sys.executable, "-m", "mcp_server_git", "--repository", "repo"], timeout=30, cwd=folder, env=env) as wire:
        yield folder, wire


def test_the_kit_and_the_legacy_venv_hold_the_releases_the_lesson_names():
    assert (metadata.version("mcp-server-time"), metadata.version("mcp-server-git")) == ("2026.10.19", "2026.10.19")
    legacy = subprocess.run([str(LEGACY_PYTHON), "-c", "from importlib.metadata import version as v; "
                             "print(v('mcp'), v('mcp-server-time'))"], capture_output=True, text=True, timeout=60)
    assert legacy.stdout.split() == ["1.30.0", "2025.9.25"], f"run `make legacy-server` ({legacy.stderr[-300:]})"


def test_the_legacy_lock_is_hashed_and_holds_sdk_1_only():
    lock = (ROOT / "requirements" / "legacy.txt").read_text()
    pins = dict(re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", lock, re.M))
    assert pins["mcp"].startswith("1.") and pins["mcp-server-time"] == "2025.9.25"
    entries = re.split(r"^(?=[A-Za-z0-9])", lock, flags=re.M)[1:]
    assert len(entries) == len(pins) and all("--hash=sha256:" in entry for entry in entries), (
        "every pin in requirements/legacy.txt carries its hashes")
    assert "mcp-on-the-wire" not in pins, "the kit itself never goes into the legacy venv"


def test_the_legacy_venv_never_shares_the_kits():
    kit_sdk = subprocess.run([str(LEGACY_PYTHON), "-I", "-c", "import labserver"], capture_output=True, text=True, timeout=60)
    assert kit_sdk.returncode != 0, "the kit must not be importable from .venv-legacy"
    assert metadata.version("mcp").startswith("2."), "the kit's venv keeps SDK 2"


def test_the_time_server_discovers_as_the_lesson_reads_it(time_server):
    result = time_server.request("server/discover").result
    assert result["supportedVersions"] == ["2026-07-28"] and result["resultType"] == "complete"
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")
    # SDK 2.3.0's MCPServer declares prompts and resources it has none of.
    assert result["capabilities"] == {"prompts": {"listChanged": False}, "resources": {"listChanged": False, "subscribe": False},
                                      "tools": {"listChanged": False}}
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "mcp-time", "version": "2026.10.19"}
    assert time_server.request("prompts/list").result["prompts"] == []


def test_the_time_servers_tools_declare_every_hint_and_an_output_schema(time_server):
    tools = time_server.request("tools/list").result["tools"]
    assert [tool["name"] for tool in tools] == ["get_current_time", "convert_time"]
    assert all(set(tool["annotations"]) == HINTS and tool["annotations"]["readOnlyHint"] for tool in tools)
    assert all("outputSchema" in tool and "title" not in tool and "icons" not in tool for tool in tools)
    assert "Use 'Etc/UTC' as local timezone" in json.dumps(tools), "--local-timezone is written into the descriptions"


def test_the_time_server_writes_the_zone_it_is_given_into_its_descriptions():
    with StdioWire([sys.executable, "-m", "mcp_server_time", "--local-timezone", "Asia/Tokyo"], timeout=30) as wire:
        assert "Use 'Asia/Tokyo' as local timezone" in json.dumps(wire.request("tools/list").result)


def test_noon_in_utc_is_nine_in_tokyo_twice_over(time_server):
    result = time_server.request("tools/call", NOON).result
    assert result["structuredContent"]["time_difference"] == "+9.0h"
    assert json.loads(text_of(time_server.request("tools/call", NOON))) == result["structuredContent"]


def test_the_reference_servers_answer_an_unknown_tool_with_32602_and_bad_arguments_with_is_error(time_server, trip):
    _, git = trip
    for wire, tool, bad in ((time_server, "get_current_time", {"timezone": 7}), (git, "git_status", {"repo_path": 7})):
        unknown = wire.request("tools/call", {"name": "no_such_tool", "arguments": {}})
        assert (unknown.code, unknown.error["message"]) == (-32602, "Unknown tool: no_such_tool")
        for arguments in (bad, {}):
            reply = wire.request("tools/call", {"name": tool, "arguments": arguments})
            assert reply.is_tool_error and "1 validation error" in text_of(reply)


def test_the_git_server_declares_its_writes_and_returns_text_only(trip):
    _, git = trip
    tools = {tool["name"]: tool for tool in git.request("tools/list").result["tools"]}
    assert len(tools) == 12 and all(set(tool["annotations"]) == HINTS and "outputSchema" not in tool for tool in tools.values())
    writes = {name for name, tool in tools.items() if not tool["annotations"]["readOnlyHint"]}
    assert writes == {"git_commit", "git_add", "git_reset", "git_create_branch", "git_checkout"}
    assert [name for name, tool in tools.items() if tool["annotations"]["destructiveHint"]] == ["git_reset"]


def test_the_git_server_commits_with_the_lessons_hash_and_refuses_every_way_out(trip):
    folder, git = trip
    git.request("tools/call", {"name": "git_add", "arguments": {"repo_path": "repo", "files": ["notes.md"]}})
    commit = git.request("tools/call", {"name": "git_commit", "arguments": {"repo_path": "repo", "message": "First field note"}})
    assert text_of(commit) == "Changes committed successfully with hash 88e44fed71626be327a691c0c2ba15b89770c19a"
    escapes = {
        "git_status": ({"repo_path": "outside"}, "Repository path 'outside' is outside the allowed repository '"),
        "git_add": ({"repo_path": "repo", "files": ["../outside/diary.txt"]}, "Path '../outside/diary.txt' is outside the repository '"),
        "git_show": ({"repo_path": "repo", "revision": "HEAD:../outside/diary.txt"}, "Blob or Tree named '..' not found"),
    }
    for name, (arguments, said) in escapes.items():
        reply = git.request("tools/call", {"name": name, "arguments": arguments})
        assert reply.is_tool_error and said in text_of(reply), text_of(reply)
    assert str(folder.resolve()) in text_of(git.request("tools/call", {"name": "git_status", "arguments": {"repo_path": "outside"}})), \
        "the refusal names the repository by its absolute path (the lesson masks it)"
    tracked = subprocess.run(["git", "ls-files"], cwd=folder / "repo", capture_output=True, text=True).stdout.split()
    assert tracked == ["notes.md"] and (folder / "outside" / "diary.txt").read_text() == "not for the server\n"


def test_the_legacy_server_refuses_discover_with_32602_and_shakes_hands(legacy):
    _, probe, handshake = legacy
    assert (probe.code, probe.error["message"], probe.error.get("data")) == (-32602, "Invalid request parameters", "")
    assert handshake.result == {"protocolVersion": "2025-11-25", "capabilities": {"experimental": {}, "tools": {"listChanged": False}},
                                "serverInfo": {"name": "mcp-time", "version": "1.30.0"}}, "serverInfo carries the SDK's version"


def test_the_legacy_servers_tools_leave_everything_to_the_defaults(legacy):
    wire, _, _ = legacy
    result = legacy_request(wire, "tools/list").result
    assert "resultType" not in result
    tools = result["tools"]
    assert [tool["name"] for tool in tools] == ["get_current_time", "convert_time"]
    assert all(set(tool) == {"name", "description", "inputSchema"} for tool in tools), "no annotations, outputSchema, title or icons"
    assert tools[0]["description"] == "Get current time in a specific timezones"


def test_the_legacy_server_answers_in_text_only_and_every_error_as_is_error(legacy):
    wire, _, _ = legacy
    noon = legacy_request(wire, "tools/call", NOON).result
    assert "structuredContent" not in noon and json.loads(noon["content"][0]["text"])["time_difference"] == "+9.0h"
    said = {
        "no_such_tool": ({}, "Error processing mcp-server-time query: Unknown tool: no_such_tool"),
        "get_current_time": ({"timezone": "Mars/Olympus"}, "Error processing mcp-server-time query: 'str' object has no attribute 'message'"),
    }
    for name, (arguments, text) in said.items():
        reply = legacy_request(wire, "tools/call", {"name": name, "arguments": arguments})
        assert reply.is_tool_error and text_of(reply) == text
    for arguments, text in (({"timezone": 7}, "Input validation error: 7 is not of type 'string'"),
                            ({}, "Input validation error: 'timezone' is a required property")):
        reply = legacy_request(wire, "tools/call", {"name": "get_current_time", "arguments": arguments})
        assert reply.is_tool_error and text_of(reply) == text
