"""Grade a folder of learner notebooks: `python -m checks.grade SUBMISSIONS [--timeout S] [--jobs N]`.

Layout: SUBMISSIONS/<learner>/<NN-name>.ipynb (a notebook directly in SUBMISSIONS is graded under its
own name). Every notebook runs in a temporary copy of the lab (checks/, labserver/, mcpwire/) with a time
limit; on Linux also in its own network namespace (loopback only) and mount namespace, where the
submissions folder, the other copies and the kit itself cannot be read or changed. The checks write one
JSON line per verdict (checks.verdict, CHECKS_VERDICT_LOG); a check the notebook never reached gets a
"not run" row saying why. Writes SUBMISSIONS/grades.csv (learner, exercise, check, verdict, message),
the same rows as SUBMISSIONS/grades.json (a list of objects with those keys, for a hub or an LMS; `--json`
also prints it to stdout, with the summary on stderr) and SUBMISSIONS/grades.html. `python -m checks.classroom`
turns grades.json into what GitHub Classroom and GitLab read.

It lives beside the checks rather than in mcpwire: the toolkit learners import knows nothing of grading.
"""

import argparse
import csv
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from labserver.warm import WARM

ROOT = Path(__file__).resolve().parents[1]
KIT = ("checks", "labserver", "mcpwire")
CHECK_CALL = re.compile(r"\b(check_\w+)\s*\(")
COLUMNS = ("learner", "exercise", "check", "verdict", "message")


def expected_checks(exercise):
    """The checks the complete version of an exercise calls, in order."""
    solution = ROOT / "solutions" / f"{exercise}.ipynb"
    if not solution.exists():
        return []
    cells = json.loads(solution.read_text(encoding="utf-8"))["cells"]
    names = [name for cell in cells if cell["cell_type"] == "code" for name in CHECK_CALL.findall("".join(cell["source"]))]
    return list(dict.fromkeys(names))


def exercise_of(path):
    """The exercise a notebook is, by its NN- prefix (learners rename the rest)."""
    number = re.match(r"(\d\d)", path.name)
    known = {p.stem[:2]: p.stem for p in (ROOT / "solutions").glob("*.ipynb")}
    return known.get(number.group(1)) if number else None


def find_submissions(folder):
    found = []
    for path in sorted(folder.rglob("*.ipynb")):
        relative = path.relative_to(folder)
        if ".ipynb_checkpoints" in relative.parts or relative.name.startswith("grades"):
            continue
        learner = relative.parts[0] if len(relative.parts) > 1 else path.stem
        found.append((learner, path))
    return found


def isolation_available():
    """Whether this machine lets us make namespaces (Linux with unshare and user namespaces or root)."""
    if not sys.platform.startswith("linux") or not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--net", "--mount", "true"], capture_output=True)
    return probe.returncode == 0


