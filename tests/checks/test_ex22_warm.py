"""Exercise 22's warm starters: a reference server forked from one answers byte for byte as the same server started
cold, in its own venv (SDK 1.30.0 for the legacy one), and a starter ends with the kernel that holds its stdin."""

import json
import os
import sys

import pytest

from checks import ex22_recorder as recorder
from checks.ex22_field_trip import LEGACY_PYTHON, ZONE
from checks.ex22_warm import Starter
from mcpwire import StdioWire, frames

pytestmark = pytest.mark.skipif(not LEGACY_PYTHON.exists(), reason="make legacy-server builds the legacy time server")


@pytest.fixture(scope="module")
def starters():
    made = {"kit": Starter(sys.executable, ["mcp_server_time"]), "legacy": Starter(LEGACY_PYTHON, ["mcp_server_time"])}
    yield made
    for starter in made.values():
        starter.stop()


def behind_the_recorder(folder, server):
    folder.mkdir()
    (folder / "command.json").write_text(json.dumps(server), encoding="utf-8")
    return [sys.executable, "-I", "-S", recorder.__file__, str(folder)]


def replies(command, legacy):
    """The lines a server answers: the probe (or the handshake), tools/list, and a call of an unknown tool."""
    with StdioWire(command, timeout=60) as wire:
        if legacy:
            first = wire.send(frames.legacy_initialize(id=1))
            wire.send(frames.legacy_initialized())
            asked = [wire.send(frames.legacy_request("tools/list", id=2)),
                     wire.send(frames.legacy_request("tools/call", {"name": "no_such_tool", "arguments": {}}, id=3))]
        else:
            first = wire.request("server/discover")
            asked = [wire.request("tools/list"), wire.request("tools/call", {"name": "no_such_tool", "arguments": {}})]
    return [reply.text for reply in (first, *asked)]


@pytest.mark.parametrize("which, python", [("kit", sys.executable), ("legacy", LEGACY_PYTHON)])
def test_a_warm_server_answers_as_a_cold_one(tmp_path, starters, which, python):
    starter = starters[which]
    assert starter.ready()
    cold = {"command": [str(python), "-m", "mcp_server_time", *ZONE]}
    warm = {**cold, "warm": starter.warm("mcp_server_time", *ZONE)}
    legacy = which == "legacy"
    answered = replies(behind_the_recorder(tmp_path / "warm", warm), legacy)
    assert answered == replies(behind_the_recorder(tmp_path / "cold", cold), legacy)
    assert ('"protocolVersion":"2025-11-25"' in answered[0]) is legacy  # SDK 1.30.0 in .venv-legacy/, its own era


def test_a_starter_ends_when_its_stdin_closes():
    starter = Starter(sys.executable, [])
    assert starter.ready() and os.path.exists(starter.path)
    starter.process.stdin.close()
    assert starter.process.wait(30) == 0 and not os.path.exists(starter.path)
    starter.stop()
    assert not os.path.exists(starter.folder)


def test_a_starter_that_cannot_import_its_module_is_not_ready():
    # The check then starts that server cold.
    starter = Starter(sys.executable, ["no_such_module_here"])
    try:
        assert starter.ready() is False
        assert starter.process.wait(30) != 0
    finally:
        starter.stop()
