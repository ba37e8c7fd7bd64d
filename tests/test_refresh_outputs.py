"""scripts/refresh_outputs.py keeps the widget state a static page needs, and nothing that changes between runs.

The kernel draws model ids at random and the state it hands back holds every widget ever made, shown or not;
what is stored must be the same bytes on every refresh and on every machine.
"""

import copy
import importlib.util
import json
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("refresh_outputs", ROOT / "scripts" / "refresh_outputs.py")
refresh_outputs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(refresh_outputs)

VIEW = refresh_outputs.WIDGET_VIEW
STATE = refresh_outputs.WIDGET_STATE


def model(name: str, **state) -> dict:
    return {"model_module": "@jupyter-widgets/controls", "model_module_version": "2.0.0", "model_name": name, "state": state}


def executed(ids: dict[str, str]) -> nbformat.NotebookNode:
    """A notebook as nbclient leaves it: two composers shown (one twice), a widget never shown, random ids."""
    nb = nbformat.v4.new_notebook()
    shown = [ids["box"], ids["other"], ids["box"]]
    nb.cells = [nbformat.v4.new_code_cell("composer", execution_count=n, outputs=[
        nbformat.v4.new_output("display_data", data={"text/plain": "FrameComposer", VIEW: {"version_major": 2, "version_minor": 0, "model_id": view}})])
        for n, view in enumerate(shown, 1)]
    for n, cell in enumerate(nb.cells):
        cell.id = f"cell-{n}"
    port_and_folder = f"POST http://127.0.0.1:41234/mcp · --notes {tempfile.gettempdir()}/tmpab_12cd/notes"
    nb.metadata["widgets"] = {STATE: {"version_major": 2, "version_minor": 0, "state": {
        ids["box"]: model("VBoxModel", children=[f"IPY_MODEL_{ids['label']}", f"IPY_MODEL_{ids['text']}"], layout=f"IPY_MODEL_{ids['layout']}"),
        ids["label"]: model("HTMLModel", value=port_and_folder, layout=f"IPY_MODEL_{ids['layout']}"),
        ids["text"]: model("TextareaModel", value="IPY_MODEL_ is text here, not a reference"),
        ids["layout"]: model("LayoutModel", width="100%"),
        ids["other"]: model("HTMLModel", value="the transcript"),
        ids["hidden"]: model("HTMLModel", value=f"never shown, in {ROOT}"),
    }}}
    return nb


def refreshed(ids: dict[str, str]) -> str:
    nb = executed(ids)
    refresh_outputs.normalise(nb, "07-lesson")
    return nbformat.writes(nb)


FIRST = {"box": "a1", "label": "b2", "text": "c3", "layout": "d4", "other": "e5", "hidden": "f6"}
SECOND = {"box": "9f", "label": "8e", "text": "7d", "layout": "6c", "other": "5b", "hidden": "4a"}


def test_two_runs_with_other_random_ids_store_the_same_bytes():
    assert refreshed(FIRST) == refreshed(SECOND)


def test_views_keep_their_numbering_and_every_model_they_reach_is_renumbered_and_kept():
    nb = nbformat.reads(refreshed(FIRST), as_version=4)
    views = [cell.outputs[0].data[VIEW]["model_id"] for cell in nb.cells]
    assert views == ["07-lesson-widget-1", "07-lesson-widget-2", "07-lesson-widget-1"]
    state = nb.metadata["widgets"][STATE]["state"]
    assert sorted(state) == [f"07-lesson-widget-{n}" for n in range(1, 6)], "the widget never shown is left out"
    box = state["07-lesson-widget-1"]["state"]
    assert all(ref.removeprefix("IPY_MODEL_") in state for ref in box["children"] + [box["layout"]])
    assert state["07-lesson-widget-2"]["state"]["value"] == "the transcript"


def test_the_state_names_no_port_no_temporary_folder_and_no_kit_path():
    text = refreshed(FIRST)
    assert "41234" not in text and tempfile.gettempdir() + "/" not in text and str(ROOT) not in text
    assert "POST http://127.0.0.1:<port>/mcp · --notes <tmp>/notes" in text
    assert "IPY_MODEL_ is text here, not a reference" in text


def test_a_notebook_without_views_stores_no_state():
    nb = executed(FIRST)
    for cell in nb.cells:
        cell.outputs = []
    refresh_outputs.normalise(nb, "07-lesson")
    assert "widgets" not in nb.metadata


def test_refreshing_an_already_refreshed_notebook_changes_nothing():
    nb = nbformat.reads(refreshed(FIRST), as_version=4)
    again = copy.deepcopy(nb)
    refresh_outputs.normalise(again, "07-lesson")
    assert json.dumps(again, sort_keys=True) == json.dumps(nb, sort_keys=True)


# As AppView writes it: the page reaches the kernel's port through its Jupyter server, or at the loopback elsewhere.
LIVE_APP_HTML = ('<div class="mcpwire-app" data-config="{&quot;proxyPath&quot;: &quot;proxy/127.0.0.1:46409&quot;, '
                 '&quot;loopback&quot;: &quot;http://127.0.0.1:46409&quot;, '
                 '&quot;token&quot;: &quot;u5-w3pqGfV6by9rBSiwoJA&quot;}"><script>fetch(server)</script></div>')


def outputs_after_refresh(*bundles: dict) -> list[dict]:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("shown", execution_count=1, outputs=[
        nbformat.v4.new_output("execute_result", data=bundle, execution_count=1) for bundle in bundles])]
    refresh_outputs.normalise(nb, "21-lesson")
    return [dict(output.data) for output in nbformat.reads(nbformat.writes(nb), as_version=4).cells[0].outputs]


def test_a_live_outputs_html_on_a_loopback_port_is_stored_as_its_text_only():
    (stored,) = outputs_after_refresh({"text/html": LIVE_APP_HTML, "text/plain": "AppView(show_hypnogram, ui://notes-lab/hypnogram.html)"})
    assert stored == {"text/plain": "AppView(show_hypnogram, ui://notes-lab/hypnogram.html)"}


def test_html_that_reaches_for_no_loopback_address_keeps_both_forms():
    table = {"text/html": "<table><tr><td>a server on localhost, 127.0.0.1.example.com</td></tr></table>", "text/plain": "a table"}
    elsewhere = {"text/html": '<a href="https://modelcontextprotocol.io/">spec</a>', "text/plain": "spec"}
    assert outputs_after_refresh(table, elsewhere) == [table, elsewhere]


def test_every_loopback_spelling_counts_and_html_without_a_text_form_is_kept():
    loopbacks = [{"text/html": f'<iframe src="{url}/sandbox.html"></iframe>', "text/plain": "a frame"}
                 for url in ("http://localhost:8888", "https://[::1]:9000", "ws://127.0.0.1")]
    assert outputs_after_refresh(*loopbacks) == [{"text/plain": "a frame"}] * 3
    only_html = {"text/html": LIVE_APP_HTML}
    assert outputs_after_refresh(only_html) == [only_html], "with no text form, dropping the HTML would leave nothing"
