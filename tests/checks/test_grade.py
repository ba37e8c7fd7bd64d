"""`make grade`: every learner notebook in a folder, each learner alone in a copy of the lab, into grades.csv and HTML.

One grading run over real, wrong, stub, broken and hostile submissions of exercise 00 and right ones of 23 and 24
(beside two runs that need other limits: an endless loop, a stuck notebook); the tests read the rows an
instructor would read.
"""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from checks.grade import isolation_available
from labserver.warm import WARM

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = sorted((ROOT / "solutions").glob("00-*.ipynb"))[0]
EXERCISE = ROOT / "exercises" / SOLUTION.name
CHECKS = ["check_start_server", "check_first_frame", "check_send_one"]
PROBE = ROOT / "hostile-was-here"
# One grading run of six notebooks serves every test here; on a loaded machine it takes minutes.
pytestmark = [pytest.mark.timeout(900), pytest.mark.slow]

# What a hostile notebook tries; each attempt reports through a check verdict, the one channel out.
HOSTILE = """
import os, urllib.request
from checks.verdict import passed
try:
    open(PROBE_PATH, "w").write("x")
    kit = "kit writable"
except OSError as error:
    kit = "kit refused: " + error.strerror
try:
    urllib.request.urlopen("https://pypi.org", timeout=5)
    net = "network open"
except Exception as error:
    net = "network refused"
others = sorted(os.listdir(SUBMISSIONS)) if os.path.isdir(SUBMISSIONS) else []  # hidden, or gone with /tmp
import glob
own = os.environ.get("LABSERVER_WARM", "")
outer = OUTER_STARTER
starters = glob.glob("/tmp/labserver-warm-*/starter")
warm = ("own warm starter" if own and os.path.exists(own) else "no warm starter") + (
    "; outer starter reachable" if outer and os.path.exists(outer) else "; outer starter out of reach")
import jsonschema, sys
grammar = "IRI grammar built" if "lark" in sys.modules else "no IRI grammar"
passed(f"probe: {kit}; {net}; {warm}; starters in /tmp: {len(starters)}; submissions visible: {others}; "
       f"copies visible: {len(os.listdir('../..'))}; jsonschema imported with {grammar}")
"""


