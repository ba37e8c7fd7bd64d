"""Lesson 23's server by hand, as files: the modules the `%%writefile my_server/...` cells of a notebook leave behind.

The tests of exercise 23's checks and the hardening tests run the solution notebook's server from these; the lesson
must write the same files, so the exercise finishes the server the lesson built.
"""

import re
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]


def written_modules(notebook, folder="my_server"):
    """{file name: text} for a notebook's `%%writefile FOLDER/...` cells: the last cell to write a file wins."""
    pattern = re.compile(rf"\A%%writefile {folder}/(\S+)\n")
    files = {}
    for cell in nbformat.read(ROOT / notebook, as_version=4).cells:
        found = pattern.match(cell.source)
        if cell.cell_type == "code" and found:
            files[found.group(1)] = cell.source[found.end():]
    return files


SOLUTION = {name: re.sub(r"\n *### (BEGIN|END) SOLUTION", "", text)
            for name, text in written_modules("solutions/23-a-server-by-hand.ipynb").items()}


def write_server(folder, modules=SOLUTION):
    """The server's modules in `folder` (created); returns the folder as a string, the command's argument."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in modules.items():
        (folder / name).write_text(text)
    return str(folder)
