"""The host side of an MCP App (io.modelcontextprotocol/ui, View<->host protocol 2026-01-26), without a browser.

A View is a web page in a sandboxed iframe that talks JSON-RPC 2.0 to its host over `postMessage`.
`AppHost` is everything the host decides, as plain Python: give it each message the View posts
(`receive`), and it posts its answers through `post` (a list, or the widget's bridge). It talks to the
MCP server through a `Wire`, with the host's own `_meta` envelope on every request it makes there.

What it enforces (MCP Apps 2026-01-26 unless said otherwise):
- Nothing goes to the View before `ui/notifications/initialized` ("Sandbox proxy" rule 6); a request
  from the View before it, other than `ui/initialize` and `ping`, is refused (the kit's rule, code -32000).
- `tools/call` from the View reaches only tools whose `_meta.ui.visibility` includes "app" (default
  ["model", "app"]); a tool that is not read-only needs the user's consent (the `consent` callback).
  `tools/list` forwarded to the server comes back with those tools only.
- What a notebook can do with the View's other requests, and declares in `hostCapabilities`: `ui/open-link`
  (an http or https URL, kept in `links` for the learner to click: the host never navigates by itself),
  `ui/message` (text, kept in `messages`: what would join the conversation), `ui/update-model-context` (text
  and structuredContent, kept in `model_context`, each update replacing the last). `ui/request-display-mode`
  gets "inline", the one mode an output has; `ui/notifications/request-teardown` starts the teardown.
  `ui/download-file` and `sampling/createMessage` (the 2.0.4 draft's) and `prompts/list` are not declared and
  get -32601: the notebook has no model to sample and saves no file for a View.
- A malformed request is answered with JSON-RPC's -32600, with no `id` when its id could not be read
  (MCP's error response, whose `id` is optional, not JSON-RPC's `"id": null`: Apps runs on MCP's JSON-RPC
  base). A response (a message with `result` or `error`) is never answered, even a malformed or unmatched
  one, so two peers cannot answer each other's errors forever.
- Every message both ways is in `transcript`, interleaved with the host<->server exchanges it caused;
  every View-initiated request, and the CSP, is in `log`.

The SDK (mcp 2.3.0) has no host side at all: `mcp.server.apps` serves apps, nothing renders them.
Where the spec's text and the 2.0.4 schema disagree, `mcpwire.apps.frames` says which this follows.
"""

from urllib.parse import urlsplit

from . import csp
from ..frames import CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, dumps
from ..transcript import Exchange, Transcript

EXTENSION_ID = "io.modelcontextprotocol/ui"
APP_MIME_TYPE = "text/html;profile=mcp-app"
UI_PROTOCOL_VERSION = "2026-01-26"
HOST_INFO = {"name": "mcpwire-notebook-host", "version": "0.1.0"}
# The inner iframe: scripts and forms, and no allow-same-origin, so the View cannot reach into its proxy.
VIEW_SANDBOX = "allow-scripts allow-forms"
DEFAULT_CONTEXT = {"theme": "light", "displayMode": "inline", "availableDisplayModes": ["inline"],
                   "containerDimensions": {"width": 640, "maxHeight": 480}, "platform": "web"}

INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32600, -32601, -32602
LINK_SCHEMES = ("http", "https")  # a javascript: or file: URL is never offered as a link
# The content the host takes in ui/message and ui/update-model-context: text only, as hostCapabilities says.
MESSAGE_MODALITIES = ("text",)
MODEL_CONTEXT_MODALITIES = ("text", "structuredContent")
HOST_REFUSED = -32000  # JSON-RPC's range for implementation-defined errors: the spec names no code for these


def apps_capabilities():
    """What a host that renders apps declares on every request (`_meta`, MCP 2026-07-28 extensions)."""
    return {"extensions": {EXTENSION_ID: {"mimeTypes": [APP_MIME_TYPE]}}}


