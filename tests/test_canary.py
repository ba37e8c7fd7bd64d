"""`make lock` is the one command that writes the lock, and `make canary` reports what moved.

The lock is generated, never edited: running `make lock` again on the same pyproject.toml must pin the
same versions (versions already locked stay; only `UPGRADE=1` moves them).
"""

import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LOCKS = ("lab.txt", "test.txt", "hub.txt", "uv.txt")
NPM_LOCKS = ("conformance", "hub")


def load_canary():
    spec = importlib.util.spec_from_file_location("canary", ROOT / "scripts" / "canary.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pins(lock: Path) -> list[str]:
    return [line.rstrip(" \\") for line in lock.read_text().splitlines() if line[:1].isalnum()]


def copy_inputs(folder: Path) -> Path:
    for name in ("Makefile", "pyproject.toml", "README.md", *(f"{lock}/{file}" for lock in NPM_LOCKS
                                                               for file in ("package.json", "package-lock.json"))):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, folder / name)
    shutil.copytree(ROOT / "requirements", folder / "requirements")
    return folder


def make_lock(folder: Path, uv: str, offline: bool) -> subprocess.CompletedProcess:
    # The npm lock is written with the kit's own npm: this checkout's venv, already installed.
    env = {**os.environ, "UV_OFFLINE": "1", "npm_config_offline": "true"} if offline else None
    return subprocess.run(["make", "--no-print-directory", "lock", f"UV={uv}", f"VENV={ROOT / '.venv'}"], cwd=folder,
                          capture_output=True, text=True, timeout=300, env=env)


def written_as_committed(folder: Path) -> bool:
    return all(pins(folder / "requirements" / name) == pins(ROOT / "requirements" / name) for name in LOCKS) and all(
        json.loads((folder / name / "package-lock.json").read_text())
        == json.loads((ROOT / name / "package-lock.json").read_text()) for name in NPM_LOCKS)


@pytest.mark.slow
@pytest.mark.timeout(360)  # online: five uv compiles and npm's lock, 109 s at a load of 16, near the default 120 s
def test_make_lock_rewrites_the_committed_lock_unchanged(tmp_path):
    uv = subprocess.run(["make", "-s", "--no-print-directory", "uv-path"], cwd=ROOT, capture_output=True, text=True,
                        timeout=300).stdout.strip().splitlines()[-1]
    # Online, each uv compile spends most of 30 s revalidating the index's pages (2 s of it CPU). Offline, uv resolves
    # from the pages it cached when it installed this environment, and npm from its cache, in seconds. The same
    # pyproject.toml resolved against a real, if older, copy of the index giving the committed pins proves what this
    # test is for; anything else (a page missing from the cache, a cached page older than a pin) is decided online.
    offline = copy_inputs(tmp_path / "offline")
    run = make_lock(offline, uv, offline=True)
    written = offline
    if run.returncode != 0 or not written_as_committed(offline):
        written = copy_inputs(tmp_path / "online")
        run = make_lock(written, uv, offline=False)
    assert run.returncode == 0, run.stderr[-2000:]
    for name in LOCKS:
        # Pins and markers, not hashes: an index may add a wheel to an old release, which adds a hash.
        assert pins(written / "requirements" / name) == pins(ROOT / "requirements" / name), (
            f"requirements/{name} is not what `make lock` writes from pyproject.toml: run `make lock`")
    for folder in NPM_LOCKS:
        npm_lock = json.loads((written / folder / "package-lock.json").read_text())
        assert npm_lock == json.loads((ROOT / folder / "package-lock.json").read_text()), (
            f"{folder}/package-lock.json is not what `make lock` writes from {folder}/package.json: run `make lock`")


def test_the_canary_names_what_moved_appeared_and_went():
    moved = load_canary().moved({"mcp": "2.3.0", "httpx": "0.28.1", "old": "1.0"},
                                {"mcp": "2.4.1", "httpx": "0.28.1", "new": "0.1"})
    assert moved == ["  mcp: 2.3.0 -> 2.4.1", "  new: new, 0.1", "  old: no longer needed (was 1.0)"]


def test_the_canary_names_newer_suite_releases_prereleases_included():
    newer = load_canary().newer_versions("0.2.0-alpha.12", ["0.1.16", "0.2.0-alpha.9", "0.2.0-alpha.12", "0.2.0-alpha.13",
                                                              "0.2.0", "not-a-version"])
    assert newer == ["0.2.0-alpha.13", "0.2.0"]  # npm's `latest` tag (0.1.16) is older than the pinned alpha


def test_the_canary_finds_failing_notebooks_in_pytest_output():
    output = ("FAILED notebooks/05-tools-and-schemas.ipynb::Cell 12 - nbval differs\n"
              "FAILED tests/test_lock.py::test_x - AssertionError\n"
              "ERROR solutions/08-multi-round-trip-requests.ipynb::Cell 3\n")
    assert sorted(set(load_canary().FAILED.findall(output))) == [
        "notebooks/05-tools-and-schemas.ipynb", "solutions/08-multi-round-trip-requests.ipynb", "tests/test_lock.py"]


def test_the_canary_copy_is_the_tree_with_its_symlinks(tmp_path):
    load_canary().copy_tree(tmp_path)
    link = tmp_path / "notebooks" / "exercises"
    assert link.is_symlink() and (link / "00-setup-and-first-look.ipynb").is_file()  # the lab's Exercises folder
    assert (tmp_path / "pyproject.toml").read_bytes() == (ROOT / "pyproject.toml").read_bytes()
