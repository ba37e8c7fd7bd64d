"""Check any frame or reply against the 2026-07-28 schema, using the `mcp_types` models.

Returns a short list of plain problems naming the field path, e.g.
`params._meta: missing io.modelcontextprotocol/clientCapabilities`; empty when valid.

Where the schema and the SDK's models read a rule differently, this follows the schema:
an error response whose id could not be read has no `id` member (the schema's `id` is
optional and a string or an integer), so `"id": null`, which JSON-RPC 2.0 asks for, the
Python SDK's models accept and its HTTP layer sends, is reported (the TypeScript SDK's
models refuse it too).
"""

from typing import get_args

from .frames import PROTOCOL_VERSION

# pydantic and mcp_types are imported where they are used: building the schema's models takes about half
# a second of CPU, which every `import mcpwire` (every lesson's first cell) would otherwise pay.


def validate(message, *, method=None, version=PROTOCOL_VERSION):
    """Problems with a frame dict or Reply; `method` names the request a result answers (a Reply knows it)."""
    if hasattr(message, "message") and hasattr(message, "raw"):  # a Reply
        if message.problem:
            return [message.problem]
        method = method or getattr(message, "method", None)
        message = message.message
    if not isinstance(message, dict):
        return ["message: not a JSON object"]
    problems = []
    if message.get("jsonrpc") != "2.0":
        problems.append('jsonrpc: must be "2.0"')
    if "method" in message:
        return problems + _check_request_or_notification(message, version)
    if "result" in message and "error" in message:
        return problems + ["message: has both result and error"]
    if "error" in message:
        return problems + _check_error(message)
    if "result" in message:
        return problems + _check_id(message, optional=False) + _check_result(message["result"], method, version)
    return problems + ["message: neither a request, a notification, a result nor an error"]


NULL_ERROR_ID = "id: null does not match the schema (a string or an integer, or no id if it could not be read)"


def _check_id(message, *, optional):
    if "id" not in message:
        return [] if optional else ["id: missing"]
    value = message["id"]
    if value is None and optional:
        return [NULL_ERROR_ID]
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return [f"id: must be a string or an integer, not {value!r}"]
    return []


def _check_error(message):
    problems = _check_id(message, optional=True)
    error = message["error"]
    if not isinstance(error, dict):
        return problems + ["error: must be an object"]
    if isinstance(error.get("code"), bool) or not isinstance(error.get("code"), int):
        problems.append("error.code: must be an integer")
    if not isinstance(error.get("message"), str):
        problems.append("error.message: must be a string")
    return problems


def _check_request_or_notification(message, version):
    method, params = message["method"], message.get("params")
    if not isinstance(method, str):
        return ["method: must be a string"]
    if params is not None and not isinstance(params, dict):
        return ["params: must be an object"]
    from mcp_types import methods

    if "id" in message:
        problems = _check_id(message, optional=False)
        surface = methods.CLIENT_REQUESTS
        if (method, version) not in surface:
            return problems + [f"method: {method!r} is not a {version} client request"]
        return problems + _pydantic_problems(lambda: methods.validate_client_request(method, version, params),
                                             message)
    for surface, check in ((methods.CLIENT_NOTIFICATIONS, methods.validate_client_notification),
                           (methods.SERVER_NOTIFICATIONS, methods.parse_server_notification)):
        if (method, version) in surface:
            return _pydantic_problems(lambda: check(method, version, params), message)
    return [f"method: {method!r} is not a {version} notification"]


def _check_result(result, method, version):
    import pydantic
    from mcp_types import methods

    if not isinstance(result, dict):
        return ["result: must be an object"]
    if method is None:
        return [] if "resultType" in result or version != PROTOCOL_VERSION else ["result: missing resultType"]
    row = methods.SERVER_RESULTS.get((method, version))
    if row is None:
        return [f"method: {method!r} has no {version} result"]
    arms = get_args(row) or (row,)
    # Pick the arm by resultType so the problems are about the shape the server meant.
    wanted = "InputRequiredResult" if result.get("resultType") == "input_required" else None
    arm = next((a for a in arms if a.__name__ == wanted), None) or next(
        (a for a in arms if a.__name__ != "InputRequiredResult"), arms[0])
    return _pydantic_problems(lambda: pydantic.TypeAdapter(arm).validate_python(result, by_name=False),
                              result, prefix=("result",))


def _pydantic_problems(check, data, prefix=()):
    import pydantic

    try:
        check()
    except pydantic.ValidationError as error:
        return _plain(error.errors(), data, prefix)
    return []


def _plain(errors, data, prefix):
    """Turn pydantic errors into `path: problem` lines, dropping union arms that were clearly not meant."""
    located = []
    for error in errors:
        path, tags, node = [], [], data
        loc = error["loc"]
        for number, part in enumerate(loc):
            if isinstance(node, dict) and part in node or isinstance(node, list) and isinstance(part, int):
                node = node[part] if not isinstance(node, list) or part < len(node) else None
                path.append(str(part))
            elif isinstance(part, str) and (number < len(loc) - 1 or not isinstance(node, dict)):
                tags.append((tuple(path), part))  # a union arm (a model or type name), not a field
            else:
                path.append(str(part))
        located.append((error, path, tags))
    wrong_arms = {tag for error, _, tags in located if error["type"] == "literal_error" for tag in tags[-1:]}
    kept = [(e, p) for e, p, t in located if not (set(t) & wrong_arms)]
    if not kept:  # every arm rejected its discriminator: report that once
        kept = [next((e, p) for e, p, t in located if e["type"] == "literal_error")]
    by_path = {}
    for error, path in kept:
        if error["type"] == "missing":
            where, what = [*prefix, *path[:-1]], f"missing {path[-1]}"
        else:
            where, what = [*prefix, *path], error["msg"]
        whats = by_path.setdefault(".".join(where) or "message", [])
        if what not in whats:
            whats.append(what)
    return [f"{where}: {' or '.join(whats)}" for where, whats in by_path.items()]
