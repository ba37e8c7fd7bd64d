"""Generate the learner notebooks in exercises/ from the complete ones in solutions/.

Usage: python scripts/make_exercises.py [--check | --nbgrader DIR]

In a code cell, the lines between `### BEGIN SOLUTION` and `### END SOLUTION`
become a stub that raises NotImplementedError, at the indentation of the
marker. Outputs are cleared everywhere: they would give the answers away.
A stub at the top level of a cell raises when the cell runs, so that cell is
tagged `raises-exception`. With --check nothing is written; the exit code says
whether exercises/ is in sync.

With --nbgrader DIR, writes DIR/<name>/<name>.ipynb instead: each solution with nbgrader cell
metadata, the source notebooks of an nbgrader course (`nbgrader generate_assignment` strips the
same markers). A cell with a solution region is an answer cell; a cell that calls a `check_*`
function is a locked, graded cell worth one point, ending with `raise_unless_passed()` because
nbgrader scores a cell by whether it raises, and the checks only print.
"""

import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
BEGIN = re.compile(r"^(\s*)### BEGIN SOLUTION\s*$")
END = re.compile(r"^\s*### END SOLUTION\s*$")
STUB = 'raise NotImplementedError("your code here")'


def strip_solutions(source: str) -> tuple[str, bool]:
    """Return the learner's source and whether a stub sits at the top level."""
    out, inside, top_level = [], False, False
    for line in source.splitlines():
        begin = BEGIN.match(line)
        if begin:
            if inside:
                raise ValueError("nested ### BEGIN SOLUTION")
            inside = True
            indent = begin.group(1)
            top_level = top_level or indent == ""
            out.append(f"{indent}# YOUR CODE HERE")
            out.append(f"{indent}{STUB}")
        elif END.match(line):
            if not inside:
                raise ValueError("### END SOLUTION without BEGIN")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError("### BEGIN SOLUTION without END")
    return "\n".join(out), top_level


def exercise_from(solution: nbformat.NotebookNode) -> nbformat.NotebookNode:
    nb = nbformat.from_dict(solution)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell.source, raises = strip_solutions(cell.source)
        cell.outputs = []
        cell.execution_count = None
        tags = [t for t in cell.metadata.get("tags", []) if t != "raises-exception"]
        if raises:
            tags.append("raises-exception")
        if tags:
            cell.metadata["tags"] = tags
        else:
            cell.metadata.pop("tags", None)
    return nb


CHECK_CALL = re.compile(r"\bcheck_\w+\s*\(")
SCORE = "from checks.verdict import raise_unless_passed  # nbgrader: the points need every check above to pass\nraise_unless_passed()"


def nbgrader_source(solution: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    nb = nbformat.from_dict(solution)
    answers = checks = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        meta = {"schema_version": 3, "task": False}
        if any(BEGIN.match(line) for line in cell.source.splitlines()):
            answers += 1
            meta.update(grade=False, solution=True, locked=False, grade_id=f"{name}-answer-{answers}")
        elif CHECK_CALL.search(cell.source):
            checks += 1
            cell.source = cell.source.rstrip("\n") + "\n" + SCORE
            meta.update(grade=True, solution=False, locked=True, points=1, grade_id=f"{name}-check-{checks}")
        else:
            continue
        cell.metadata["nbgrader"] = meta
    return nb


def write_nbgrader(folder: Path) -> None:
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        target = folder / path.stem / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nbgrader_source(nbformat.read(path, as_version=4), path.stem), target)
        print(f"wrote {target}")


def render(path: Path) -> str:
    return nbformat.writes(exercise_from(nbformat.read(path, as_version=4))) + "\n"


def main(argv: list[str]) -> int:
    if "--nbgrader" in argv:
        write_nbgrader(Path(argv[argv.index("--nbgrader") + 1]))
        return 0
    check = "--check" in argv
    stale = []
    solutions = sorted((ROOT / "solutions").glob("*.ipynb"))
    expected = {ROOT / "exercises" / p.name for p in solutions}
    for path in solutions:
        target = ROOT / "exercises" / path.name
        text = render(path)
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            stale.append(target.name)
            if not check:
                target.write_text(text, encoding="utf-8")
    orphans = [p.name for p in (ROOT / "exercises").glob("*.ipynb") if p not in expected]
    if check:
        for name in stale:
            print(f"exercises/{name} differs from its solution: run `make exercises`")
        for name in orphans:
            print(f"exercises/{name} has no solution in solutions/")
        return 1 if stale or orphans else 0
    for name in stale:
        print(f"wrote exercises/{name}")
    for name in orphans:
        print(f"exercises/{name} has no solution in solutions/ (left alone)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
