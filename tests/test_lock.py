"""The lock: every package the kit installs, exact and hashed, generated from pyproject.toml's ranges.

A course that is green today stays green next term only if nothing floats. `make lock` writes
requirements/*.txt from pyproject.toml; these tests fail when the two disagree, so an edit to the
dependency list cannot ship without the lock that goes with it.
"""

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
LOCKS = ROOT / "requirements"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._\-]*)==([^\s;\\]+)(?:\s*;\s*([^\\]+?))?\s*\\?$")
FROM_PYPROJECT = "mcp-on-the-wire (pyproject.toml)"


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def read_lock(name: str) -> dict[str, dict]:
    """name -> {version, marker, hashes, direct}: one entry per pinned package."""
    entries, current = {}, None
    for line in (LOCKS / name).read_text().splitlines():
        pin = PIN.match(line)
        if pin:
            current = {"version": pin.group(2), "marker": pin.group(3), "hashes": [], "via": []}
            entries[canonicalize_name(pin.group(1))] = current
        elif current is not None and line.strip().startswith("--hash=sha256:"):
            current["hashes"].append(line.strip().split(":", 1)[1].rstrip(" \\"))
        elif current is not None and line.startswith("    #"):
            current["via"].append(line.strip("# ").removeprefix("via").strip())
    return entries


def requirements(*extras: str) -> dict[str, Requirement]:
    project = pyproject()["project"]
    listed = project["dependencies"] + [r for extra in extras for r in project["optional-dependencies"][extra]]
    return {canonicalize_name(req.name): req for req in map(Requirement, listed)}


def test_every_locked_package_is_exact_and_hashed():
    for name in ("lab.txt", "test.txt", "hub.txt", "uv.txt"):
        lock = read_lock(name)
        assert lock, f"requirements/{name} pins nothing"
        unhashed = [pkg for pkg, entry in lock.items() if not entry["hashes"]]
        assert not unhashed, f"requirements/{name}: no --hash for {unhashed}"
        assert all(re.fullmatch(r"[0-9a-f]{64}", h) for entry in lock.values() for h in entry["hashes"])


def test_the_lab_lock_holds_exactly_what_pyproject_lists_and_nothing_it_does_not():
    lock = read_lock("lab.txt")
    direct = {pkg for pkg, entry in lock.items() if FROM_PYPROJECT in entry["via"]}
    assert direct == set(requirements()), "pyproject.toml changed since `make lock`: run `make lock`"


def test_the_test_lock_adds_the_test_site_and_hub_extras():
    # `make test` builds the site (tests/test_site.py) and runs a hub (tests/browser/test_hub_in_browser.py),
    # so the test lock holds both.
    lock = read_lock("test.txt")
    direct = {pkg for pkg, entry in lock.items() if FROM_PYPROJECT in entry["via"]}
    assert direct == set(requirements("test", "site", "hub")), "pyproject.toml changed since `make lock`: run `make lock`"


def test_every_locked_version_is_inside_pyprojects_range():
    lock = read_lock("test.txt")
    outside = {name: (str(req.specifier), lock[name]["version"]) for name, req in requirements("test", "site", "hub").items()
               if not req.specifier.contains(lock[name]["version"], prereleases=True)}
    assert not outside, f"locked outside the range pyproject.toml states (run `make lock`): {outside}"


def test_the_lab_lock_is_the_test_lock_without_the_test_tools():
    lab, test = read_lock("lab.txt"), read_lock("test.txt")
    assert set(lab) <= set(test)
    differ = {name: (entry["version"], test[name]["version"]) for name, entry in lab.items()
              if (entry["version"], entry["hashes"]) != (test[name]["version"], test[name]["hashes"])}
    assert not differ, f"a learner and CI would run different versions: {differ}"


def test_the_hub_lock_is_the_lab_lock_plus_the_hub_extra():
    lab, hub = read_lock("lab.txt"), read_lock("hub.txt")
    added = {canonicalize_name(r) for r in (Requirement(x).name for x in pyproject()["project"]["optional-dependencies"]["hub"])}
    assert added and set(hub) - set(lab) >= added
    direct = {pkg for pkg, entry in hub.items() if FROM_PYPROJECT in entry["via"]}
    assert direct == set(requirements("hub")), "pyproject.toml changed since `make lock`: run `make lock`"
    differ = {name: (entry["version"], hub[name]["version"]) for name, entry in lab.items()
              if (entry["version"], entry["hashes"]) != (hub[name]["version"], hub[name]["hashes"])}
    assert not differ, f"a class's hub and a learner's laptop would run different versions: {differ}"
    test = read_lock("test.txt")
    not_tested = {name: (entry["version"], test.get(name, {}).get("version")) for name, entry in hub.items()
                  if entry["version"] != test.get(name, {}).get("version")}
    assert not not_tested, f"a class's hub would run versions the hub test did not: {not_tested}"


def test_the_bootstrapped_installer_is_inside_its_range():
    (bootstrap,) = map(Requirement, pyproject()["dependency-groups"]["bootstrap"])
    assert bootstrap.specifier.contains(read_lock("uv.txt")["uv"]["version"])


def test_this_environment_is_the_locked_one():
    # The stored notebook outputs embed SDK and pydantic text: they hold for the locked versions only.
    wrong = {}
    for name, entry in read_lock("test.txt").items():
        if entry["marker"] and not Marker(entry["marker"]).evaluate():
            continue
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = None
        if installed != entry["version"]:
            wrong[name] = (entry["version"], installed)
    assert not wrong, f"locked vs installed (run `make test` to install the lock): {wrong}"
