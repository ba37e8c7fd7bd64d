"""Committed notebook outputs are test expectations: they must exist and must not depend on the machine."""

import json
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
COMPARED = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "solutions").glob("*.ipynb"))
LESSONS = sorted((ROOT / "notebooks").glob("*.ipynb"))

# Anything here in a stored output would make nbval fail on another machine or another day.
MACHINE_SPECIFIC = {
    "an absolute path": re.compile(r"(?<![\w.])/(root|home|tmp|work|usr|opt|var)/|site-packages|[A-Z]:\\\\"),
    "a port": re.compile(r"(127\.0\.0\.1|localhost|\[::1\]):\d{2,5}"),
    "a process id": re.compile(r"(?i)\bpid\b\s*[=:]?\s*\d+"),
    "a timestamp": re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d|\b\d\d? (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:"),
    "a timing": re.compile(r"\b\d+\.\d+\s?(ms|s)\b"),
}
# Paths are never acceptable; the rest may appear in a cell whose output nbval ignores.
ALWAYS = {"an absolute path"}


def sanitizers() -> list[tuple[re.Pattern, str]]:
    lines = [ln.strip() for ln in (ROOT / "tests" / "sanitize.cfg").read_text().splitlines()]
    regexes = [ln.removeprefix("regex:").strip() for ln in lines if ln.startswith("regex:")]
    replaces = [ln.removeprefix("replace:").strip() for ln in lines if ln.startswith("replace:")]
    assert len(regexes) == len(replaces), "sanitize.cfg pairs every regex with a replace"
    return [(re.compile(r), s) for r, s in zip(regexes, replaces)]


def output_text(output: dict) -> str:
    if output.get("output_type") == "stream":
        return output.get("text", "")
    data = output.get("data", {})
    return "".join(data.get(kind, "") for kind in ("text/plain", "text/html", "text/markdown"))


def code_cells(path: Path):
    nb = nbformat.read(path, as_version=4)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and cell.source.strip():
            yield index, cell


def test_there_are_lessons():
    assert LESSONS, "notebooks/ holds the lessons"


@pytest.mark.parametrize("path", COMPARED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_code_cell_has_stored_output(path):
    missing = [i for i, cell in code_cells(path) if cell.get("execution_count") is None and "nbval-skip" not in cell.metadata.get("tags", [])]
    assert not missing, f"cells {missing} were never run: nbval would compare nothing there (run `make outputs`)"


@pytest.mark.parametrize("path", COMPARED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_unexpected_errors_stored(path):
    bad = [
        i
        for i, cell in code_cells(path)
        if any(o.get("output_type") == "error" for o in cell.outputs) and "raises-exception" not in cell.metadata.get("tags", [])
    ]
    assert not bad, f"cells {bad} store a traceback but are not tagged raises-exception"


@pytest.mark.parametrize("path", COMPARED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_outputs_do_not_depend_on_the_machine(path):
    rules = sanitizers()
    problems = []
    for index, cell in code_cells(path):
        ignored = "nbval-ignore-output" in cell.metadata.get("tags", [])
        for output in cell.outputs:
            text = output_text(output)
            for pattern, replacement in rules:
                text = pattern.sub(replacement, text)
            for what, pattern in MACHINE_SPECIFIC.items():
                if ignored and what not in ALWAYS:
                    continue
                match = pattern.search(text)
                if match:
                    problems.append(f"cell {index}: {what} ({match.group(0)!r})")
    assert not problems, "; ".join(problems)


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_lesson_shape(path):
    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# "), "a lesson opens with its title"
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "What to remember" in markdown, "a lesson ends with what to remember"
    links = re.findall(r"\]\((exercises/[^)]+\.ipynb)\)", markdown)
    assert links, "a lesson links to its exercise"
    for link in links:
        assert (ROOT / link).exists(), f"{link} does not exist"


WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def widget_views(nb) -> list[str]:
    return [o["data"][WIDGET_VIEW]["model_id"] for c in nb.cells for o in c.get("outputs", []) if WIDGET_VIEW in o.get("data", {})]


@pytest.mark.parametrize("path", COMPARED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_saved_widget_state_draws_every_view_and_does_not_depend_on_the_machine(path):
    # A static page (make site) draws the composer and the transcript view from this state; scripts/refresh_outputs.py
    # keeps it, pruned to the models the views reach. It is a snapshot of what the views showed, in every case
    # compared: no port, path, pid, time or timing may be in it.
    nb = nbformat.read(path, as_version=4)
    views = widget_views(nb)
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    assert bool(views) == bool(state), "views without a saved state, or a state no view shows (run scripts/refresh_outputs.py)"
    text = json.dumps(state, ensure_ascii=False)
    referenced = set(views) | set(re.findall(r'"IPY_MODEL_([^"]+)"', text))
    assert referenced == set(state), f"models shown or referenced but not saved: {referenced - set(state)}; saved but unreached: {set(state) - referenced}"
    assert all(model_id.startswith(f"{path.stem}-widget-") for model_id in state), "model ids are renumbered, not the kernel's random ones"
    problems = [f"{what} ({match.group(0)!r})" for what, pattern in MACHINE_SPECIFIC.items() if (match := pattern.search(text))]
    assert not problems, "; ".join(problems)
