"""Every "Spec says" note links the spec section it cites, so a reader can check the claim.

Covers the lessons whose notes have been brought up to this rule; a lesson joins the list once its notes link.
"""

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ["notebooks/04-tools-and-schemas.ipynb", "notebooks/05-resources-prompts-completion.ipynb",
           "notebooks/08-the-legacy-era.ipynb", "notebooks/09-build-a-host.ipynb",
           "notebooks/10-security-on-the-wire.ipynb", "notebooks/11-costs-and-caching.ipynb"]
SPEC_LINK = re.compile(
    r"\]\((https://modelcontextprotocol\.io/specification/(2026-07-28|2025-11-25)(/[a-z0-9/-]+)?(#[a-z0-9-]+)?"
    r"|https://www\.jsonrpc\.org/specification#[a-z_]+)\)"
)


def spec_notes(path):
    cells = nbformat.read(ROOT / path, as_version=4).cells
    return [(index, cell.source) for index, cell in enumerate(cells)
            if cell.cell_type == "markdown" and "Spec says" in cell.source]


@pytest.mark.parametrize("path", LESSONS)
def test_every_spec_note_links_the_spec(path):
    notes = spec_notes(path)
    assert notes, f"{path} has no Spec says notes: the list above is out of date"
    unlinked = [index for index, source in notes if not SPEC_LINK.search(source)]
    assert not unlinked, f"{path}: Spec says notes without a spec link in cells {unlinked}"


@pytest.mark.parametrize("path", LESSONS)
def test_spec_links_name_a_revision_the_course_teaches(path):
    cells = nbformat.read(ROOT / path, as_version=4).cells
    links = re.findall(r"https://modelcontextprotocol\.io/specification/[^)\s]*", "\n".join(c.source for c in cells))
    wrong = [link for link in links if not re.match(r"https://modelcontextprotocol\.io/specification/(2026-07-28|2025-11-25)(/|$)", link)]
    assert links and not wrong, wrong
