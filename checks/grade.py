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
import contextlib
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
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from checks import bytecode
from checks.verdict import VERDICT_LOG
from labserver.warm import WARM

ROOT = Path(__file__).resolve().parents[1]
KIT = ("checks", "labserver", "mcpwire")
# Lessons an exercise reads: exercise 24 starts from lesson 23's server, written from that lesson's own cells.
LESSONS_READ = ("23-a-server-by-hand.ipynb",)
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


def grade_learner(learner, paths, submissions, base, timeout, cell_timeout, isolate, warm=True):
    """Run one learner's notebooks in one sandbox, one after the other; the rows and seconds of each.

    One copy of the lab and one warm starter serve all of a learner's notebooks: the starter imports the lab
    once, and every lab a check starts forks from it instead of importing the SDK again (1.4 s of CPU each).
    Each notebook still gets a fresh kernel, its own verdict log and its own time limit. Learners share
    nothing: a notebook can reach only its own learner's sandbox.
    """
    started = time.monotonic()
    own = Path(tempfile.mkdtemp(prefix="one-", dir=base))
    shutil.copytree(base / "kit", own / "kit")  # with its bytecode: read-only in the sandbox, it is never written there
    if (ROOT / ".venv-legacy").is_dir():  # exercise 22's legacy server, found beside the checks (read-only in the sandbox)
        (own / "kit" / ".venv-legacy").symlink_to(ROOT / ".venv-legacy")
    if (ROOT / "conformance").is_dir():  # exercise 24's check runs the official suite, found beside mcpwire
        (own / "kit" / "conformance").symlink_to(ROOT / "conformance")
    (own / "notebooks").mkdir()
    for lesson in LESSONS_READ:  # beside the work folder, where an exercise opening ../notebooks/<lesson> finds it
        if (ROOT / "notebooks" / lesson).exists():
            shutil.copyfile(ROOT / "notebooks" / lesson, own / "notebooks" / lesson)
    (own / "work").mkdir()
    (own / "home").mkdir()
    jobs = []
    for number, path in enumerate(paths):
        shutil.copyfile(path, own / "work" / f"{number:03d}.ipynb")
        jobs.append({"notebook": f"{number:03d}.ipynb", "log": str(own / f"verdicts-{number:03d}.jsonl")})
    (own / "jobs.json").write_text(json.dumps(jobs), encoding="utf-8")
    setup = time.monotonic() - started

    command = [sys.executable, "-m", "checks.grade", "--worker", str(own), "--timeout", str(timeout),
               "--cell-timeout", str(cell_timeout), *([] if warm else ["--cold"])]
    if isolate:
        command = ["unshare", "--user", "--map-root-user", "--net", "--mount", "--propagation", "private", "--",
                   *command, "--hide", str(submissions.resolve()), "--hide-base", str(base), "--read-only", str(ROOT)]
    env = {**os.environ, "HOME": str(own / "home"), "PYTHONPATH": str(own / "kit"),
           "JUPYTER_RUNTIME_DIR": str(own / "home" / "runtime"), "JUPYTER_DATA_DIR": str(own / "home" / "data"),
           "JUPYTER_PATH": "", "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("JUPYTER_CONFIG_DIR", None)
    env.pop(WARM, None)  # a starter outside the sandbox would fork labs outside it; the worker starts its own
    env.pop(VERDICT_LOG, None)
    worker = subprocess.Popen(command, cwd=own / "work", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, start_new_session=True)
    # Each notebook has its own limit inside the worker; this one only stops a worker that hangs outside them.
    try:
        out, err = worker.communicate(timeout=(timeout + 30) * len(paths) + 60)
        report = json.loads(out.strip().splitlines()[-1]) if out.strip() else None
    except subprocess.TimeoutExpired:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.communicate()
        report, err = None, "it did not finish"
    except json.JSONDecodeError:
        report, err = None, "it printed something unexpected"
    rows, seconds = [], []
    for number, path in enumerate(paths):
        exercise = exercise_of(path) or path.stem
        outcome = (report["notebooks"][number] if report else
                   {"stopped": f"the grader's worker failed: {(err or '').strip()[-300:]}", "seconds": {}})
        rows.append(verdict_rows(learner, exercise, expected_checks(exercise), Path(jobs[number]["log"]), outcome))
        seconds.append(outcome.get("seconds", {}))
    shutil.rmtree(own, ignore_errors=True)
    timings = {"setup": setup, "warm": (report or {}).get("warm", 0.0), "total": time.monotonic() - started}
    return rows, seconds, timings


def copy_kit(folder):
    """The kit as every sandbox gets it, with its bytecode (a sandbox cannot write any)."""
    for package in KIT:
        shutil.copytree(ROOT / package, folder / package, ignore=shutil.ignore_patterns("__pycache__"))
    bytecode.compile_kit(folder)


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


def run_worker(own, hide, hide_base, read_only, timeout, cell_timeout, warm=True):
    """Inside the namespaces: enclose, start a warm starter, then each notebook with a kernel of its own."""
    if hide_base:
        enclose(Path(own), Path(hide_base), Path(hide), Path(read_only))
    # nbformat imports jsonschema, whose format checkers build an IRI grammar with lark at import (1.5 s of CPU);
    # notebooks are never checked against an IRI format, so the grader goes without that one checker.
    sys.modules.setdefault("rfc3987_syntax", None)
    from labserver.warm import warm_starter

    jobs = json.loads((Path(own) / "jobs.json").read_text(encoding="utf-8"))
    started = time.monotonic()
    with warm_starter(ready_first=False) if warm else contextlib.nullcontext() as starter:
        # Each notebook's kernel boots while the notebook before it runs, the first while the starter imports the
        # lab (a kernel costs about 1 s of start-up): still one fresh kernel per notebook, never shared.
        upcoming = start_kernel(jobs[0]["log"]) if jobs else None
        if starter:
            wait_for_starter(starter)  # no notebook runs before it listens: a lab started sooner would start cold
        ready = time.monotonic() - started
        results = []
        for number, job in enumerate(jobs):
            kernel, upcoming = upcoming, start_kernel(jobs[number + 1]["log"]) if number + 1 < len(jobs) else None
            results.append(run_notebook(job["notebook"], timeout, cell_timeout, kernel))
    return {"notebooks": results, "warm": ready}


def wait_for_starter(path, limit=20.0):
    """Until the warm starter listens (its socket appears only then), or limit seconds (labs then start cold)."""
    deadline = time.monotonic() + limit
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.02)


