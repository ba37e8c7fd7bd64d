"""Is a frame a host posts to its View (or its sandbox proxy) shaped as MCP Apps 2026-01-26 says?

The shapes are those of the schema `@modelcontextprotocol/ext-apps` 2.0.4 ships (`schema.json`), written
out by hand for the messages a host sends; a list of plain problems comes back, empty when the frame is
fine. Where the spec's text and that schema disagree, this follows the schema (as the kit's host does):
`ui/resource-teardown` has params `{}` and nothing else; `tool-cancelled`'s `reason` is optional.
One place follows the spec's text instead: the 2.0.4 schema writes `hostContext.containerDimensions` as an
allOf of two anyOfs that each forbid the other's keys, so it refuses every non-empty value, the spec's own
example `{"width": 400, "maxHeight": 600}` included; here it is "either height or maxHeight, and either
width or maxWidth", numbers, as the spec says.
A forwarded `tools/call`, `tools/list`, `resources/read`, `resources/list` or `resources/templates/list` result is
MCP's own result, checked by `mcpwire.validate`.
"""

HOST_INFO_KEYS = {"name", "version", "title", "icons", "websiteUrl", "description"}
HOST_CAPABILITY_KEYS = {"experimental", "openLinks", "downloadFile", "serverTools", "serverResources", "logging",
                        "sandbox", "updateModelContext", "message", "sampling"}
CSP_KEYS = {"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"}
PERMISSION_KEYS = {"camera", "microphone", "geolocation", "clipboardWrite"}
THEMES, DISPLAY_MODES, PLATFORMS = {"light", "dark"}, {"inline", "fullscreen", "pip"}, {"web", "desktop", "mobile"}
MODALITY_KEYS = {"text", "image", "audio", "resource", "resourceLink", "structuredContent"}


def _only(where, value, allowed, required=()):
    if not isinstance(value, dict):
        return [f"{where}: must be an object"]
    problems = [f"{where}: missing {key}" for key in required if key not in value]
    return problems + [f"{where}: {key} is not allowed here" for key in value if key not in allowed]


def _strings(where, value):
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return [f"{where}: must be a list of strings"]
    return []


def _csp(where, value):
    problems = _only(where, value, CSP_KEYS)
    if not problems:
        for key, entries in value.items():
            problems += _strings(f"{where}.{key}", entries)
    return problems


def _initialize_result(result):
    problems = _only("result", result, {"protocolVersion", "hostInfo", "hostCapabilities", "hostContext"},
                     required=("protocolVersion", "hostInfo", "hostCapabilities", "hostContext"))
    if problems:
        return problems
    if not isinstance(result["protocolVersion"], str):
        problems.append("result.protocolVersion: must be a string")
    problems += _only("result.hostInfo", result["hostInfo"], HOST_INFO_KEYS, required=("name", "version"))
    capabilities = result["hostCapabilities"]
    problems += _only("result.hostCapabilities", capabilities, HOST_CAPABILITY_KEYS)
    for key in ("openLinks", "downloadFile", "logging"):
        if isinstance(capabilities, dict) and key in capabilities:
            problems += _only(f"result.hostCapabilities.{key}", capabilities[key], set())
    for key in ("message", "updateModelContext"):
        modalities = capabilities.get(key) if isinstance(capabilities, dict) else None
        if modalities is not None:
            problems += _only(f"result.hostCapabilities.{key}", modalities, MODALITY_KEYS)
            if isinstance(modalities, dict):
                for name, value in modalities.items():
                    problems += _only(f"result.hostCapabilities.{key}.{name}", value, set())
    sandbox = capabilities.get("sandbox") if isinstance(capabilities, dict) else None
    if sandbox is not None:
        problems += _only("result.hostCapabilities.sandbox", sandbox, {"permissions", "csp"})
        if isinstance(sandbox, dict) and "csp" in sandbox:
            problems += _csp("result.hostCapabilities.sandbox.csp", sandbox["csp"])
    context = result["hostContext"]
    if not isinstance(context, dict):
        return problems + ["result.hostContext: must be an object"]
    for key, allowed in (("theme", THEMES), ("displayMode", DISPLAY_MODES), ("platform", PLATFORMS)):
        if key in context and context[key] not in allowed:
            problems.append(f"result.hostContext.{key}: must be one of {sorted(allowed)}")
    if "containerDimensions" in context:
        problems += _dimensions(context["containerDimensions"])
    tool_info = context.get("toolInfo")
    if tool_info is not None:
        problems += _only("result.hostContext.toolInfo", tool_info, {"id", "tool"}, required=("tool",))
    return problems


