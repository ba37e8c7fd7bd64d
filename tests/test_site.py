"""`make site`: the lessons and exercises as a static site, built offline from the outputs the notebooks store.

The site is built once for this module, with the same command `make site` runs. A reader notices a warning the
build printed (a broken cross-reference), a lesson with no page, a link that leads nowhere, a composer drawn
as an empty box, and a launch button that opens the wrong notebook; each has a test here.
"""

import json
import os
import re
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "site"))
from kit_links import repository_url  # noqa: E402  (site/ is the site's configuration, not a package)

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9]*.ipynb"))
EXERCISES = sorted(p.stem for p in (ROOT / "exercises").glob("[0-9]*.ipynb"))
REPO = "https://github.com/example-school/mcp-course"
HUB = "https://hub.example.edu"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"



class Page(HTMLParser):
    """What a link checker needs from one HTML file: the ids it holds, the links and sources it names,
    the widget state it embeds and the widget views it draws."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.attributes: list[str] = []
        self.scripts: dict[str, list[str]] = {}
        self._script_type: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.attributes.extend(value for value in attrs.values() if value)
        for name in ("id", "name"):
            if attrs.get(name) and (name == "id" or tag == "a"):
                self.ids.add(attrs[name])
        for name in ("href", "src"):
            if attrs.get(name) is not None:
                self.links.append(attrs[name])
        if tag == "script":
            self._script_type = attrs.get("type")

    def handle_data(self, data):
        if self._script_type in (WIDGET_STATE, WIDGET_VIEW):
            self.scripts.setdefault(self._script_type, []).append(data)

    def handle_endtag(self, tag):
        if tag == "script":
            self._script_type = None


def read_page(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def broken_links(site: Path) -> list[str]:
    """Every internal href/src in every page that names no file of the site, or an #anchor its target lacks."""
    # _static holds the theme's Jinja macro files (*.html with {{ pathto(...) }}), templates rather than pages.
    pages = {path: read_page(path) for path in site.rglob("*.html") if "_static" not in path.relative_to(site).parts}
    problems = []
    for path, page in sorted(pages.items()):
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:")):
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            where = f"{path.relative_to(site)}: {link}"
            if not target.is_file() or site.resolve() not in target.parents:
                problems.append(f"{where} (no such file)")
            elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in pages[site / target.relative_to(site.resolve())].ids:
                problems.append(f"{where} (no #{parts.fragment} there)")
    return problems


@pytest.mark.parametrize("docname, target, url", [
    ("notebooks/05-tools", "../labserver/stdio_front.py", f"{REPO}/blob/main/labserver/stdio_front.py"),
    ("notebooks/05-tools", "../mcpwire/frames.py#L10", f"{REPO}/blob/main/mcpwire/frames.py#L10"),
    ("notebooks/05-tools", "../mcpwire/", f"{REPO}/tree/main/mcpwire"),
    ("notebooks/exercises/05-tools", "../../checks/grade.py", f"{REPO}/blob/main/checks/grade.py"),
    ("notebooks/05-tools", "../labserver/no_such_file.py", None),
    ("notebooks/05-tools", "../../outside.py", None),
    ("notebooks/05-tools", "https://example.org/x.py", None),
])
def test_a_link_to_a_kit_file_opens_it_on_the_repository_and_nothing_else_does(docname, target, url):
    assert repository_url(REPO, "main", ROOT, docname, target) == url


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site") / "site"
    started = time.monotonic()
    run = subprocess.run([sys.executable, str(ROOT / "site" / "build.py"), "--out", str(out)], cwd=ROOT,
                         capture_output=True, text=True, timeout=600, env={**os.environ, "SITE_REPO": REPO, "SITE_HUB": HUB})
    print(f"site built in {time.monotonic() - started:.1f} s")
    return out, run


@pytest.mark.slow  # builds the site once for the module: about 20 s
def test_the_build_prints_no_warning(site):
    out, run = site
    assert run.returncode == 0, run.stdout + run.stderr
    warnings = [line for line in (run.stdout + run.stderr).splitlines() if "WARNING" in line or "ERROR" in line]
    assert not warnings, "\n".join(warnings)


@pytest.mark.slow  # builds the site once for the module: about 20 s
def test_every_lesson_and_exercise_has_a_page_and_no_solution_does(site):
    out, _ = site
    missing = [f"notebooks/{stem}.html" for stem in LESSONS if not (out / "notebooks" / f"{stem}.html").is_file()]
    missing += [f"notebooks/exercises/{stem}.html" for stem in EXERCISES if not (out / "notebooks" / "exercises" / f"{stem}.html").is_file()]
    assert not missing, missing
    assert len(LESSONS) >= 20 and len(EXERCISES) >= 20
    # Every solution marks its answers with ### BEGIN SOLUTION; the exercises made from them do not.
    leaked = [str(path.relative_to(out)) for path in out.rglob("*") if path.is_file() and path.suffix in (".html", ".ipynb", ".js")
              and "BEGIN SOLUTION" in path.read_text(encoding="utf-8", errors="replace")]
    assert not leaked, f"the solutions hand out the answers; they stay off the site: {leaked}"


@pytest.mark.slow  # builds the site once for the module: about 20 s
def test_the_index_maps_every_lesson_and_every_exercise(site):
    out, _ = site
    links = {urlsplit(link).path for link in read_page(out / "index.html").links}
    absent = [stem for stem in LESSONS if f"notebooks/{stem}.html" not in links]
    absent += [f"exercises/{stem}" for stem in EXERCISES if f"notebooks/exercises/{stem}.html" not in links]
    assert not absent, absent
    assert "solutions" in (out / "index.html").read_text(encoding="utf-8"), "the index says why the solutions are not here"


