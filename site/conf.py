"""`make site`: the lessons and exercises as a static site, with the outputs stored in the notebooks.

Sphinx + myst-nb, the engine Jupyter Book 1 was built on (Jupyter Book 2 wraps mystmd, which runs on Node).
site/build.py assembles the source folder (the lessons in notebooks/, the exercises in notebooks/exercises/,
the layout JupyterLab shows) and runs Sphinx with this folder as its configuration. Nothing is executed and
nothing is fetched at build time.

SITE_REPO (the repository's web address) and SITE_HUB (a JupyterHub's address) set where the launch links
and the links to the kit's source files go; the defaults are the README's placeholders. SITE_BRANCH (main)
is the branch they open.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

REPOSITORY = os.environ.get("SITE_REPO") or "https://github.com/OWNER/mcp-on-the-wire"
HUB = os.environ.get("SITE_HUB") or "https://HUB"
BRANCH = os.environ.get("SITE_BRANCH") or "main"

project = "MCP on the Wire"
author = "MCP on the Wire"
html_title = "MCP on the Wire"

extensions = ["myst_nb", "kit_links", "live_outputs"]

root_doc = "index"
# Only the lessons and the exercises become pages; the solutions stay out (they would hand out the answers).
include_patterns = ["index.md", "notebooks/[0-9]*.ipynb", "notebooks/exercises/[0-9]*.ipynb"]
exclude_patterns = ["_build", "**/.ipynb_checkpoints"]

# The stored outputs are the nbval expectations; the site shows exactly those.
nb_execution_mode = "off"
# Headings get ids a link can name (#what-to-remember).
myst_heading_anchors = 3

html_theme = "sphinx_book_theme"
html_theme_options = {
    "repository_url": REPOSITORY,
    "repository_branch": BRANCH,
    "path_to_docs": "",
    "use_repository_button": True,
    "use_download_button": True,
    "launch_buttons": {
        "binderhub_url": "https://mybinder.org",
        "jupyterhub_url": HUB,
        "notebook_interface": "jupyterlab",
    },
}
# A page says what it is and when it was built by its source alone: no date, no build-dependent footer.
html_last_updated_fmt = None
html_show_sphinx = False

kit_repository = REPOSITORY
kit_branch = BRANCH
kit_root = str(Path(__file__).resolve().parents[1])
