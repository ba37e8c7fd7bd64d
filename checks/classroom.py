"""Grades as class platforms read them: `python -m checks.classroom github|junit GRADES_JSON [OUT]`.

`github` prints one `exNN=<base64>` line per exercise, for `$GITHUB_OUTPUT`: each is the result a GitHub
Classroom test runner hands to `autograding-grading-reporter` (version 1: a status, `max_score`, and one test
per check, one point each), so Classroom shows a score per exercise. `junit` writes a JUnit XML report, one
test suite per exercise and one test case per check, which GitLab shows as the pipeline's test report.

Every exercise of the course gets its rows, submitted or not: a check its notebook never reached, or an
exercise with no notebook at all, scores nothing and says why.
"""

import base64
import json
import sys
from pathlib import Path
from xml.etree import ElementTree

from checks.grade import ROOT, expected_checks

# The reporter's own words for a check's outcome; everything short of a pass earns no point.
STATUS = {"pass": "pass", "error": "error"}


def exercises():
    return sorted(path.stem for path in (ROOT / "solutions").glob("*.ipynb"))


def by_exercise(rows):
    """{exercise: [row, ...]} for every exercise of the course, in the course's order."""
    grouped = {exercise: [] for exercise in exercises()}
    for row in rows:
        grouped.setdefault(row["exercise"], []).append(row)
    for exercise, found in grouped.items():
        if not found:
            found.extend(dict(exercise=exercise, check=check, verdict="not run", message="no notebook for this exercise was graded")
                         for check in expected_checks(exercise))
    return grouped


def runner_id(exercise):
    """The reporter takes runner ids of letters and digits only, and reads `<ID>_RESULTS` from the environment."""
    return "ex" + exercise[:2]


def classroom_result(found):
    tests = [{"name": row["check"], "status": STATUS.get(row["verdict"], "fail"), "score": int(row["verdict"] == "pass"),
              "message": row["message"], "test_code": "", "filename": "", "line_no": 0, "duration": 0} for row in found]
    statuses = {test["status"] for test in tests}
    status = "error" if "error" in statuses else "fail" if "fail" in statuses else "pass"
    return {"version": 1, "status": status, "max_score": len(tests), "tests": tests}


def github_outputs(rows):
    lines = []
    for exercise, found in by_exercise(rows).items():
        encoded = base64.b64encode(json.dumps(classroom_result(found), ensure_ascii=False).encode()).decode()
        lines.append(f"{runner_id(exercise)}={encoded}")
    return "\n".join(lines) + "\n"


def junit_xml(rows):
    suites = ElementTree.Element("testsuites", name="MCP on the Wire exercises")
    for exercise, found in by_exercise(rows).items():
        failures = sum(row["verdict"] not in ("pass", "error") for row in found)
        errors = sum(row["verdict"] == "error" for row in found)
        suite = ElementTree.SubElement(suites, "testsuite", name=exercise, tests=str(len(found)),
                                       failures=str(failures), errors=str(errors))
        for row in found:
            case = ElementTree.SubElement(suite, "testcase", classname=exercise, name=row["check"])
            if row["verdict"] != "pass":
                tag = "error" if row["verdict"] == "error" else "failure"
                ElementTree.SubElement(case, tag, message=row["verdict"]).text = row["message"]
    return ElementTree.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2 or argv[0] not in ("github", "junit") or (argv[0] == "junit" and len(argv) != 3):
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    rows = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    if argv[0] == "github":
        sys.stdout.write(github_outputs(rows))
    else:
        Path(argv[2]).write_text(junit_xml(rows), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
