"""Grading a class: `python -m bench.grade_bench [--notebooks N] [--jobs J]`.

A synthetic class of N notebooks (46 by default) cycling through every exercise: right ones (the solutions), stubs (the
exercises as handed out), wrong ones (each answer a function that returns None, or a top-level answer that does
nothing, so the checks run and say ✗) and stuck ones (a busy loop, stopped at the cell limit). The same class
is graded twice in one run: the grader as it is (a warm sandbox per learner) and the baseline it replaced (a
sandbox and cold labs for every notebook). Prints every
workload: notebooks per minute, wall and CPU per notebook by kind (mean and median), a right notebook's time
by exercise (some checks wait on purpose: for a timeout to pass, a task's poll interval, a silent server), and
where a sandbox's time goes.
"""

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from checks.grade import grade_folder, isolation_available

ROOT = Path(__file__).resolve().parents[1]
STUB = 'raise NotImplementedError("your code here")'  # what scripts/make_exercises.py leaves for an answer
KINDS = ["right", "right", "right", "wrong", "stub", "right", "right", "wrong", "stub", "stuck"]
# The grader's own default: a right notebook's longest cell (exercise 22's seven servers, exercise 20's polling) runs
# over 20 s on a busy machine, and a shorter limit would grade it "not run".
STUCK_CELL_LIMIT = 60


def notebook_of(kind, exercise):
    if kind == "stub":
        return nbformat.read(ROOT / "exercises" / f"{exercise}.ipynb", as_version=4)
    if kind == "stuck":
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell("while True:\n    pass")]
        return nb
    if kind == "wrong":
        nb = nbformat.read(ROOT / "exercises" / f"{exercise}.ipynb", as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.source = "\n".join(("pass" if line == STUB else line.replace(STUB, "return None"))
                                         for line in cell.source.splitlines())
        return nb
    return nbformat.read(ROOT / "solutions" / f"{exercise}.ipynb", as_version=4)


def make_class(folder, count, per_learner):
    exercises = sorted(path.stem for path in (ROOT / "solutions").glob("*.ipynb"))
    kinds = {}
    for number in range(count):
        learner = f"learner{number // per_learner:03d}"
        exercise = exercises[number % len(exercises)]
        kind = KINDS[number % len(KINDS)]
        path = folder / learner / f"{exercise}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook_of(kind, exercise), path)
        kinds[(learner, exercise)] = kind
    return kinds


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def grade(folder, jobs, share, isolate):
    cpu, started = children_cpu(), time.monotonic()
    rows, seconds, sandboxes = grade_folder(folder, jobs, timeout=120, cell_timeout=STUCK_CELL_LIMIT, isolate=isolate,
                                            share=share)
    return rows, seconds, sandboxes, time.monotonic() - started, children_cpu() - cpu


def mean(values):
    return statistics.fmean(values) if values else 0.0


def median(values):
    return statistics.median(values) if values else 0.0


def report(name, folder, kinds, result):
    rows, seconds, sandboxes, wall, cpu = result
    count = len(seconds)
    print(f"{name}: {count} notebooks in {wall:.1f} s wall, {cpu:.1f} s CPU: {60 * count / wall:.1f} notebooks/min, "
          f"{wall / count:.2f} s wall and {cpu / count:.2f} s CPU per notebook")
    paths = sorted(folder.rglob("*.ipynb"))
    by_kind = {}
    for path, spent in zip(paths, seconds):
        by_kind.setdefault(kinds[(path.parent.name, path.stem)], []).append(spent)
    for kind in ("right", "wrong", "stub", "stuck"):
        spent = by_kind.get(kind, [])
        walls = [s.get("wall", 0) for s in spent]
        print(f"  {kind:5} x{len(spent):3}: {mean(walls):5.2f} s in its sandbox (median {median(walls):5.2f} s; "
              f"waiting for its kernel {mean([s.get('kernel', 0) for s in spent]):4.2f} s, "
              f"cells {mean([s.get('cells', 0) for s in spent]):5.2f} s)")
    right = {}
    for path, spent in zip(paths, seconds):
        if kinds[(path.parent.name, path.stem)] == "right":
            right.setdefault(path.stem[:2], []).append(spent.get("wall", 0))
    print("  right, by exercise (s): " + " ".join(f"{number} {mean(walls):.1f}" for number, walls in sorted(right.items())))
    print(f"  sandboxes x{len(sandboxes)}: set-up {mean([s['setup'] for s in sandboxes]):.2f} s, "
          f"warm starter ready {mean([s['warm'] for s in sandboxes]):.2f} s, "
          f"whole sandbox {mean([s['total'] for s in sandboxes]):.1f} s")
    verdicts = {}
    for row in rows:
        verdicts[row["verdict"]] = verdicts.get(row["verdict"], 0) + 1
    print(f"  verdicts: {dict(sorted(verdicts.items()))}")
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", type=int, default=46, help="46: every exercise twice, 24 of them right")
    parser.add_argument("--per-learner", type=int, default=10, help="notebooks each learner hands in")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args(argv)
    isolate = isolation_available()
    print(f"{args.notebooks} notebooks, {args.per_learner} per learner, {args.jobs} jobs, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}, {'isolated' if isolate else 'NOT isolated'}; a stuck cell stops at "
          f"{STUCK_CELL_LIMIT} s", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "class"
        kinds = make_class(folder, args.notebooks, args.per_learner)
        baseline = grade(folder, args.jobs, share=False, isolate=isolate)
        kit = grade(folder, args.jobs, share=True, isolate=isolate)
        before = report("baseline (a sandbox and cold labs per notebook)", folder, kinds, baseline)
        after = report("the grader (a warm sandbox per learner)", folder, kinds, kit)
    same = [(r["learner"], r["exercise"], r["check"], r["verdict"]) for r in before] == \
           [(r["learner"], r["exercise"], r["check"], r["verdict"]) for r in after]
    print(f"ratio, grader / baseline: wall {kit[3] / baseline[3]:.2f}x, CPU {kit[4] / baseline[4]:.2f}x; "
          f"same verdicts: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
