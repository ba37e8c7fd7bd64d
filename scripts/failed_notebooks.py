"""After a failed `make test`: run each failing notebook again and keep it, outputs and errors included.

Usage: python scripts/failed_notebooks.py ARTIFACTS_DIR

Reads the JUnit reports `make test` writes into ARTIFACTS_DIR, finds the notebooks with a failing
cell, executes each (errors allowed, 120 s per cell) and writes it to ARTIFACTS_DIR/failed-notebooks/,
so an instructor can open what the notebook really printed beside what was stored.
"""

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def failing_notebooks(artifacts: Path) -> list[Path]:
    found = set()
    for report in artifacts.glob("junit-*.xml"):
        for case in ET.parse(report).iter("testcase"):
            if case.find("failure") is None and case.find("error") is None:
                continue
            name = (case.get("file") or case.get("classname") or "").split("::")[0]
            if name.endswith(".ipynb"):
                found.add(name)
    return [ROOT / name for name in sorted(found) if (ROOT / name).exists()]


def main(argv: list[str]) -> int:
    artifacts = Path(argv[0] if argv else "artifacts")
    out = artifacts / "failed-notebooks"
    for path in failing_notebooks(artifacts):
        nb = nbformat.read(path, as_version=4)
        client = NotebookClient(nb, timeout=120, allow_errors=True, resources={"metadata": {"path": str(path.parent)}})
        try:
            client.execute()
        except Exception as error:  # a dead kernel or a timeout: keep what ran, and say why it stopped
            print(f"{path.relative_to(ROOT)}: stopped early ({type(error).__name__})")
        target = out / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        print(f"kept {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
