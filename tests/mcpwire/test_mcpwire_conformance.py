"""`python -m mcpwire.conformance`: the conformance-suite client, run here against the lab (no Node needed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from mcpwire import HttpWire
from mcpwire.conformance import answer_input, example_value


def run_client(url, version, **context):
    env = {**os.environ, "MCP_CONFORMANCE_SCENARIO": "lab", "MCP_CONFORMANCE_PROTOCOL_VERSION": version}
    if context:
        env["MCP_CONFORMANCE_CONTEXT"] = json.dumps(context)
    return subprocess.run([sys.executable, "-m", "mcpwire.conformance", url], env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture(scope="module")
def lab():
    with HttpWire.labserver() as wire:
        yield wire


def test_example_values_follow_the_schema():
    schema = {"type": "object", "properties": {"a": {"type": "number"}, "tag": {"type": "string", "enum": ["x", "y"]},
                                               "on": {"type": "boolean", "default": False}}}
    assert example_value(schema) == {"a": 1, "tag": "x", "on": False}


def test_an_elicitation_is_accepted_with_content_for_its_schema():
    request = {"method": "elicitation/create",
               "params": {"requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}}}}
    assert answer_input(request) == {"action": "accept", "content": {"confirm": True}}


def test_a_whole_session_against_the_lab_succeeds(lab):
    done = run_client(lab.url, "2026-07-28")
    assert done.returncode == 0, done.stderr


def test_a_legacy_session_against_the_lab_succeeds(lab):
    # Legacy tools that ask the user do it with server-to-client requests, which this client does not answer.
    done = run_client(lab.url, "2025-11-25", toolCalls=[{"name": "search_notes", "arguments": {"query": "sleep"}}])
    assert done.returncode == 0, done.stderr


def test_the_lab_saw_the_multi_round_trip_calls_answered(lab):
    # tag_note asks a question (input_required); the client's retry must finish it with a complete result.
    done = run_client(lab.url, "2026-07-28",
                      toolCalls=[{"name": "tag_note", "arguments": {"note_id": "spindle-density"}}])
    assert done.returncode == 0, done.stderr
    lab.request("tools/list")  # read_note's Mcp-Param-Note-Id header comes from its definition
    note = lab.request("tools/call", {"name": "read_note", "arguments": {"note_id": "spindle-density"}})
    assert "conformance" in note.result["structuredContent"]["tags"]


def test_without_a_url_it_prints_its_usage():
    done = subprocess.run([sys.executable, "-m", "mcpwire.conformance"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "usage: python -m mcpwire.conformance SERVER_URL" in done.stderr


def test_an_authorization_it_cannot_complete_is_a_clean_refusal():
    # Its metadata-document client id is not on loopback, so the lab's authorization server cannot fetch it.
    with HttpWire.labserver("--auth") as wire:
        done = run_client(wire.url, "2026-07-28")
    assert done.returncode == 1
    assert "instead of redirecting back" in done.stderr and "not found" in done.stderr
    assert "Traceback" not in done.stderr
