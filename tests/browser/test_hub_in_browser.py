"""The kit on a real JupyterHub, in Chromium through the hub's own URL (bench/local_hub.py sets the hub up).

Two learners log in at the same time with the class's password, each through the README's nbgitpuller link: the
hub starts a server for each (the warm session around `jupyterhub-singleuser`, as binder/start starts the image),
nbgitpuller pulls the course (a local copy of this checkout's HEAD) into each one's home, and JupyterLab opens
lesson 00 as the Zero to JupyterHub values file says. Lesson 00's Run All gives its stored outputs and no error;
each learner's labs are their own (other ports, other notes folders, and a note one writes is not in the other's
lab); lesson 21's live View loads through the learner's own server behind the hub (jupyter-server-proxy), renders,
and a click on it is its tools/call, and the lesson's Run All leaves no error; no request of either learner's pages
goes anywhere but the hub's own origin. One hub for the module: starting it and two servers takes most of the time.
"""

import json
from pathlib import Path
from urllib.parse import urlsplit

import nbformat
import pytest
from test_app_in_browser import frame_of
from test_composer_in_browser import KERNEL_READY, KERNEL_TIMEOUT_MS, RUN_ALL, TIMEOUT_MS

from bench.lesson_run_bench import FLAGS
from bench.local_hub import LocalHub, course_folder, values

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
LEARNERS = ("ada", "grace")
FIRST_LESSON = values()["defaultUrl"].rsplit("/", 1)[1]
SPAWN_TIMEOUT_MS = 180_000  # two learners' servers start at once on two cores
# Every output of the notebook's code cells, as the page's model holds them (nbformat's JSON).
OUTPUTS = """() => window.jupyterapp.shell.currentWidget.content.widgets
  .filter(c => c.model.type === 'code').map(c => c.model.outputs.toJSON())"""
LESSON_21 = next((ROOT / "notebooks").glob("21-*.ipynb")).name
LIVE_VIEW = "live = AppView.for_tool("  # the source of the cell whose output is lesson 21's live View
# Runs every cell above the one after the cell `marker` is in (that cell included); returns that cell's index.
RUN_UP_TO = """async (marker) => {
  const notebook = window.jupyterapp.shell.currentWidget.content;
  const index = notebook.widgets.findIndex(c => c.model.sharedModel.getSource().includes(marker));
  notebook.activeCellIndex = index + 1;
  await window.jupyterapp.commands.execute('notebook:run-all-above');
  return index;
}"""
RUN_THE_REST = """async () => {
  await window.jupyterapp.commands.execute('notebook:run-all-below');
  const cells = window.jupyterapp.shell.currentWidget.content.widgets;
  return cells.filter(c => c.model.type === 'code').map(c => c.model.executionCount);
}"""
IN_KERNEL = """async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const future = kernel.requestExecute({code});
  let printed = "";
  future.onIOPub = (message) => {
    if (message.header.msg_type === "stream") printed += message.content.text;
    if (message.header.msg_type === "error") printed += message.content.ename + ": " + message.content.evalue;
  };
  await future.done;
  return printed;
}"""
# In a learner's kernel: a lab server over HTTP, started as the HTTP lessons start theirs, kept in `hub_probe`.
START_A_LAB = """
import json, os, time
from mcpwire.streamable_http import HttpWire
hub_probe = HttpWire.labserver()
deadline = time.monotonic() + 10
while not any("notes folder" in line for line in hub_probe.stderr_lines) and time.monotonic() < deadline:
    time.sleep(0.05)
notes = next(line for line in hub_probe.stderr_lines if "notes folder" in line).split("notes folder ")[1].split(" (")[0]
print(json.dumps({"home": os.path.expanduser("~"), "cwd": os.getcwd(), "url": hub_probe.url, "notes": notes}))
"""
CALL = """
reply = hub_probe.request("tools/call", {{"name": {tool!r}, "arguments": {arguments!r}}})
print(json.dumps(reply.result["structuredContent"]))
"""


