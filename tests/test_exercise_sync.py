"""The learner versions in exercises/ can never drift from solutions/, and never leak an answer."""

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from make_exercises import exercise_from, strip_solutions  # noqa: E402

SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))


def test_committed_exercises_match_their_solutions():
    result = subprocess.run([sys.executable, "scripts/make_exercises.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_every_lesson_has_a_solution_and_an_exercise():
    lessons = {p.name[:2] for p in (ROOT / "notebooks").glob("*.ipynb")}
    solutions = {p.name[:2] for p in SOLUTIONS}
    assert lessons <= solutions, f"lessons without an exercise: {sorted(lessons - solutions)}"


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_no_solution_text_survives_in_the_exercise(path):
    solution = nbformat.read(path, as_version=4)
    exercise = nbformat.read(ROOT / "exercises" / path.name, as_version=4)
    for sol, ex in zip(solution.cells, exercise.cells):
        if "### BEGIN SOLUTION" in sol.source:
            assert "### BEGIN SOLUTION" not in ex.source and "NotImplementedError" in ex.source
        if ex.cell_type == "code":
            assert ex.outputs == [], "exercise outputs would give answers away"


def test_stub_keeps_the_indentation_and_the_code_around_it():
    source = "def f(x):\n    ### BEGIN SOLUTION\n    return x + 1\n    ### END SOLUTION\n\nprint(f)"
    learner, top_level = strip_solutions(source)
    assert learner == 'def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError("your code here")\n\nprint(f)'
    assert not top_level


def test_a_top_level_stub_is_tagged_to_raise():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("### BEGIN SOLUTION\nx = 1\n### END SOLUTION")])
    cell = exercise_from(nb).cells[0]
    assert cell.metadata["tags"] == ["raises-exception"]
    assert "x = 1" not in cell.source


def test_unbalanced_markers_are_refused():
    with pytest.raises(ValueError):
        strip_solutions("### BEGIN SOLUTION\nx = 1")