def notebook(path: Path, *sources: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def grade(folder: Path, cell_timeout: int, timeout: int = 300) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "checks.grade", str(folder), "--timeout", str(timeout),
                             "--cell-timeout", str(cell_timeout)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def read_rows(folder: Path) -> list[dict]:
    with open(folder / "grades.csv", newline="", encoding="utf-8") as rows:
        return list(csv.DictReader(rows))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("submissions")
    for learner, source in {"ada": SOLUTION, "bob": EXERCISE}.items():
        (folder / learner).mkdir()
        (folder / learner / SOLUTION.name).write_text(source.read_text())
    wrong = nbformat.read(SOLUTION, as_version=4)
    for cell in wrong.cells:
        cell.source = cell.source.replace('"method": "tools/call"', '"method": "tools/cal"')
    (folder / "cy").mkdir()
    nbformat.write(wrong, folder / "cy" / "00-mine.ipynb")
    (folder / "dee").mkdir()
    (folder / "dee" / "00-first-look.ipynb").write_text('{"cells": [')
    # A test run's own warm starter: a lab it forked would run outside the sandbox, so none may reach it.
    outer = os.environ.get(WARM, "")
    hostile = (HOSTILE.replace("PROBE_PATH", repr(str(PROBE))).replace("SUBMISSIONS", repr(str(folder)))
               .replace("OUTER_STARTER", repr(outer)))
    # Probe what it can reach, delete its copy of the lab, then kill its own kernel.
    notebook(folder / "fay" / "00-first-look.ipynb", hostile, "import shutil\nshutil.rmtree('../kit')",
             "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
    # The endless loop is graded on its own with a short cell limit, so the others keep a generous one.
    endless = tmp_path_factory.mktemp("endless")
    notebook(endless / "eve" / "00-first-look.ipynb", "while True:\n    pass")
    # Exercise 24 reads lesson 23's cells from ../notebooks and runs the conformance suite from beside mcpwire:
    # a sandbox that holds only the kit's packages gave its right notebook "not done" on every check.
    for name in ("23-a-server-by-hand.ipynb", "24-a-server-over-http.ipynb"):
        (folder / "gus").mkdir(exist_ok=True)
        (folder / "gus" / name).write_text((ROOT / "solutions" / name).read_text())
    # A learner's notebooks share one sandbox: a stuck one is stopped at the notebook limit, and the next still runs.
    # It waits rather than spins (the limit kills the kernel's process group either way): a spinning kernel would
    # take a core for the whole minute from the rest of the test run.
    stuck = tmp_path_factory.mktemp("stuck")
    notebook(stuck / "hal" / "00-a-loop.ipynb", "import checks, time", "while True:\n    time.sleep(1)")
    (stuck / "hal" / "00-b-fixed.ipynb").write_text(SOLUTION.read_text())
    runs = [grade(folder, 120), grade(endless, 5), grade(stuck, 120, timeout=60)]
    for run in runs:
        _, err = run.communicate(timeout=900)
        assert run.returncode == 0, err[-3000:]
    return folder, read_rows(folder) + read_rows(endless) + read_rows(stuck)


def test_grades_json_has_the_rows_of_the_csv(graded):
    folder, _ = graded
    assert json.loads((folder / "grades.json").read_text(encoding="utf-8")) == read_rows(folder)


def rows_of(graded, learner):
    return [(row["check"], row["verdict"]) for row in graded[1] if row["learner"] == learner]


def test_the_solution_passes_every_check(graded):
    assert rows_of(graded, "ada") == [(check, "pass") for check in CHECKS]


def test_the_stub_is_not_done_yet(graded):
    assert rows_of(graded, "bob") == [(check, "not done") for check in CHECKS]


def test_a_wrong_answer_fails_the_check_it_breaks_and_only_that(graded):
    rows = dict(rows_of(graded, "cy"))
    assert rows == {"check_start_server": "pass", "check_first_frame": "fail", "check_send_one": "pass"}
    message = next(row["message"] for row in graded[1] if row["learner"] == "cy" and row["check"] == "check_first_frame")
    assert message.startswith("✗") and "tools/cal" in message


def test_a_file_that_is_not_json_gets_one_clear_row(graded):
    (row,) = [row for row in graded[1] if row["learner"] == "dee"]
    assert row["verdict"] == "error" and "not a notebook that can be read" in row["message"]


def test_an_endless_loop_is_stopped_and_its_checks_say_so(graded):
    rows = [row for row in graded[1] if row["learner"] == "eve"]
    assert [row["check"] for row in rows] == CHECKS
    assert all(row["verdict"] == "not run" and "more than 5 s" in row["message"] for row in rows)


def test_a_stuck_notebook_is_stopped_at_its_limit_and_the_learners_next_notebook_still_runs(graded):
    rows = [(row["check"], row["verdict"], row["message"]) for row in graded[1] if row["learner"] == "hal"]
    assert [(check, verdict) for check, verdict, _ in rows] == [(c, "not run") for c in CHECKS] + [(c, "pass") for c in CHECKS]
    assert all("did not finish within 60 s" in message for _, _, message in rows[:3])


def test_a_notebook_that_kills_its_kernel_gets_rows_saying_so(graded):
    rows = [row for row in graded[1] if row["learner"] == "fay" and row["check"] in CHECKS]
    assert rows and all(row["verdict"] == "not run" and "kernel died" in row["message"] for row in rows)


@pytest.mark.skipif(not isolation_available(), reason="this machine cannot make namespaces (unshare)")
def test_a_hostile_notebook_reaches_neither_the_kit_nor_the_network_nor_other_submissions(graded):
    (probe,) = [row["message"] for row in graded[1] if row["learner"] == "fay" and row["check"] not in CHECKS]
    assert "kit refused: Read-only file system" in probe and not PROBE.exists()
    assert "network refused" in probe
    # Its labs fork from a starter inside its sandbox; the test run's starter, and any other in /tmp, is hidden.
    assert "own warm starter; outer starter out of reach; starters in /tmp: 1" in probe
    assert "submissions visible: []" in probe and "copies visible: 1" in probe


def test_a_graded_kernel_imports_jsonschema_without_the_iri_grammar(graded):
    # 2 s of CPU in every kernel that validates (a check, or the SDK's client reading structuredContent).
    (probe,) = [row["message"] for row in graded[1] if row["learner"] == "fay" and row["check"] not in CHECKS]
    assert "jsonschema imported with no IRI grammar" in probe


def test_the_kit_and_the_submissions_are_intact_after_grading(graded):
    folder = graded[0]
    assert (ROOT / "checks" / "verdict.py").exists() and (folder / "ada" / SOLUTION.name).exists()


def test_the_html_summary_has_a_row_per_learner_and_the_messages(graded):
    page = (graded[0] / "grades.html").read_text()
    for learner in ("ada", "bob", "cy", "dee", "fay"):
        assert f"<th>{learner}</th>" in page
    assert "3/3 passed" in page and "kernel died" in page and "not a notebook that can be read" in page


def test_exercises_that_need_more_than_the_kit_pass_in_the_sandbox(graded):
    rows = [row for row in graded[1] if row["learner"] == "gus"]
    assert {row["exercise"] for row in rows} == {"23-a-server-by-hand", "24-a-server-over-http"}
    assert [row for row in rows if row["verdict"] != "pass"] == []
