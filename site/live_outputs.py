"""An output that only works beside the kernel that made it shows its plain-text form on the site.

Lesson 21's live MCP App (mcpwire.widgets.AppView) is HTML whose script frames a sandbox server the kernel ran
on a loopback port. On a static page that script would point the reader's browser at a port on the reader's
own machine, so the page shows the output's text/plain form (which View, which tool) instead.
"""

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

LIVE_MARKERS = ('class="mcpwire-app"',)


class PreferTextForLiveOutputs(SphinxPostTransform):
    # Before myst-nb picks one form of each output (its SelectMimeType runs at priority 4).
    default_priority = 3

    def run(self, **kwargs: Any) -> None:
        for bundle in list(self.document.findall(nodes.container)):
            if bundle.get("nb_element") != "mime_bundle":
                continue
            forms = {child.get("mime_type"): child for child in bundle.children}
            html = forms.get("text/html")
            if html is not None and "text/plain" in forms and any(marker in html.astext() for marker in LIVE_MARKERS):
                bundle.remove(html)


def setup(app: Sphinx) -> dict:
    app.add_post_transform(PreferTextForLiveOutputs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