def host_tools(wire):
    """The server's tools/list as a host that renders apps asks for it: with its envelope, the extension declared
    (a server SHOULD list UI tools only to a client that declares it)."""
    meta = {CLIENT_INFO_KEY: dict(HOST_INFO), CLIENT_CAPABILITIES_KEY: apps_capabilities()}
    return wire.request("tools/list", meta=meta).result["tools"]


def visibility(tool):
    """A tool's `_meta.ui.visibility`, or the spec's default ["model", "app"] when it has none.

    Only a missing list takes the default: an empty one names no audience, so neither the model nor an app
    gets the tool.
    """
    ui = (tool.get("_meta") or {}).get("ui") or {}
    stated = ui.get("visibility")
    return ["model", "app"] if stated is None else list(stated)


def model_tools(tools):
    """The tools a host may show the model: those whose visibility includes "model"."""
    return [tool for tool in tools if "model" in visibility(tool)]


def is_read_only(tool):
    return bool((tool.get("annotations") or {}).get("readOnlyHint"))


def malformed(message):
    """Why a message from the View is not a JSON-RPC 2.0 message the host can act on, or None."""
    if not isinstance(message, dict):
        return "not a JSON object"
    if message.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if "id" in message and (isinstance(message["id"], bool) or not isinstance(message["id"], (str, int))):
        return "id must be a string or an integer"
    if "method" in message:
        if not isinstance(message["method"], str):
            return "method must be a string"
        if "result" in message or "error" in message:
            return "a request or notification carries no result or error"
        if "params" in message and not isinstance(message["params"], dict):
            return "params must be an object"
        return None
    if "id" not in message or ("result" in message) == ("error" in message):
        return "neither a request, a notification nor a response"
    error = message.get("error", {"code": 0, "message": ""})
    if (not isinstance(error, dict) or isinstance(error.get("code"), bool) or not isinstance(error.get("code"), int)
            or not isinstance(error.get("message"), str)):
        return "an error needs an integer code and a string message"
    return None


def _cursor(params):
    return {"cursor": params["cursor"]} if isinstance(params.get("cursor"), str) else {}


def _content_problem(content, *, required):
    """(code, message) when `content` is not a list of text blocks, the only blocks this host takes, else None."""
    if content is None and not required:
        return None
    if not isinstance(content, list) or not all(isinstance(block, dict) and isinstance(block.get("type"), str)
                                                for block in content):
        return INVALID_PARAMS, "Invalid params: content must be a list of content blocks"
    for block in content:
        if block["type"] != "text":
            return HOST_REFUSED, f"{block['type']} content is not taken here: text only, as hostCapabilities says"
        if not isinstance(block.get("text"), str):
            return INVALID_PARAMS, "Invalid params: a text block needs its text"
    return None


