"""Every "Spec says" note links the spec section it cites, so a reader can check the claim.

Covers every lesson and solution: a notebook added later is held to the rule without being listed.
"""

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(str(p.relative_to(ROOT)) for folder in ("notebooks", "solutions") for p in (ROOT / folder).glob("*.ipynb"))
# An anchor is the heading slugged by the spec site, which keeps a heading's "&" as %26.
SPEC_LINK = re.compile(
    r"\]\((https://modelcontextprotocol\.io/specification/(2026-07-28|2025-11-25)(/[a-z0-9/-]+)?(#(?:[a-z0-9-]|%26)+)?"
    r"|https://www\.jsonrpc\.org/specification#[a-z_]+)\)"
)


def markdown(path):
    return [(index, cell.source) for index, cell in enumerate(nbformat.read(ROOT / path, as_version=4).cells)
            if cell.cell_type == "markdown"]


def test_the_lessons_have_spec_notes_to_check():
    notes = [path for path in NOTEBOOKS for _, source in markdown(path) if re.search("spec says", source, re.I)]
    assert len(set(notes)) >= 12, "most lessons carry Spec says notes; the glob above found too few"


@pytest.mark.parametrize("path", NOTEBOOKS)
def test_every_spec_note_links_the_spec(path):
    unlinked = [index for index, source in markdown(path)
                if re.search("spec says", source, re.I) and not SPEC_LINK.search(source)]
    assert not unlinked, f"{path}: Spec says notes without a spec link in cells {unlinked}"


@pytest.mark.parametrize("path", NOTEBOOKS)
def test_spec_links_name_a_revision_the_course_teaches(path):
    links = re.findall(r"https://modelcontextprotocol\.io/specification/[^)\s]*", "\n".join(s for _, s in markdown(path)))
    wrong = [link for link in links
             if not re.match(r"https://modelcontextprotocol\.io/specification/(2026-07-28|2025-11-25)(/|$)", link)]
    assert not wrong, wrong
