"""A pytest plugin the test run loads first (`-p bench.lean_test_imports` in pyproject's addopts): jsonschema goes
without its IRI grammar in the run's own processes.

nbval imports nbformat, nbformat imports jsonschema, and jsonschema builds an RFC 3987 grammar with lark at import
when `rfc3987_syntax` is installed (jupyter-events asks for it): about 1.6 s of CPU in the controller and in each
xdist worker, before the first test is collected. The grammar serves only the "iri" format checkers, which nothing a
test runs in these processes uses; kernels, labs and other subprocesses a test starts import as they always do
(tests/checks/test_input_schema.py compares the two in processes of their own). The plugin is loaded before the
entry-point plugins (nbval among them), so it is in place before the first import of jsonschema.
"""

import sys

sys.modules.setdefault("rfc3987_syntax", None)  # jsonschema skips a format checker whose module cannot be imported
