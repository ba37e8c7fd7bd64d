"""`make nbgrader`: the solutions as nbgrader source notebooks, so an nbgrader course grades the same exercises.

nbgrader needs its cell metadata: answer cells (solution regions) and locked, graded check cells. A check
cell scores in nbgrader only by raising, and the checks print, so the export ends each one with
`raise_unless_passed()`; these tests hold both halves.
"""

import contextlib
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from checks import verdict

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nbgrader-source")
    subprocess.run([sys.executable, "scripts/make_exercises.py", "--nbgrader", str(folder)], cwd=ROOT, check=True,
                   capture_output=True, timeout=120)
    return {path.stem: nbformat.read(folder / path.stem / path.name, as_version=4) for path in SOLUTIONS}


def graded_cells(nb, **flags):
    return [c for c in nb.cells if all(c.metadata.get("nbgrader", {}).get(k) == v for k, v in flags.items())
            and "nbgrader" in c.metadata]


def test_every_solution_region_is_an_answer_cell_and_nothing_else_is(exported):
    for name, nb in exported.items():
        answers = graded_cells(nb, solution=True)
        assert answers, f"{name}: no answer cell"
        assert all("### BEGIN SOLUTION" in c.source and not c.metadata["nbgrader"]["locked"] for c in answers)
        unmarked = [c for c in nb.cells if "### BEGIN SOLUTION" in c.source and "nbgrader" not in c.metadata]
        assert not unmarked, f"{name}: a solution region without nbgrader metadata"


def test_every_check_cell_is_locked_graded_and_scores_by_raising(exported):
    for name, nb in exported.items():
        checks = graded_cells(nb, grade=True)
        assert checks, f"{name}: no graded cell"
        for cell in checks:
            meta = cell.metadata["nbgrader"]
            assert meta["locked"] and meta["points"] == 1 and "check_" in cell.source
            assert cell.source.rstrip().endswith("raise_unless_passed()")


def test_grade_ids_are_unique_across_the_course(exported):
    ids = [c.metadata["nbgrader"]["grade_id"] for nb in exported.values() for c in nb.cells if "nbgrader" in c.metadata]
    assert len(ids) == len(set(ids))


def test_the_learner_version_is_unchanged_by_the_export():
    run = subprocess.run([sys.executable, "scripts/make_exercises.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert "nbgrader" not in run.stdout
    assert all("nbgrader" not in c.metadata for p in sorted((ROOT / "exercises").glob("*.ipynb"))
               for c in nbformat.read(p, as_version=4).cells)


def test_a_check_cell_raises_after_a_failed_or_missing_verdict_and_not_after_a_pass(capsys):
    # Checks run earlier in this process left verdicts behind; a check cell drains them the same way.
    with contextlib.suppress(AssertionError):
        verdict.raise_unless_passed()
    capsys.readouterr()
    verdict.passed("fine")
    verdict.raise_unless_passed()
    verdict.passed("fine")
    verdict.failed("wrong id", hint="look at the reply")
    with pytest.raises(AssertionError):
        verdict.raise_unless_passed()
    verdict.not_done("define it first")
    with pytest.raises(AssertionError):
        verdict.raise_unless_passed()
    with pytest.raises(AssertionError, match="did not run"):
        verdict.raise_unless_passed()
    assert capsys.readouterr().out == "✓ fine\n✓ fine\n✗ wrong id\n  Hint: look at the reply\nnot done yet: define it first\n"


def test_the_verdict_log_gets_one_json_line_per_verdict_naming_the_check(tmp_path, monkeypatch):
    import json

    log = tmp_path / "verdicts.jsonl"
    monkeypatch.setenv(verdict.VERDICT_LOG, str(log))
    from checks.ex00_first_look import check_start_server

    check_start_server(None)
    (entry,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert entry["check"] == "check_start_server" and entry["verdict"] == "not done"
    assert entry["message"].startswith("not done yet:")
