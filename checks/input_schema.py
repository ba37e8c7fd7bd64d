"""A tool's inputSchema as a validator: jsonschema's Draft 2020-12, imported without its IRI grammar.

Importing jsonschema where `rfc3987_syntax` is installed (JupyterLab's jupyter-events asks for it) builds an
RFC 3987 grammar with lark: about 2 s of CPU in every kernel whose check judges arguments. That grammar only
serves the "iri" and "iri-reference" format checkers, and a Draft 2020-12 validator asserts no format unless
it is given a format checker, so the checks' verdicts are the same without it (labserver.lean_jsonschema).
"""

from labserver.lean_jsonschema import jsonschema


def validator(schema):
    """A Draft 2020-12 validator for schema (formats are annotations, as the draft has them by default)."""
    return jsonschema().Draft202012Validator(schema)


def best_problem(schema, arguments):
    """The first way `arguments` break the schema, in a few words (`path: message`), or None."""
    errors = validator(schema).iter_errors(arguments)
    error = jsonschema().exceptions.best_match(errors)
    if error is None:
        return None
    where = ".".join(map(str, error.absolute_path))
    return f"{where}: {error.message}" if where else error.message