# jsonschema builds an RFC 3987 grammar with lark at import when rfc3987_syntax is installed (JupyterLab's
# jupyter-events asks for it): 2 s of CPU in a kernel whose notebook validates anything, the SDK's client
# checking a tool's structuredContent included. The grammar serves only the "iri" format checkers, which no
# check and no SDK validation uses (a validator asserts formats only when given a checker).
WITHOUT_IRI_GRAMMAR = "--IPKernelApp.exec_lines=import sys; sys.modules.setdefault('rfc3987_syntax', None)"


def start_kernel(log):
    """A kernel started now, in the background, that writes its verdicts to log."""
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.utils import run_sync

    manager = AsyncKernelManager(kernel_name="python3")
    run_sync(manager.start_kernel)(extra_arguments=["--HistoryManager.hist_file=:memory:", WITHOUT_IRI_GRAMMAR],
                                   cwd=str(Path.cwd()), env={**os.environ, VERDICT_LOG: log})
    # Connected now, so its IOPub subscription is in place by the time the notebook starts: a client that
    # connects then misses the first status message and waits 0.2 s to ask again (jupyter_client's wait_for_ready).
    connection = manager.client()
    connection.start_channels()
    return manager, connection


async def ready(connection, limit):
    """Until the kernel answers kernel_info on its shell and its IOPub reaches us.

    jupyter_client's wait_for_ready then also waits for 0.2 s of IOPub silence; nbclient skips every message
    that answers none of its cells, so here that wait would only add 0.2 s to each notebook.
    """
    from queue import Empty

    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if not await connection.is_alive():
            raise RuntimeError("the kernel died before it answered kernel_info")
        connection.kernel_info()
        try:
            reply = await connection.shell_channel.get_msg(timeout=1)
            if reply["msg_type"] == "kernel_info_reply":
                await connection.iopub_channel.get_msg(timeout=0.2)  # any message: IOPub is subscribed
                return
        except Empty:
            continue
    raise RuntimeError(f"the kernel did not answer kernel_info within {limit} s")


