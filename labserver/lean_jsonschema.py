"""jsonschema, imported without the IRI grammar it would otherwise build.

Importing jsonschema where `rfc3987_syntax` is installed (JupyterLab's jupyter-events asks for it) builds an
RFC 3987 grammar with lark: about 1.5 s of CPU, seconds on a loaded machine. That grammar serves only the "iri"
and "iri-reference" format checkers, and a Draft 2020-12 validator asserts no format unless it is given a
format checker, so a validator's verdicts are the same without it. The lab's recipient form and the exercise
checks import jsonschema this way.
"""

import sys


def jsonschema():
    """The jsonschema module; if this imports it, without its two IRI format checkers."""
    if "jsonschema" not in sys.modules:
        hidden = "rfc3987_syntax" not in sys.modules
        if hidden:
            sys.modules["rfc3987_syntax"] = None  # jsonschema skips a format checker whose module cannot be imported
        try:
            import jsonschema  # noqa: F401
        finally:
            if hidden and sys.modules.get("rfc3987_syntax", 0) is None:
                del sys.modules["rfc3987_syntax"]  # a later `import rfc3987_syntax` (a learner's own) still works
    import jsonschema

    return jsonschema