@pytest.mark.slow  # builds the site once for the module: about 20 s
def test_every_internal_link_resolves(site):
    out, _ = site
    problems = broken_links(out)
    assert not problems, "\n".join(problems)


@pytest.mark.slow  # builds the site once for the module: about 20 s
def test_the_link_checker_catches_a_missing_page_and_a_missing_anchor(site, tmp_path):
    out, _ = site
    page = tmp_path / "notebooks" / "broken.html"
    page.parent.mkdir(parents=True)
    (tmp_path / "notebooks" / "target.html").write_text('<h1 id="present">x</h1>')
    page.write_text('<a href="target.html#present">ok</a> <a href="gone.html">a</a> <a href="target.html#absent">b</a>'
                    ' <a href="#here">c</a> <img src="../_images/nothing.png"> <a href="https://example.org/x">ext</a>')
    assert broken_links(tmp_path) == ["notebooks/broken.html: gone.html (no such file)",
                                      "notebooks/broken.html: target.html#absent (no #absent there)",
                                      "notebooks/broken.html: #here (no #here there)",
                                      "notebooks/broken.html: ../_images/nothing.png (no such file)"]
    # And on a real page: a lesson's link to its exercise, pointed at a page that does not exist.
    lesson = out / "notebooks" / f"{LESSONS[5]}.html"
    original = lesson.read_text(encoding="utf-8")
    assert f'href="exercises/{LESSONS[5]}.html"' in original
    try:
        lesson.write_text(original.replace(f'href="exercises/{LESSONS[5]}.html"', 'href="exercises/no-such-exercise.html"', 1), encoding="utf-8")
        assert [p for p in broken_links(out) if "no-such-exercise" in p]
    finally:
        lesson.write_text(original, encoding="utf-8")


def notebook_views(stem: str) -> list[str]:
    nb = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    return [output["data"][WIDGET_VIEW]["model_id"] for cell in nb["cells"] for output in cell.get("outputs", [])
            if WIDGET_VIEW in output.get("data", {})]


@pytest.mark.slow  # builds the site once for the module: about 20 s
def test_pages_with_widgets_embed_the_state_of_every_view_they_draw(site):
    out, _ = site
    with_widgets = [stem for stem in LESSONS if notebook_views(stem)]
    assert len(with_widgets) >= 5, with_widgets
    for stem in with_widgets:
        page = read_page(out / "notebooks" / f"{stem}.html")
        (state_text,) = page.scripts.get(WIDGET_STATE, [""])
        state = json.loads(state_text)["state"]
        drawn = [json.loads(view)["model_id"] for view in page.scripts.get(WIDGET_VIEW, [])]
        assert drawn == notebook_views(stem), f"{stem}: the page draws other views than the notebook shows"
        assert set(drawn) <= set(state), f"{stem}: views without a saved state: {set(drawn) - set(state)}"
        referenced = set(re.findall(r'"IPY_MODEL_([^"]+)"', state_text))
        assert referenced <= set(state), f"{stem}: the state names models it does not hold: {referenced - set(state)}"


@pytest.mark.slow
def test_no_page_points_the_readers_browser_at_their_own_machine(site):
    # A live output (lesson 21's MCP App) frames a server the kernel ran on a loopback port; on a public page it
    # would reach for that port on the reader's machine. The page shows its text form instead (site/live_outputs.py).
    out, _ = site
    loopback = re.compile(r"https?://(127\.0\.0\.1|localhost|\[::1\])\b")
    reaching = {str(path.relative_to(out)): hits for path in out.rglob("*.html")
                if (hits := [value[:80] for value in read_page(path).attributes if loopback.search(value)])}
    assert not reaching, reaching
    apps = read_page(out / "notebooks" / "21-mcp-apps.html")
    assert not [value for value in apps.attributes if "mcpwire-app" in value.split()]


def launch_links(page: Page) -> dict[str, str]:
    return {name: link for link in page.links for name, prefix in (("binder", "https://mybinder.org/"), ("hub", HUB + "/"))
            if link.startswith(prefix)}


@pytest.mark.slow
@pytest.mark.parametrize("folder", ["notebooks", "notebooks/exercises"])
def test_each_page_launches_its_own_notebook_on_binder_and_the_hub(site, folder):
    out, _ = site
    stems = LESSONS if folder == "notebooks" else EXERCISES
    for stem in stems:
        links = launch_links(read_page(out / folder / f"{stem}.html"))
        assert set(links) == {"binder", "hub"}, f"{folder}/{stem}: {links}"
        binder = urlsplit(links["binder"])
        assert binder.path == "/v2/gh/example-school/mcp-course/main", links["binder"]
        assert parse_qs(binder.query)["urlpath"] == [f"lab/tree/{folder}/{stem}.ipynb"], links["binder"]
        hub = urlsplit(links["hub"])
        query = parse_qs(hub.query)
        assert hub.path == "/hub/user-redirect/git-pull", links["hub"]
        assert query["repo"] == [REPO] and query["branch"] == ["main"], links["hub"]
        # nbgitpuller clones into a folder named after the repository, and JupyterLab opens the path below it.
        assert query["urlpath"] == [f"lab/tree/mcp-course/{folder}/{stem}.ipynb"], links["hub"]
        assert (ROOT / folder / f"{stem}.ipynb").is_file()