def run_notebook(name, timeout, cell_timeout, kernel):
    """Execute one notebook in its own kernel, stopped at the time limit; what happened, and how long it took."""
    import nbformat
    from jupyter_core.utils import run_sync
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    started = time.monotonic()
    seconds = {}

    def ended(outcome):
        seconds["wall"] = time.monotonic() - started
        return {**outcome, "seconds": seconds}

    kernel, connection = kernel
    try:
        nb = nbformat.read(Path(name), as_version=4)
    except Exception as error:  # whatever is wrong with the file, the row says it
        with contextlib.suppress(Exception):
            connection.stop_channels()
            run_sync(kernel.shutdown_kernel)(now=True)
        return ended({"invalid": f"not a notebook that can be read ({type(error).__name__}: {str(error)[:200]})"})
    client = NotebookClient(nb, km=kernel, timeout=cell_timeout, allow_errors=True, kernel_name="python3",
                            resources={"metadata": {"path": str(Path.cwd())}})
    client.kc = connection  # setup_kernel uses it as it is: wait for it here, as nbclient would
    expired = threading.Event()

    def stop_kernel():
        expired.set()
        with contextlib.suppress(Exception):  # the kernel runs in a session of its own (jupyter_client's launcher)
            os.killpg(client.km.provisioner.process.pid, signal.SIGKILL)

    watchdog = threading.Timer(timeout, stop_kernel)
    watchdog.start()
    try:
        with client.setup_kernel(cleanup_kc=True):  # the kernel was started for this notebook alone: stop it after
            run_sync(ready)(connection, client.startup_timeout)
            connection.allow_stdin = False
            seconds["kernel"] = time.monotonic() - started
            for index, cell in enumerate(nb.cells):
                client.execute_cell(cell, index)
    except Exception as error:
        if expired.is_set():
            return ended({"stopped": f"the notebook did not finish within {timeout} s (the time limit); it was stopped"})
        if isinstance(error, DeadKernelError):
            return ended({"stopped": "the notebook's kernel died (the notebook ended its own process)"})
        kind = type(error).__name__
        if "Timeout" in kind:
            return ended({"stopped": f"a cell ran for more than {cell_timeout} s; the notebook was stopped there"})
        return ended({"stopped": f"the notebook could not be run ({kind}: {str(error)[:200]})"})
    finally:
        watchdog.cancel()
    seconds["cells"] = time.monotonic() - started - seconds["kernel"]
    return ended({"finished": True})


def enclose(own, base, submissions, kit):
    """Loopback only; the submissions, the other copies and everything in the temporary folder hidden; the kit
    and our own copy of it read-only.

    The temporary folder is hidden whole, not only our base: another grader's or a test run's warm starter
    listens on a socket there, and a lab forked by it would run outside this sandbox.
    """
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
    # Keep what the notebook needs from the hidden folders (the kit, the Python it runs on, our own copy): hold each
    # open, cover the temporary folders, then put each back where it was, all but our copy read-only.
    hidden = hidden_folders(base)
    keep = []
    for path in (kit, Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), own):
        if any(path.is_relative_to(folder) for folder in hidden) and not any(path.is_relative_to(kept) for kept in keep):
            keep.append(path)
    held = {path: os.open(path, os.O_PATH | os.O_DIRECTORY) for path in keep}
    for folder in hidden:
        mount("-t", "tmpfs", "tmpfs", str(folder))
    for path in keep:
        path.mkdir(parents=True, exist_ok=True)
        mount("--no-canonicalize", "--bind", f"/proc/self/fd/{held[path]}", str(path), pass_fds=(held[path],))
        if path != own:
            mount("-o", "remount,bind,ro", str(path))
    kit_copy = own / "kit"
    mount("--bind", str(kit_copy), str(kit_copy))
    mount("-o", "remount,bind,ro", str(kit_copy))
    os.chdir(own / "work")


