"""`make lab`'s JupyterLab: `jupyter lab` itself, without one import it never needs to start.

jupyter_server imports nbformat, and nbformat imports jsonschema, whose format checkers build an IRI
grammar with lark when `rfc3987_syntax` is installed (jupyter-events asks for it): about 1.3 s of CPU at
every start, most of a second of a learner's wait on two cores. Nothing JupyterLab validates at start or
while serving the lessons uses the IRI formats, so this start goes without that one checker (jsonschema
skips a checker whose module cannot be imported). Everything else is `jupyter lab` with the same arguments.
"""

import sys

sys.modules.setdefault("rfc3987_syntax", None)

from jupyterlab.labapp import main  # noqa: E402 - after the line above, or the grammar is built

if __name__ == "__main__":
    sys.exit(main())
