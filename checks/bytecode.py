"""Bytecode for what a grading sandbox imports, written before grading starts.

Inside a sandbox the kit and the Python it runs on are read-only and PYTHONDONTWRITEBYTECODE is set, so a
module that has no bytecode yet is compiled again by every kernel and worker that imports it: a kernel with
none spends about 3 s more CPU on start-up and its checks. `uv pip install` leaves bytecode to the first
import, and where PYTHONDONTWRITEBYTECODE is set for everything (many CI images) no import ever writes it.
So the grader looks for the bytecode of the modules below and, if any is missing, imports them once, outside
the sandboxes, with writing allowed. The kit's own modules are compiled into the grader's copy of the kit.
"""

import compileall
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

# What a sandbox imports that costs most to compile: the worker (nbclient), the kernel (ipykernel), the warm
# starter (the lab and its SDK), and what the checks import on first use.
MODULES = ("nbclient.client", "nbformat.validator", "ipykernel.kernelapp", "ipykernel.ipkernel",
           "IPython.core.interactiveshell", "mcp.server.mcpserver", "uvicorn", "mcp_types.methods", "jsonschema.validators",
           "matplotlib.pyplot", "httpx", "tiktoken")


def source_of(name):
    """The .py file of a module, found without importing it or its packages; None if it has none."""
    top, *rest = name.split(".")
    spec = importlib.machinery.PathFinder.find_spec(top, sys.path)
    if spec is None:
        return None
    if not rest:
        return spec.origin if spec.origin and spec.origin.endswith(".py") else None
    if not spec.submodule_search_locations:
        return None
    folder = Path(spec.submodule_search_locations[0])
    for part in rest[:-1]:
        folder = folder / part
    for candidate in (folder / f"{rest[-1]}.py", folder / rest[-1] / "__init__.py"):
        if candidate.is_file():
            return str(candidate)
    return None


def missing(modules=MODULES):
    """The modules whose bytecode has not been written."""
    return [name for name in modules
            if (source := source_of(name)) and not os.path.exists(importlib.util.cache_from_source(source))]


def write_missing(modules=MODULES):
    """Import the modules once, with bytecode written, if any lacks it; the names that did."""
    absent = missing(modules)
    if absent:
        env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        # The lab's own imports too (it is compiled apart, in the kit's copy): the SDK's modules it uses.
        code = f"import importlib\nfor name in {[*modules, 'labserver.cli']!r}:\n    importlib.import_module(name)\n"
        subprocess.run([sys.executable, "-c", code], env={**env, "MPLBACKEND": "Agg"}, capture_output=True, check=False)
    return absent


def compile_kit(folder):
    """Write the bytecode of a copy of the kit beside its sources (each sandbox copies it with them)."""
    compileall.compile_dir(str(folder), quiet=1)
