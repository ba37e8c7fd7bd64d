"""Re-execute notebooks in place so their stored outputs become the nbval expectations.

Usage: python scripts/refresh_outputs.py NOTEBOOK [NOTEBOOK ...]

Running it twice in a row gives byte-identical notebooks: execution metadata
(timings) is not recorded, stream pieces are joined, widget state is not stored, and widget model ids,
which the kernel draws at random, are renumbered in order of appearance.
"""

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

KERNEL = "python3"
CELL_TIMEOUT_S = 60


def renumber_widget_ids(nb: nbformat.NotebookNode, stem: str) -> None:
    """Give widget views stable ids so a refresh does not churn the file."""
    seen: dict[str, str] = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get("application/vnd.jupyter.widget-view+json")
            if view and "model_id" in view:
                old = view["model_id"]
                view["model_id"] = seen.setdefault(old, f"{stem}-widget-{len(seen) + 1}")


def normalise(nb: nbformat.NotebookNode, stem: str) -> None:
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.metadata.pop("scrolled", None)
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": KERNEL}
    nb.metadata["language_info"] = {"name": "python"}
    renumber_widget_ids(nb, stem)


def refresh(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        kernel_name=KERNEL,
        timeout=CELL_TIMEOUT_S,
        record_timing=False,
        coalesce_streams=True,
        store_widget_state=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    normalise(nb, path.stem)
    text = nbformat.writes(nb) + "\n"
    if path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
        print(f"refreshed {path}")
    else:
        print(f"unchanged {path}")


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__)
        return 2
    for name in paths:
        refresh(Path(name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
