"""Builds the course site: python site/build.py [--out DIR]  (default _build/site)

The pages keep the layout JupyterLab shows (lessons in notebooks/, exercises in notebooks/exercises/), so the
notebooks' own relative links hold. Sphinx follows a symbolic link to where it points, so the lessons' link to
the exercises cannot serve as the source: the notebooks are copied into a source folder beside the output
(DIR-src), with the index page and the README it takes the course map from. myst-nb keeps the images it takes
out of the outputs in jupyter_execute/, and Sphinx its doctrees in DIR-doctrees, also beside DIR. Warnings are
errors.
"""

import argparse
import shutil
import sys
from pathlib import Path

# myst-nb imports nbformat, nbformat imports jsonschema, and jsonschema builds an RFC 3987 grammar with lark at import
# when `rfc3987_syntax` is installed (jupyter-events asks for it): about 1.5 s of CPU, for the "iri" format checkers
# alone, which validating a notebook never uses. The build goes without them.
sys.modules.setdefault("rfc3987_syntax", None)

from sphinx.cmd.build import build_main  # noqa: E402 - after the line above, or the grammar is built

SITE = Path(__file__).resolve().parent
KIT = SITE.parent
DEFAULT_OUT = KIT / "_build" / "site"


def assemble(source: Path) -> None:
    """The source folder: index.md, README.md (its course map), notebooks/ and notebooks/exercises/."""
    shutil.rmtree(source, ignore_errors=True)
    (source / "notebooks" / "exercises").mkdir(parents=True)
    shutil.copy2(SITE / "index.md", source / "index.md")
    shutil.copy2(KIT / "README.md", source / "README.md")
    for folder, into in (("notebooks", "notebooks"), ("exercises", "notebooks/exercises")):
        for notebook in sorted((KIT / folder).glob("[0-9]*.ipynb")):
            shutil.copy2(notebook, source / into / notebook.name)


def build(out: Path) -> int:
    source = out.with_name(out.name + "-src")
    assemble(source)
    shutil.rmtree(out, ignore_errors=True)
    # Sphinx's pickled doctrees would otherwise sit inside the site and be published with it.
    doctrees = out.with_name(out.name + "-doctrees")
    return build_main(["-b", "html", "-c", str(SITE), "-d", str(doctrees), "-W", "--keep-going", "-n", "-q", str(source), str(out)])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the site is written (default _build/site)")
    args = parser.parse_args(argv)
    status = build(args.out.resolve())
    if status == 0:
        print(f"site written to {args.out}/index.html")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