class AppHost:
    """One View of one tool call: its lifecycle, what it may call, and every frame both ways.

    `tools` is the server's tools/list (the host needs every tool's visibility); `consent(tool, arguments)`
    returns True to let the View call a tool that is not read-only (default: never).
    """

    def __init__(self, wire, tool_name, arguments=None, *, tools, consent=None, post=None, host_context=None):
        self.wire = wire
        self.tools = {tool["name"]: tool for tool in tools}
        self.tool = self.tools[tool_name]
        self.arguments = dict(arguments or {})
        self.consent = consent or (lambda tool, arguments: False)
        self.sent = []
        self.post = post or self.sent.append  # where frames to the View go: a list here, the widget's outbox in a notebook
        self.host_context = {**DEFAULT_CONTEXT, **(host_context or {})}
        self.transcript = Transcript()
        self.log = []
        self.state = "loading"  # -> initializing -> ready -> closing -> closed
        self.size = None
        self.resource = None
        self.policy = None
        self.result = None
        self.html = None
        self.links = []           # ui/open-link URLs, offered to the learner
        self.messages = []        # ui/message contents, what would join the conversation
        self.model_context = None  # the last ui/update-model-context params
        # The spec's order once the View is initialized: tool-input (MUST, exactly once), then tool-result.
        self._queued = [self._notification("ui/notifications/tool-input", {"arguments": self.arguments})]
        self._next_id = 1
        self._pending = {}  # id of a request the host sent -> its method

    # --- the host and the MCP server -------------------------------------------------------------

    @property
    def resource_uri(self):
        return ((self.tool.get("_meta") or {}).get("ui") or {}).get("resourceUri")

    def server_request(self, method, params):
        """A request to the MCP server with the host's own envelope (never the View's `_meta`)."""
        meta = {CLIENT_INFO_KEY: dict(HOST_INFO), CLIENT_CAPABILITIES_KEY: apps_capabilities()}
        reply = self.wire.request(method, params, meta=meta)
        self.transcript.append(self.wire.transcript[-1])
        return reply

    def load(self):
        """Read the View (resources/read, as the spec requires) and build its CSP; returns the HTML."""
        reply = self.server_request("resources/read", {"uri": self.resource_uri})
        if reply.error:
            raise ValueError(f"resources/read {self.resource_uri} failed: {reply.error}")
        (content,) = [item for item in reply.result["contents"] if item.get("uri") == self.resource_uri]
        if content.get("mimeType") != APP_MIME_TYPE:
            raise ValueError(f"{self.resource_uri} is {content.get('mimeType')!r}, not {APP_MIME_TYPE}")
        self.resource, self.html = content, content["text"]
        declared = ((content.get("_meta") or {}).get("ui") or {}).get("csp")
        self.approved, refused = csp.approved_domains(declared)
        self.policy = csp.build_policy(declared)
        self.log += [f"CSP refused {reason}" for reason in refused] + [f"CSP {self.policy}"]
        return content["text"]

    def call_tool(self):
        """Run the tool call on the server; the View gets tool-input and tool-result once it is initialized."""
        reply = self.server_request("tools/call", {"name": self.tool["name"], "arguments": self.arguments})
        if reply.error:
            self.cancel(f"the server answered {reply.error.get('code')}: {reply.error.get('message')}")
        else:
            self.result = reply.result
            self._to_view(self._notification("ui/notifications/tool-result", reply.result))
        return reply

    def cancel(self, reason):
        self._to_view(self._notification("ui/notifications/tool-cancelled", {"reason": reason}))

    def teardown(self):
        """Ask the View to tear down (ui/resource-teardown, params {} as the 2.0.4 schema requires).

        A View that has not said initialized is closed without a word: nothing may go to it before that.
        """
        if self.state in ("closing", "closed"):
            return
        if self.state != "ready":
            self.state = "closed"
            self.log.append("closed before ui/notifications/initialized: no ui/resource-teardown sent")
            return
        self.state = "closing"
        self._send(self._request("ui/resource-teardown", {}))

    # --- the sandbox proxy -----------------------------------------------------------------------

    def sandbox_resource_ready(self, html):
        """What the host posts to its sandbox proxy once the proxy said it is ready."""
        params = {"html": html, "sandbox": VIEW_SANDBOX, "csp": self.approved}
        return self._notification("ui/notifications/sandbox-resource-ready", params)

    # --- messages from the View ------------------------------------------------------------------

    def receive(self, message):
        """Handle one message the View posted; answers go out through `post`."""
        answered = message.get("id") if isinstance(message, dict) and "method" not in message else None
        self._record(message, up=True, answering=self._pending.get(answered) if isinstance(answered, (str, int)) else None)
        problem = malformed(message)
        if problem and isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message):
            self.log.append(f"ignored a malformed response: {problem}")
            return
        if problem:
            identifier = message.get("id") if isinstance(message, dict) else None
            if isinstance(identifier, bool) or not isinstance(identifier, (str, int)):
                identifier = None
            self.log.append(f"refused a malformed message: {problem}")
            self._send(self._error(identifier, INVALID_REQUEST, f"Invalid Request: {problem}"), answering="(malformed)")
            return
        if "method" not in message:
            if self._pending.pop(message["id"], None) == "ui/resource-teardown":
                self.state = "closed"
            return
        method, params = message["method"], message.get("params") or {}
        if "id" not in message:
            self._notified(method, params)
            return
        self.log.append(f"View asked {method} {dumps(params)}")
        self._send(self._answer(message["id"], method, params), answering=method)

    def _notified(self, method, params):
        if method == "ui/notifications/sandbox-proxy-ready":
            self._send(self.sandbox_resource_ready(self.html))
        elif method == "ui/notifications/initialized" and self.state == "initializing":
            self.state = "ready"
            queued, self._queued = self._queued, []
            for frame in queued:
                self._send(frame)
        elif method == "ui/notifications/size-changed":
            self.size = {key: params[key] for key in ("width", "height") if isinstance(params.get(key), (int, float))}
        elif method == "notifications/message":
            self.log.append(f"View logged {dumps(params)}")
        elif method == "ui/notifications/request-teardown":
            self.log.append("teardown: the View asked for it")
            self.teardown()

    def _answer(self, identifier, method, params):
        if method == "ping":
            return self._response(identifier, {})
        if method == "ui/initialize":
            return self._initialize(identifier, params)
        if self.state != "ready":
            return self._error(identifier, HOST_REFUSED,
                               f"{method} before ui/notifications/initialized: the View is not initialized")
        handler = {"tools/call": self._tool_call, "tools/list": self._tools_list,
                   "resources/read": lambda identifier, params: self._forward(
                       identifier, "resources/read", {"uri": params.get("uri")}),
                   "resources/list": lambda identifier, params: self._forward(
                       identifier, "resources/list", _cursor(params)),
                   "resources/templates/list": lambda identifier, params: self._forward(
                       identifier, "resources/templates/list", _cursor(params)),
                   "ui/open-link": self._open_link, "ui/message": self._message,
                   "ui/update-model-context": self._update_model_context,
                   "ui/request-display-mode": self._display_mode}.get(method)
        if handler is None:
            return self._error(identifier, METHOD_NOT_FOUND, f"Method not found: {method}")
        return handler(identifier, params)

    def _initialize(self, identifier, params):
        if self.state != "loading":
            return self._error(identifier, HOST_REFUSED, "ui/initialize was already answered")
        self.state = "initializing"
        asked = params.get("protocolVersion")
        self.app_info = params.get("appInfo")
        context = {**self.host_context, "toolInfo": {"tool": self.tool}}
        capabilities = {"openLinks": {}, "serverTools": {}, "serverResources": {}, "logging": {},
                        "message": {key: {} for key in MESSAGE_MODALITIES},
                        "updateModelContext": {key: {} for key in MODEL_CONTEXT_MODALITIES},
                        "sandbox": {"csp": self.approved}}
        return self._response(identifier, {
            "protocolVersion": asked if asked == UI_PROTOCOL_VERSION else UI_PROTOCOL_VERSION,
            "hostInfo": dict(HOST_INFO), "hostCapabilities": capabilities, "hostContext": context})

    def _tool_call(self, identifier, params):
        name, arguments = params.get("name"), params.get("arguments") or {}
        tool = self.tools.get(name)
        if tool is None:
            return self._error(identifier, HOST_REFUSED, f"no tool {name!r} on this server")
        if "app" not in visibility(tool):
            self.log.append(f"refused tools/call {name}: visibility {visibility(tool)} has no 'app'")
            return self._error(identifier, HOST_REFUSED, f"{name} is not callable from an app (visibility {visibility(tool)})")
        if not is_read_only(tool) and not self.consent(tool, arguments):
            self.log.append(f"refused tools/call {name}: the user did not consent")
            return self._error(identifier, HOST_REFUSED, f"the user did not allow {name}")
        return self._forward(identifier, "tools/call", {"name": name, "arguments": arguments})

    def _tools_list(self, identifier, params):
        reply = self.server_request("tools/list", _cursor(params))
        if reply.error:
            return {"jsonrpc": "2.0", "id": identifier, "error": reply.error}
        tools = [tool for tool in reply.result.get("tools", []) if "app" in visibility(tool)]
        return self._response(identifier, {**reply.result, "tools": tools})

    def _open_link(self, identifier, params):
        url = params.get("url")
        if not isinstance(url, str):
            return self._error(identifier, INVALID_PARAMS, "Invalid params: url must be a string")
        parts = urlsplit(url)
        if parts.scheme not in LINK_SCHEMES or not parts.netloc:
            self.log.append(f"refused ui/open-link {url!r}: not an http or https URL")
            return self._error(identifier, HOST_REFUSED, "Invalid URL: this host offers http and https links only")
        self.links.append(url)
        return self._response(identifier, {})

    def _message(self, identifier, params):
        if params.get("role") != "user":
            return self._error(identifier, INVALID_PARAMS, 'Invalid params: role must be "user"')
        problem = _content_problem(params.get("content"), required=True)
        if problem:
            return self._error(identifier, *problem)
        self.messages.append(params["content"])
        return self._response(identifier, {})

    def _update_model_context(self, identifier, params):
        problem = _content_problem(params.get("content"), required=False)
        if problem:
            return self._error(identifier, *problem)
        if "structuredContent" in params and not isinstance(params["structuredContent"], dict):
            return self._error(identifier, INVALID_PARAMS, "Invalid params: structuredContent must be an object")
        self.model_context = {key: params[key] for key in ("content", "structuredContent") if key in params}
        return self._response(identifier, {})

    def _display_mode(self, identifier, params):
        if params.get("mode") not in ("inline", "fullscreen", "pip"):
            return self._error(identifier, INVALID_PARAMS, 'Invalid params: mode must be "inline", "fullscreen" or "pip"')
        return self._response(identifier, {"mode": "inline"})  # the one mode a notebook output has

    def _forward(self, identifier, method, params):
        reply = self.server_request(method, params)
        if reply.error:
            return {"jsonrpc": "2.0", "id": identifier, "error": reply.error}
        return self._response(identifier, reply.result)

    # --- frames ----------------------------------------------------------------------------------

    def _to_view(self, frame):
        if self.state == "ready":
            self._send(frame)
        else:
            self._queued.append(frame)

    def _send(self, frame, answering=None):
        self._record(frame, up=False, answering=answering)
        self.post(frame)

    def _record(self, message, *, up, answering=None):
        """One frame as one entry (a response is named after the request it answers), so the host<->server
        exchanges it causes fall between a View's request and its answer."""
        try:
            payload = dumps(message)
        except (TypeError, ValueError):
            payload = repr(message)
        data = payload.encode("utf-8", "surrogateescape")
        method = message.get("method", answering) if isinstance(message, dict) else answering
        identifier = message.get("id") if isinstance(message, dict) else None
        self.transcript.append(Exchange("postMessage", method, identifier, up=data if up else b"",
                                        down=b"" if up else data, up_payloads=[payload] if up else [],
                                        down_payloads=[] if up else [payload]))

    def _request(self, method, params):
        identifier, self._next_id = self._next_id, self._next_id + 1
        self._pending[identifier] = method
        return {"jsonrpc": "2.0", "id": identifier, "method": method, "params": params}

    @staticmethod
    def _notification(method, params):
        return {"jsonrpc": "2.0", "method": method, "params": params}

    @staticmethod
    def _response(identifier, result):
        return {"jsonrpc": "2.0", "id": identifier, "result": result}

    @staticmethod
    def _error(identifier, code, message):
        """An error response; None means the request's id could not be read, and MCP then leaves `id` out."""
        frame = {"jsonrpc": "2.0", "id": identifier, "error": {"code": code, "message": message}}
        if identifier is None:
            del frame["id"]
        return frame
