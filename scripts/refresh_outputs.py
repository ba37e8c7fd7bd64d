"""Re-execute notebooks in place so their stored outputs become the nbval expectations.

Usage: python scripts/refresh_outputs.py NOTEBOOK [NOTEBOOK ...]

Running it twice in a row gives byte-identical notebooks: execution metadata
(timings) is not recorded, stream pieces are joined, and widget model ids, which the kernel draws at random,
are renumbered in order of appearance.

The widget state is stored (a static page, such as `make site`'s, draws the composer and the transcript
view from it), pruned to the models the displayed views reach through their "IPY_MODEL_<id>" references:
widgets the kernel made and never showed, or closed, stay out.

An output whose HTML points the browser at a loopback address (lesson 21's live MCP App frames a sandbox server
the kernel ran on 127.0.0.1, under a one-off token) works only beside the kernel that made it: where it has a
text/plain form, only that is stored.
"""

import re
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

KERNEL = "python3"
CELL_TIMEOUT_S = 60
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
MODEL_REF = re.compile(r"^IPY_MODEL_(.+)$")
ROOT = Path(__file__).resolve().parents[1]
LOOPBACK_PORT = re.compile(r"(127\.0\.0\.1|localhost|\[::1\]):\d+")
LOOPBACK_URL = re.compile(r"\b(https?|wss?)://(127\.0\.0\.1|localhost|\[::1\])(?![\w.-])")
TEMP_FOLDER = re.compile(re.escape(tempfile.gettempdir()) + r"/[\w.-]+")
SEALED_STATE = re.compile(r"v1\.[A-Za-z0-9_-]{16,}")


def displayed_views(nb: nbformat.NotebookNode) -> list[dict]:
    return [view for cell in nb.cells for output in cell.get("outputs", [])
            if (view := output.get("data", {}).get(WIDGET_VIEW)) and "model_id" in view]


def references(value) -> list[str]:
    """The model ids a model's state points to, in a fixed order (dict keys sorted)."""
    if isinstance(value, str):
        ref = MODEL_REF.match(value)
        return [ref.group(1)] if ref else []
    if isinstance(value, dict):
        return [found for key in sorted(value) for found in references(value[key])]
    if isinstance(value, list):
        return [found for item in value for found in references(item)]
    return []


def machine_free(text: str) -> str:
    """The saved state is a snapshot of what the views showed, which may name a lab's port or temp folder, or hold a
    requestState the lab sealed with a key of that run (tests/sanitize.cfg masks the same form in outputs)."""
    text = LOOPBACK_PORT.sub(r"\1:<port>", text)
    text = SEALED_STATE.sub("<requestState>", text)
    text = TEMP_FOLDER.sub("<tmp>", text)
    return text.replace(str(ROOT), "<kit>").replace(str(Path.home()), "~")


def portable(value, new_ids: dict[str, str]):
    """The state with every model reference renamed, and its text freed of the machine it ran on."""
    if isinstance(value, str):
        ref = MODEL_REF.match(value)
        return f"IPY_MODEL_{new_ids[ref.group(1)]}" if ref and ref.group(1) in new_ids else machine_free(value)
    if isinstance(value, dict):
        return {key: portable(item, new_ids) for key, item in value.items()}
    if isinstance(value, list):
        return [portable(item, new_ids) for item in value]
    return value


def renumber_widgets(nb: nbformat.NotebookNode, stem: str) -> None:
    """Stable ids for the views (in order of appearance), then for every model they reach (breadth first).

    Ids the kernel drew at random would churn the file on every refresh; the state keeps only reachable models.
    """
    views = displayed_views(nb)
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    new_ids: dict[str, str] = {}
    queue = [view["model_id"] for view in views]
    while queue:
        old = queue.pop(0)
        if old in new_ids:
            continue
        new_ids[old] = f"{stem}-widget-{len(new_ids) + 1}"
        # Only ids the state holds: a text that merely starts with "IPY_MODEL_" is no reference.
        queue.extend(ref for ref in references(state.get(old, {}).get("state", {})) if ref in state)
    for view in views:
        view["model_id"] = new_ids[view["model_id"]]
    kept = {new_ids[old]: portable(model, new_ids) for old, model in state.items() if old in new_ids}
    if kept:
        nb.metadata["widgets"] = {WIDGET_STATE: {"state": kept, "version_major": 2, "version_minor": 0}}
    else:
        nb.metadata.pop("widgets", None)


def keep_text_of_live_html(output: nbformat.NotebookNode) -> None:
    """Leave out an HTML form that reaches for a loopback address where a text form stands beside it.

    Its port and token change on every run, and on another machine the page would reach for the reader's own.
    """
    data = output.get("data", {})
    html = data.get("text/html", "")
    if "text/plain" in data and LOOPBACK_URL.search("".join(html) if isinstance(html, list) else html):
        del data["text/html"]
        output.get("metadata", {}).pop("text/html", None)


def normalise(nb: nbformat.NotebookNode, stem: str) -> None:
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.metadata.pop("scrolled", None)
            for output in cell.outputs:
                keep_text_of_live_html(output)
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": KERNEL}
    nb.metadata["language_info"] = {"name": "python"}
    renumber_widgets(nb, stem)


def refresh(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    # A stale state would survive a run that draws no widget (nbclient only writes a state it has).
    nb.metadata.pop("widgets", None)
    client = NotebookClient(
        nb,
        kernel_name=KERNEL,
        timeout=CELL_TIMEOUT_S,
        record_timing=False,
        coalesce_streams=True,
        store_widget_state=True,
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