def hidden_folders(base):
    """Our base of copies, and the temporary folder (with any starter's socket in it), once each."""
    folders = {Path(tempfile.gettempdir()).resolve(), Path("/tmp").resolve()}
    if not any(base.is_relative_to(folder) for folder in folders):
        folders.add(base)
    return sorted(folders)


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


def groups_of(submissions, jobs, share=True):
    """A sandbox per learner; a learner's notebooks split further while there are fewer sandboxes than jobs.
    Without sharing, a sandbox per notebook."""
    if not share:
        return [(learner, [(index, path)]) for index, (learner, path) in enumerate(submissions)]
    by_learner = {}
    for index, (learner, path) in enumerate(submissions):
        by_learner.setdefault(learner, []).append((index, path))
    groups = [(learner, found) for learner, found in by_learner.items()]
    while len(groups) < jobs and any(len(found) > 1 for _, found in groups):
        learner, found = max(groups, key=lambda group: len(group[1]))
        groups.remove((learner, found))
        half = len(found) // 2
        groups += [(learner, found[:half]), (learner, found[half:])]
    return groups


def grade_folder(folder, jobs, timeout, cell_timeout, isolate, share=True):
    """Grade every notebook under folder: rows in the order of the notebooks, seconds per notebook, per sandbox."""
    submissions = find_submissions(folder)
    bytecode.write_missing()
    base = Path(tempfile.mkdtemp(prefix="mcp-grade-"))
    ordered, seconds, sandboxes = {}, {}, []

    def grade_group(group):
        learner, found = group
        return found, grade_learner(learner, [path for _, path in found], folder, base, timeout, cell_timeout, isolate, warm=share)

    try:
        copy_kit(base / "kit")
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for found, (rows, times, timings) in pool.map(grade_group, groups_of(submissions, jobs, share)):
                for (index, _), own_rows, spent in zip(found, rows, times):
                    ordered[index] = own_rows
                    seconds[index] = spent
                sandboxes.append(timings)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    rows = [row for index in sorted(ordered) for row in ordered[index]]
    return rows, [seconds[index] for index in sorted(seconds)], sandboxes


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m checks.grade", description=__doc__.splitlines()[0])
    parser.add_argument("submissions", nargs="?", type=Path)
    parser.add_argument("--timeout", type=int, default=300, help="seconds per notebook (default 300)")
    parser.add_argument("--cell-timeout", type=int, default=60, help="seconds per cell (default 60)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2,
                        help="sandboxes graded at once (default: one per CPU)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON on stdout (the summary goes to stderr)")
    parser.add_argument("--one-per-notebook", action="store_true",
                        help="a sandbox and cold labs for every notebook, not one warm sandbox per learner (slower)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--cold", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--hide", help=argparse.SUPPRESS)
    parser.add_argument("--hide-base", help=argparse.SUPPRESS)
    parser.add_argument("--read-only", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(run_worker(args.worker, args.hide, args.hide_base, args.read_only, args.timeout, args.cell_timeout,
                                    warm=not args.cold)))
        return 0
    if args.submissions is None or not args.submissions.is_dir():
        parser.error("name a folder of learner notebooks")
    isolate = isolation_available()
    notes = [] if isolate else ["Not isolated: this machine cannot make namespaces (unshare), so notebooks ran with "
                                "the network and files of the user running the grader."]
    started = time.monotonic()
    rows, seconds, _ = grade_folder(args.submissions, args.jobs, args.timeout, args.cell_timeout, isolate,
                                    share=not args.one_per_notebook)
    write_reports(rows, args.submissions, notes)
    wall = time.monotonic() - started
    summary = sys.stderr if args.json else sys.stdout
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
    each = wall / len(seconds) if seconds else 0
    print(f"graded {len(seconds)} notebook(s) in {wall:.0f} s ({each:.1f} s each): "
          f"{args.submissions / 'grades.csv'}, grades.json and grades.html there", file=summary)
    for note in notes:
        print(note, file=summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