def _dimensions(value):
    problems = _only("result.hostContext.containerDimensions", value, {"height", "maxHeight", "width", "maxWidth"})
    if problems:
        return problems
    for fixed, flexible in (("height", "maxHeight"), ("width", "maxWidth")):
        if fixed in value and flexible in value:
            problems.append(f"result.hostContext.containerDimensions: either {fixed} or {flexible}, not both")
    return problems + [f"result.hostContext.containerDimensions.{key}: must be a number"
                       for key, number in value.items() if isinstance(number, bool) or not isinstance(number, (int, float))]


def _params(frame, allowed, required=()):
    return _only("params", frame.get("params"), allowed, required)


NOTIFICATIONS = {
    "ui/notifications/tool-input": lambda frame: _params(frame, {"arguments"}),
    "ui/notifications/tool-input-partial": lambda frame: _params(frame, {"arguments"}),
    "ui/notifications/tool-result": lambda frame: _params(frame, set(frame.get("params") or {}), ("content",)),
    "ui/notifications/tool-cancelled": lambda frame: _params(frame, {"reason"}) + (
        [] if isinstance((frame.get("params") or {}).get("reason", ""), str) else ["params.reason: must be a string"]),
    "ui/notifications/host-context-changed": lambda frame: _params(frame, set(frame.get("params") or {})),
    "ui/notifications/sandbox-resource-ready": lambda frame: _sandbox_resource_ready(frame.get("params")),
}
REQUESTS = {"ui/resource-teardown": lambda frame: _params(frame, set()), "ping": lambda frame: []}


def _sandbox_resource_ready(params):
    problems = _only("params", params, {"html", "sandbox", "csp", "permissions"}, required=("html",))
    if problems:
        return problems
    if not isinstance(params["html"], str):
        problems.append("params.html: must be a string")
    if "sandbox" in params and not isinstance(params["sandbox"], str):
        problems.append("params.sandbox: must be a string")
    if "csp" in params:
        problems += _csp("params.csp", params["csp"])
    if "permissions" in params:
        problems += _only("params.permissions", params["permissions"], PERMISSION_KEYS)
    return problems


def _is_error_result(result):
    """ui/open-link's and ui/message's result: any object, whose isError, if there, is a boolean."""
    if not isinstance(result, dict):
        return ["result: must be an object"]
    return [] if isinstance(result.get("isError", False), bool) else ["result.isError: must be a boolean"]


def _display_mode_result(result):
    if not isinstance(result, dict) or result.get("mode") not in DISPLAY_MODES:
        return [f"result.mode: must be one of {sorted(DISPLAY_MODES)}"]
    return []


RESULTS = {"ui/initialize": _initialize_result, "ui/open-link": _is_error_result, "ui/message": _is_error_result,
           "ui/request-display-mode": _display_mode_result}


def check_host_frame(frame, *, answers=None):
    """Problems with one frame a host posts; `answers` names the View's request a response answers
    (`ui/initialize` is recognised by its result when not given)."""
    if not isinstance(frame, dict) or frame.get("jsonrpc") != "2.0":
        return ['frame: must be an object with jsonrpc "2.0"']
    if "method" in frame:
        checks = REQUESTS if "id" in frame else NOTIFICATIONS
        check = checks.get(frame["method"])
        if check is None:
            return [f"method: a host does not send {frame['method']!r} as a {'request' if 'id' in frame else 'notification'}"]
        return check(frame)
    if "error" in frame:
        error = frame["error"]
        problems = _only("error", error, {"code", "message", "data"}, required=("code", "message"))
        if not problems and (isinstance(error["code"], bool) or not isinstance(error["code"], int)):
            problems.append("error.code: must be an integer")
        return problems
    result = frame.get("result")
    if answers is None and isinstance(result, dict) and "hostInfo" in result:
        answers = "ui/initialize"
    if answers in RESULTS:
        return RESULTS[answers](result)
    return [] if isinstance(result, dict) else ["result: must be an object"]