def grade_one(learner, path, submissions, base, timeout, cell_timeout, isolate):
    """Run one notebook in its own copy; return its rows."""
    exercise = exercise_of(path) or path.stem
    expected = expected_checks(exercise)
    own = Path(tempfile.mkdtemp(prefix="one-", dir=base))
    for package in KIT:
        shutil.copytree(ROOT / package, own / "kit" / package, ignore=shutil.ignore_patterns("__pycache__"))
    (own / "work").mkdir()
    (own / "home").mkdir()
    log = own / "verdicts.jsonl"
    shutil.copyfile(path, own / "work" / "submission.ipynb")

    command = [sys.executable, "-m", "checks.grade", "--worker", str(own), "--cell-timeout", str(cell_timeout)]
    if isolate:
        command = ["unshare", "--user", "--map-root-user", "--net", "--mount", "--propagation", "private", "--",
                   *command, "--hide", str(submissions.resolve()), "--hide-base", str(base), "--read-only", str(ROOT)]
    env = {**os.environ, "HOME": str(own / "home"), "PYTHONPATH": str(own / "kit"), "CHECKS_VERDICT_LOG": str(log),
           "JUPYTER_RUNTIME_DIR": str(own / "home" / "runtime"), "JUPYTER_DATA_DIR": str(own / "home" / "data"),
           "JUPYTER_PATH": "", "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("JUPYTER_CONFIG_DIR", None)
    env.pop(WARM, None)  # a test run's warm starter lives outside the sandbox, and so would the labs it forks
    started = time.monotonic()
    worker = subprocess.Popen(command, cwd=own / "work", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, start_new_session=True)
    try:
        out, err = worker.communicate(timeout=timeout)
        outcome = json.loads(out.strip().splitlines()[-1]) if out.strip() else {"stopped": f"the grader's worker failed: {err.strip()[-300:]}"}
    except subprocess.TimeoutExpired:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.communicate()
        outcome = {"stopped": f"the notebook did not finish within {timeout} s (the time limit); it was stopped"}
    except json.JSONDecodeError:
        outcome = {"stopped": "the grader's worker printed something unexpected"}
    seconds = time.monotonic() - started
    rows = verdict_rows(learner, exercise, expected, log, outcome)
    shutil.rmtree(own, ignore_errors=True)
    return rows, seconds


def verdict_rows(learner, exercise, expected, log, outcome):
    rows, seen = [], set()
    if "invalid" in outcome:
        return [dict(learner=learner, exercise=exercise, check="(notebook)", verdict="error", message=outcome["invalid"])]
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines() if log.exists() else []
    for line in lines:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        rows.append(dict(learner=learner, exercise=exercise, check=str(entry.get("check")), verdict=str(entry.get("verdict")),
                         message=str(entry.get("message"))))
        seen.add(entry.get("check"))
    why = outcome.get("stopped") or "the notebook never called it"
    for check in expected:
        if check not in seen:
            rows.append(dict(learner=learner, exercise=exercise, check=check, verdict="not run", message=why))
    if outcome.get("stopped") and not expected:
        rows.append(dict(learner=learner, exercise=exercise, check="(notebook)", verdict="error", message=why))
    return rows


def run_worker(own, hide, hide_base, read_only, cell_timeout):
    """Inside the namespaces: loopback up, other folders out of reach, then run the notebook."""
    if hide_base:
        enclose(Path(own), Path(hide_base), Path(hide), Path(read_only))
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    try:
        nb = nbformat.read(Path("submission.ipynb"), as_version=4)
    except Exception as error:  # whatever is wrong with the file, the row says it
        return {"invalid": f"not a notebook that can be read ({type(error).__name__}: {str(error)[:200]})"}
    client = NotebookClient(nb, timeout=cell_timeout, allow_errors=True, kernel_name="python3",
                            resources={"metadata": {"path": str(Path.cwd())}})
    try:
        client.execute()
    except DeadKernelError:
        return {"stopped": "the notebook's kernel died (the notebook ended its own process)"}
    except Exception as error:
        name = type(error).__name__
        if "Timeout" in name:
            return {"stopped": f"a cell ran for more than {cell_timeout} s; the notebook was stopped there"}
        return {"stopped": f"the notebook could not be run ({name}: {str(error)[:200]})"}
    return {"finished": True}


def enclose(own, base, submissions, kit):
    """Loopback only, the submissions and the other copies hidden, the kit read-only."""
    import fcntl
    import socket
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(sock, 0x8913, request))[1]  # SIOCGIFFLAGS
        fcntl.ioctl(sock, 0x8914, struct.pack("16sh", b"lo", flags | 0x1))  # SIOCSIFFLAGS, IFF_UP
    mount = lambda *args, **kw: subprocess.run(["mount", *args], check=True, capture_output=True, **kw)  # noqa: E731
    mount("--bind", str(kit), str(kit))
    mount("-o", "remount,bind,ro", str(kit))
    mount("-t", "tmpfs", "tmpfs", str(submissions))
    # Keep our own copy: hold it open, cover every copy, then put ours back where it was.
    held = os.open(own, os.O_PATH | os.O_DIRECTORY)
    mount("-t", "tmpfs", "tmpfs", str(base))
    own.mkdir(parents=True)
    mount("--no-canonicalize", "--bind", f"/proc/self/fd/{held}", str(own), pass_fds=(held,))
    os.chdir(own / "work")


