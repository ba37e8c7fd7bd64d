"""The grader writes the bytecode sandboxes need before it starts them, since nothing inside one can."""

import os
import shutil
import subprocess
import sys

from checks import bytecode
from checks.grade import copy_kit


def test_missing_bytecode_is_written_once_even_where_writing_is_turned_off(tmp_path, monkeypatch):
    package = tmp_path / "somepkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "slow.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    assert bytecode.missing(["somepkg.slow", "somepkg"]) == ["somepkg.slow", "somepkg"]
    assert bytecode.write_missing(["somepkg.slow"]) == ["somepkg.slow"]
    assert bytecode.missing(["somepkg.slow", "somepkg"]) == []
    assert bytecode.write_missing(["somepkg.slow"]) == []  # the second time, nothing to do


def test_a_sandbox_copy_of_the_kit_loads_from_bytecode(tmp_path):
    copy_kit(tmp_path / "template")
    shutil.copytree(tmp_path / "template", tmp_path / "sandbox")  # as each sandbox copies it
    run = subprocess.run([sys.executable, "-v", "-c", "import checks.verdict, mcpwire.frames, labserver.notes"],
                         env={**os.environ, "PYTHONPATH": str(tmp_path / "sandbox"), "PYTHONDONTWRITEBYTECODE": "1"},
                         capture_output=True, text=True, check=True, cwd=tmp_path)
    for module in ("checks/verdict", "mcpwire/frames", "labserver/notes"):
        assert f"{tmp_path / 'sandbox' / module}.py" in run.stderr  # it did come from the copy
        assert f"matches {tmp_path / 'sandbox' / module}.py" in run.stderr, module