def comparable(outputs):
    """A cell's outputs as a reader sees them: each stream's text (consecutive pieces joined), each result's plain
    text, each error's name."""
    shown = []
    for output in outputs:
        kind = output["output_type"]
        if kind == "stream":
            text = "".join(output["text"])
            if shown and shown[-1][0] == output["name"]:
                shown[-1] = (output["name"], shown[-1][1] + text)
            else:
                shown.append((output["name"], text))
        elif kind in ("execute_result", "display_data"):
            shown.append((kind, "".join(output["data"].get("text/plain", ""))))
        else:
            shown.append((kind, output.get("ename")))
    return shown


def errors(outputs_per_cell):
    return [(number, output.get("ename"), output.get("evalue")) for number, outputs in enumerate(outputs_per_cell, 1)
            for output in outputs if output["output_type"] == "error"]


@pytest.fixture(scope="module")
def hub(chromium, tmp_path_factory):
    with LocalHub(tmp_path_factory.mktemp("hub")) as running:
        yield running


@pytest.fixture(scope="module")
def learners(hub, chromium):
    """learner -> (page, every URL that learner's pages asked for): both logged in through the pull link at once."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=FLAGS)
        try:
            pages = {}
            for learner in LEARNERS:  # a context each: separate cookies, as two learners' browsers
                context = browser.new_context(viewport={"width": 1280, "height": 1000})
                requested = []
                context.on("request", lambda request, seen=requested: seen.append(request.url))
                context.on("page", lambda page, seen=requested: page.on("websocket", lambda ws: seen.append(ws.url)))
                page = context.new_page()
                page.set_default_timeout(TIMEOUT_MS)
                hub.log_in(page, learner, then=hub.pull_link())
                pages[learner] = (page, requested)
            for page, _ in pages.values():  # both servers start, and both pulls run, meanwhile
                page.wait_for_function(KERNEL_READY, timeout=SPAWN_TIMEOUT_MS, polling=200)
            yield pages
        finally:
            browser.close()


def test_the_pull_link_brings_each_learner_to_lesson_00_of_their_own_copy(hub, learners):
    for learner, (page, _) in learners.items():
        assert urlsplit(page.url).path == f"/user/{learner}{values()['defaultUrl']}"
        course = hub.homes / learner / course_folder()
        assert (course / "notebooks" / FIRST_LESSON).is_file() and (course / ".git").is_dir()


def test_run_all_of_lesson_00_gives_its_stored_outputs_and_no_error(learners):
    page, _ = learners[LEARNERS[0]]
    counts = page.evaluate(RUN_ALL)
    page.wait_for_function(KERNEL_READY, timeout=KERNEL_TIMEOUT_MS, polling=100)
    assert all(counts), f"not every cell ran: execution counts {counts}"
    shown = page.evaluate(OUTPUTS)
    assert errors(shown) == []
    stored = [cell.outputs for cell in nbformat.read(ROOT / "notebooks" / FIRST_LESSON, as_version=4).cells
              if cell.cell_type == "code"]
    assert [comparable(outputs) for outputs in shown] == [comparable(outputs) for outputs in stored]


def test_a_second_learner_at_the_same_time_has_labs_of_their_own(hub, learners):
    labs = {}
    for learner, (page, _) in learners.items():
        printed = page.evaluate(IN_KERNEL, START_A_LAB)
        labs[learner] = json.loads(printed)
    ada, grace = (labs[learner] for learner in LEARNERS)
    for learner, lab in labs.items():
        assert lab["home"] == str(hub.homes / learner) and lab["cwd"].startswith(lab["home"] + "/")
    assert urlsplit(ada["url"]).port != urlsplit(grace["url"]).port
    assert ada["notes"] != grace["notes"]

    ada_page, grace_page = (learners[learner][0] for learner in LEARNERS)
    created = json.loads(ada_page.evaluate(IN_KERNEL, CALL.format(tool="create_note", arguments={
        "title": "Only in Ada's lab", "body": "Written while Grace's lab runs too."})))
    assert (Path(ada["notes"]) / f"{created['id']}.md").is_file()
    assert not (Path(grace["notes"]) / f"{created['id']}.md").exists()
    search = {"query": "Ada's lab", "limit": 5}
    assert [hit["id"] for hit in json.loads(ada_page.evaluate(IN_KERNEL, CALL.format(tool="search_notes", arguments=search)))["hits"]][:1] == [created["id"]]
    assert created["id"] not in json.dumps(json.loads(grace_page.evaluate(IN_KERNEL, CALL.format(tool="search_notes", arguments=search))))
    for learner, (page, _) in learners.items():  # each lab stops with its learner's kernel, its notes with it
        assert page.evaluate(IN_KERNEL, "hub_probe.close(); print(hub_probe.closed)").strip() == "True"
        assert not Path(labs[learner]["notes"]).exists()


def test_lesson_21s_view_renders_through_the_hub_and_a_click_is_its_tools_call(hub, learners, artifacts):
    page, requested = learners[LEARNERS[0]]
    page.goto(f"{hub.url}/user/{LEARNERS[0]}/lab/tree/{course_folder()}/notebooks/{LESSON_21}?reset")
    page.wait_for_function(KERNEL_READY, timeout=KERNEL_TIMEOUT_MS, polling=100)
    # Run All in two parts, with the learner's click between them: the lesson's last cells close the View.
    index = page.evaluate(RUN_UP_TO, LIVE_VIEW)
    page.wait_for_function(KERNEL_READY, timeout=KERNEL_TIMEOUT_MS, polling=100)
    app = page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".mcpwire-app")
    proxy = frame_of(page, app).locator("iframe.mw-app-proxy")
    proxy.wait_for()
    assert proxy.get_attribute("src").startswith(f"{hub.url}/user/{LEARNERS[0]}/proxy/127.0.0.1:")
    view = frame_of(page, app).frame_locator("iframe.mw-app-proxy").frame_locator("iframe")
    view.locator("button.epoch").nth(19).wait_for()
    assert view.locator("button.epoch").count() == 20
    status = app.locator(".mw-app-status")
    status.filter(has_text="host→lab resources/read, tools/call").wait_for()

    view.locator("button.epoch").nth(5).click()
    view.locator("#detail", has_text="Epoch 6").wait_for()
    assert view.locator("#detail").inner_text().startswith("Epoch 6 of night P07")
    status.filter(has_text="tools/call, tools/call").wait_for()
    assert status.inner_text().endswith("host→lab resources/read, tools/call, tools/call")  # one call per click
    app.screenshot(path=str(artifacts / "hub-lesson-21-after-click.png"))
    proxied = {urlsplit(url).path.split("/")[5] for url in requested
               if urlsplit(url).path.startswith(f"/user/{LEARNERS[0]}/proxy/127.0.0.1:")}
    assert {"sandbox.html", "context", "relay", "outbox"} <= proxied, "the View's traffic goes through the hub"

    counts = page.evaluate(RUN_THE_REST)
    page.wait_for_function(KERNEL_READY, timeout=KERNEL_TIMEOUT_MS, polling=100)
    assert all(counts), f"not every cell ran: execution counts {counts}"
    assert errors(page.evaluate(OUTPUTS)) == []


def test_no_request_of_either_page_leaves_the_hubs_origin(hub, learners):
    origin = urlsplit(hub.url)
    for learner, (_, requested) in learners.items():
        assert len(requested) > 50, f"{learner}'s pages asked for only {len(requested)} URLs: were they recorded?"
        elsewhere = [url for url in requested if (urlsplit(url).hostname, urlsplit(url).port) != (origin.hostname, origin.port)
                     and urlsplit(url).scheme not in ("data", "blob")]
        assert elsewhere == [], f"{learner}'s pages reached beyond {hub.url}"
        assert {urlsplit(url).scheme for url in requested} <= {"http", "ws", "data", "blob"}
        assert any(url.startswith(f"ws://127.0.0.1:{origin.port}/user/{learner}/api/kernels/") for url in requested)
