"""A lesson's link to a kit source file (`../labserver/front.py`) opens that file on the repository.

In JupyterLab such a link opens the file beside the notebook; the site has no copy of the kit's code, so the
file's page on the repository is the one place it can go. A relative link that names neither a page of the site
nor a file of the kit stays unresolved, and the build warns (the site is built with warnings as errors).
"""

import posixpath
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx


def repository_url(repository: str, branch: str, root: Path, docname: str, target: str) -> str | None:
    """The repository address of the kit file `target` names from page `docname`, or None if it names none."""
    path, hash_mark, anchor = target.partition("#")
    if not path or "://" in path or path.startswith("/"):
        return None
    in_kit = posixpath.normpath(posixpath.join(posixpath.dirname(docname), path))
    if in_kit.startswith("..") or not (root / in_kit).exists():
        return None
    kind = "tree" if (root / in_kit).is_dir() else "blob"
    return f"{repository.rstrip('/')}/{kind}/{branch}/{in_kit}{hash_mark}{anchor}"


def link_kit_files(app: Sphinx, doctree: nodes.document) -> None:
    root = Path(app.config.kit_root)
    docname = app.env.docname
    for xref in list(doctree.findall(addnodes.pending_xref)):
        if xref.get("reftype") != "myst" or xref.get("refdomain"):
            continue
        url = repository_url(app.config.kit_repository, app.config.kit_branch, root, docname, xref["reftarget"])
        if url:
            link = nodes.reference("", "", internal=False, refuri=url)
            link.extend(child.deepcopy() for child in xref.children)
            xref.replace_self(link)


def setup(app: Sphinx) -> dict:
    app.add_config_value("kit_repository", "", "env")
    app.add_config_value("kit_branch", "main", "env")
    app.add_config_value("kit_root", "", "env")
    app.connect("doctree-read", link_kit_files)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
