"""The drift canary: `make test` with the newest releases pyproject.toml's ranges allow.

Usage: python scripts/canary.py --uv UV [--python PYTHON] [--keep]

Copies the working tree (tracked and untracked files, not ignored ones) into a throwaway folder,
relocks there with `make lock UPGRADE=1`, prints which packages moved and whether npm has a conformance suite
newer than the one conformance/package.json pins (a pin `make lock` never moves), runs `make test` in the copy
(its own .venv), and prints which notebooks and tests failed. Writes the same report to
artifacts/canary.txt and keeps the copy's artifacts/ in artifacts/canary/. The exit code is make test's.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from packaging.version import InvalidVersion, Version

from mcpwire import node

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._\-]*)==([^\s;\\]+)", re.M)
FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+?)(?:::| )", re.M)
SUITE = "@modelcontextprotocol/conformance"


def pins(lock: Path) -> dict[str, str]:
    return dict(PIN.findall(lock.read_text()))


def copy_tree(target: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_symlink():  # notebooks/exercises links to the exercises: the lab shows it as a folder
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            os.symlink(os.readlink(source), target / name)
        elif source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def moved(before: dict[str, str], after: dict[str, str]) -> list[str]:
    lines = [f"  {name}: {before[name]} -> {after[name]}" for name in sorted(before.keys() & after.keys()) if before[name] != after[name]]
    lines += [f"  {name}: new, {after[name]}" for name in sorted(after.keys() - before.keys())]
    lines += [f"  {name}: no longer needed (was {before[name]})" for name in sorted(before.keys() - after.keys())]
    return lines


def newer_versions(pinned: str, published: list[str]) -> list[str]:
    """The published versions above the pinned one, prereleases included (npm's 0.2.0-alpha.12 reads as 0.2.0a12)."""
    def version(text: str) -> Version | None:
        try:
            return Version(text)
        except InvalidVersion:
            return None
    floor = Version(pinned)
    return [text for text in published if (v := version(text)) is not None and v > floor]


def suite_report() -> list[str]:
    pinned = json.loads((ROOT / "conformance" / "package.json").read_text())["dependencies"][SUITE]
    view = subprocess.run(node.command("npm", "view", SUITE, "dist-tags", "versions", "--json"), env=node.environment(),
                          capture_output=True, text=True, timeout=120)
    if view.returncode != 0:
        return [f"The conformance suite: pinned {pinned}; npm view failed: {view.stderr.strip()[-300:]}"]
    published = json.loads(view.stdout)
    newer = newer_versions(pinned, published["versions"])
    tags = ", ".join(f"{tag} {version}" for tag, version in published["dist-tags"].items())
    return [f"The conformance suite: pinned {pinned} (npm's tags: {tags})",
            f"  newer on npm: {', '.join(newer)} (edit conformance/package.json, then `make lock`)" if newer else "  newer on npm: none"]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="make canary")
    parser.add_argument("--uv", required=True)
    parser.add_argument("--python", default="python3")
    parser.add_argument("--keep", action="store_true", help="keep the throwaway copy")
    args = parser.parse_args(argv)
    copy = Path(tempfile.mkdtemp(prefix="mcp-canary-"))
    kept = ROOT / "artifacts" / "canary"
    kept.mkdir(parents=True, exist_ok=True)
    report: list[str] = []
    code = 1
    try:
        copy_tree(copy)
        # A checkout, as CI's is: the tests that list the tree with git need one.
        subprocess.run(["git", "init", "-q"], cwd=copy, check=True)
        subprocess.run(["git", "add", "-A"], cwd=copy, check=True)
        make = ["make", "--no-print-directory", f"UV={args.uv}", f"PYTHON={args.python}"]
        subprocess.run([*make, "lock", "UPGRADE=1"], cwd=copy, check=True)
        changes = moved(pins(ROOT / "requirements" / "test.txt"), pins(copy / "requirements" / "test.txt"))
        report += ["Packages that moved (newest allowed by pyproject.toml):", *(changes or ["  none"])]
        report += suite_report()
        test = subprocess.Popen([*make, "-k", "test"], cwd=copy, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        output = []
        for line in test.stdout:
            sys.stdout.write(line)
            output.append(line)
        code = test.wait()
        failures = sorted(set(FAILED.findall("".join(output))))
        notebooks = [f for f in failures if f.endswith(".ipynb")]
        report += ["Notebooks whose outputs changed or that broke:", *([f"  {n}" for n in notebooks] or ["  none"])]
        report += ["Other failing tests:", *([f"  {f}" for f in failures if f not in notebooks] or ["  none"])]
        report.append(f"make test exited {code}")
        if (copy / "artifacts").is_dir():
            shutil.copytree(copy / "artifacts", kept, dirs_exist_ok=True)
        shutil.copy2(copy / "requirements" / "test.txt", kept / "test-lock-upgraded.txt")
    finally:
        if args.keep:
            print(f"the copy is kept in {copy}")
        else:
            shutil.rmtree(copy, ignore_errors=True)
    text = "\n".join(report)
    print("\n" + text)
    (ROOT / "artifacts" / "canary.txt").write_text(text + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