def write_reports(rows, folder, notes):
    with open(folder / "grades.csv", "w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    (folder / "grades.json").write_text(json.dumps(rows, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    (folder / "grades.html").write_text(summary_html(rows, notes), encoding="utf-8")


def summary_html(rows, notes):
    by_learner = {}
    for row in rows:
        by_learner.setdefault(row["learner"], {}).setdefault(row["exercise"], []).append(row)
    exercises = sorted({row["exercise"] for row in rows})
    colour = {"pass": "#d7f5d7", "fail": "#fbd8d8", "not done": "#fff2c6", "not run": "#e6e6e6", "error": "#f3b6b6"}
    head = "".join(f"<th>{html.escape(e)}</th>" for e in exercises)
    body = []
    for learner, done in sorted(by_learner.items()):
        cells = []
        for exercise in exercises:
            checks = done.get(exercise, [])
            passed = sum(row["verdict"] == "pass" for row in checks)
            worst = next((v for v in ("error", "fail", "not run", "not done") if any(r["verdict"] == v for r in checks)), "pass")
            details = "".join(f"<li><b>{html.escape(r['check'])}</b> {html.escape(r['verdict'])}: "
                              f"<pre>{html.escape(r['message'])}</pre></li>" for r in checks)
            summary = f"{passed}/{len(checks)} passed" if checks else "no submission"
            if checks and worst != "pass":
                summary += f" · {worst}"
            cells.append(f'<td style="background:{colour[worst] if checks else "#fff"}"><details><summary>{summary}</summary>'
                         f"<ul>{details}</ul></details></td>")
        body.append(f"<tr><th>{html.escape(learner)}</th>{''.join(cells)}</tr>")
    note = "".join(f"<p>{html.escape(n)}</p>" for n in notes)
    return ("<!doctype html><meta charset='utf-8'><title>Grades</title>"
            "<style>body{font-family:sans-serif}td,th{border:1px solid #999;padding:4px;vertical-align:top}"
            "pre{white-space:pre-wrap;margin:0}table{border-collapse:collapse}</style>"
            f"<h1>Grades</h1>{note}<table><tr><th>learner</th>{head}</tr>{''.join(body)}</table>\n")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m checks.grade", description=__doc__.splitlines()[0])
    parser.add_argument("submissions", nargs="?", type=Path)
    parser.add_argument("--timeout", type=int, default=300, help="seconds per notebook (default 300)")
    parser.add_argument("--cell-timeout", type=int, default=60, help="seconds per cell (default 60)")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks graded at once (default 2)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON on stdout (the summary goes to stderr)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--hide", help=argparse.SUPPRESS)
    parser.add_argument("--hide-base", help=argparse.SUPPRESS)
    parser.add_argument("--read-only", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(run_worker(args.worker, args.hide, args.hide_base, args.read_only, args.cell_timeout)))
        return 0
    if args.submissions is None or not args.submissions.is_dir():
        parser.error("name a folder of learner notebooks")
    submissions = find_submissions(args.submissions)
    isolate = isolation_available()
    notes = [] if isolate else ["Not isolated: this machine cannot make namespaces (unshare), so notebooks ran with "
                                "the network and files of the user running the grader."]
    base = Path(tempfile.mkdtemp(prefix="mcp-grade-"))
    rows, times = [], []
    try:
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for one_rows, seconds in pool.map(lambda sub: grade_one(*sub, args.submissions, base, args.timeout, args.cell_timeout, isolate),
                                              submissions):
                rows.extend(one_rows)
                times.append(seconds)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    write_reports(rows, args.submissions, notes)
    average = sum(times) / len(times) if times else 0
    summary = sys.stderr if args.json else sys.stdout
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
    print(f"graded {len(submissions)} notebook(s), {average:.1f} s each on average: "
          f"{args.submissions / 'grades.csv'}, grades.json and grades.html there", file=summary)
    for note in notes:
        print(note, file=summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
