"""The checks judge tool arguments with jsonschema imported without its IRI grammar, and judge them the same."""

import json
import subprocess
import sys

SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1},
                                           "link": {"type": "string", "format": "iri"}},
          "required": ["query"], "additionalProperties": False}
ARGUMENTS = [{"query": "spindle"}, {"query": 5}, {"limit": 2}, {"query": "x", "limit": "2"}, {"query": "x", "limit": 0},
             {"query": "x", "extra": 1}, {"query": "x", "link": "not an iri at all"}, [], "spindle"]
WHOLE = """import json, sys, jsonschema
def best(arguments):
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(SCHEMA).iter_errors(arguments))
    if error is None:
        return None
    where = ".".join(map(str, error.absolute_path))
    return f"{where}: {error.message}" if where else error.message
print(json.dumps([best(arguments) for arguments in ARGUMENTS]))
"""
OURS = """import json, sys
from checks import input_schema
print(json.dumps([input_schema.best_problem(SCHEMA, arguments) for arguments in ARGUMENTS]))
print("lark" in sys.modules)
import rfc3987_syntax
"""


def run(code):
    given = f"SCHEMA = {SCHEMA!r}\nARGUMENTS = {ARGUMENTS!r}\n"
    return subprocess.run([sys.executable, "-c", given + code], capture_output=True, text=True, check=True).stdout


def test_the_checks_judge_arguments_as_jsonschema_imported_whole_does_without_its_iri_grammar():
    whole = json.loads(run(WHOLE))
    ours, grammar_built = run(OURS).splitlines()
    assert json.loads(ours) == whole
    assert whole[0] is None and all(problem for problem in whole[1:6])  # the cases do tell right from wrong
    assert grammar_built == "False"  # and `import rfc3987_syntax` after it still works (run() checks the exit)
