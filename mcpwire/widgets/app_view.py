"""An MCP App rendered in a notebook output: the host page, a sandbox proxy in an opaque origin, the View inside.

The MCP Apps rules for a web host (2026-01-26, "Sandbox proxy"): the proxy and the host have different
origins, the proxy iframe has `allow-scripts allow-same-origin`, and the View is loaded by the proxy with
the CSP the host built. Here the host page is the notebook output (JupyterLab's origin). The proxy page is
served by a small HTTP server in the kernel on 127.0.0.1, with the View's CSP as its `Content-Security-Policy`
header (the View's `srcdoc` iframe inherits it), and the browser reaches that server only through the page's
own Jupyter server: jupyter-server-proxy's `<base_url>proxy/127.0.0.1:<port>/`. So the View loads wherever
JupyterLab loads (a laptop, a JupyterHub behind its proxy, Binder), and the browser never needs the kernel's
loopback. Through that proxy the proxy page has JupyterLab's own origin, so the kit departs from the spec's
letter: the proxy iframe gets `allow-scripts` without `allow-same-origin`, an opaque origin of its own, which
cannot read the page's DOM, cookies or XSRF token, and the View inside it is opaque too. A page that is not a
Jupyter server's (another front end on the kernel's machine) reaches the kernel's port itself, as before.

The host's decisions stay in Python (`mcpwire.apps.host.AppHost`), in a thread of the kernel, so the View
is answered while a cell runs: the output's script only carries each message from the proxy to the kernel
(`POST /relay`) and the host's messages back (`GET /outbox`, a long poll), both under a random token.

In JupyterLab the frame is not inside the output: it sits beside the notebook's cells, over the output, and follows
it as the notebook scrolls. Clearing an output removes its elements at once, and an iframe among them would be gone
before the host could send `ui/resource-teardown`. So when the output goes (cleared, or its cell deleted), the frame
hides, the host asks the View, and the frame goes once the View answered (or after TEARDOWN_WAIT_MS). JupyterLab
draws a moved cell's output again: the View on the page takes the new drawing over instead of loading twice. When the
kernel stops, the output sends the View its `ui/resource-teardown` itself. Elsewhere (no JupyterLab notebook around
the output) the frame stays in the output. Where the page's Jupyter server does not pass the kernel's server on (no
jupyter-server-proxy in its environment), the output says so and the View does not load; the frames are still in
`host.transcript`.
"""

import html
import json
import queue
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from ..apps.host import AppHost, host_tools

# No allow-same-origin: served through JupyterLab's own server, the proxy page would otherwise be JupyterLab's origin.
PROXY_SANDBOX = "allow-scripts"
# jupyter-server-proxy's path to a port on the Jupyter server's machine (its default host allowlist has 127.0.0.1).
SERVER_PROXY_PATH = "proxy/127.0.0.1:{port}"
POLL_SECONDS = 20
MAX_HEIGHT = 600  # the View grows with its size-changed up to this; past it, it scrolls
# How long the page waits for the View's answer to ui/resource-teardown before it removes the frame anyway: the spec
# says the host SHOULD wait for it and names no limit, and a View that never answers must not stay forever.
TEARDOWN_WAIT_MS = 5000
# How long an output may be off the page before the page takes it as gone: a moved cell is drawn again well within it.
# (JupyterLab's "full" windowing mode, not the default, also takes a scrolled-away cell off the page: its View is then
# torn down too.)
REDRAW_WAIT_MS = 1000
SANDBOX_PAGE = (Path(__file__).parent / "app_sandbox" / "sandbox.html").read_bytes()


class AppView:
    """One tool call's View in a notebook output. `AppView.for_tool(wire, name, arguments)`, then display it."""

    def __init__(self, host, *, call=True):
        self.host = host
        self.token = secrets.token_urlsafe(16)
        self.outbox = queue.Queue()
        host.post = self._post
        self.html = host.html if host.html is not None else host.load()
        self._size = None
        self._noted = {"links": 0, "messages": 0, "context": None}
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="mcp-app-sandbox", daemon=True).start()
        if call:
            host.call_tool()

    @classmethod
    def for_tool(cls, wire, name, arguments=None, **host_kwargs):
        host = AppHost(wire, name, arguments, tools=host_tools(wire), **host_kwargs)
        host.load()
        return cls(host)

    @property
    def port(self):
        return self._server.server_address[1]

    @property
    def origin(self):
        """The kernel's server as the kernel reaches it; a browser reaches it through its Jupyter server."""
        return f"http://127.0.0.1:{self.port}"

    def _post(self, frame):
        self.host.sent.append(frame)
        self.outbox.put({"post": frame})

    def status(self):
        lab = [e.method for e in self.host.transcript if e.transport != "postMessage"]
        frames = [e for e in self.host.transcript if e.transport == "postMessage"]
        return (f"{self.host.state} · View→host {sum(1 for e in frames if e.bytes_up)} frames, "
                f"host→View {sum(1 for e in frames if e.bytes_down)} · host→lab {', '.join(lab)}")

    def _relayed(self, message):
        if self.host.state == "closed":  # an output drawn again after its View closed: it gets no View back
            self._report()
            return
        self.host.receive(message)
        if self.host.size and self.host.size != self._size:
            self._size = dict(self.host.size)
            self.outbox.put({"size": self._size})
        self._note_what_the_view_asked()
        self._report()

    def _note_what_the_view_asked(self):
        """What the output shows under the View: links to click, messages for the conversation, the model context."""
        host, noted = self.host, self._noted
        for url in host.links[noted["links"]:]:
            self.outbox.put({"note": "link", "url": url})
        for content in host.messages[noted["messages"]:]:
            self.outbox.put({"note": "message", "text": " ".join(block["text"] for block in content)})
        if host.model_context is not noted["context"]:
            context = host.model_context
            text = " ".join(block["text"] for block in context.get("content", []))
            if "structuredContent" in context:
                text += (" " if text else "") + json.dumps(context["structuredContent"])
            self.outbox.put({"note": "context", "text": text})
        noted.update(links=len(host.links), messages=len(host.messages), context=host.model_context)

    def take_context(self, context):
        """The theme and width JupyterLab shows the output with, for hostContext (anything else is ignored)."""
        if not isinstance(context, dict):
            return
        if context.get("theme") in ("light", "dark"):
            self.host.host_context["theme"] = context["theme"]
        width = context.get("width")
        if isinstance(width, int) and not isinstance(width, bool) and 100 <= width <= 10_000:
            self.host.host_context["containerDimensions"] = {"width": width, "maxHeight": MAX_HEIGHT}

    def teardown(self, why="asked from the kernel"):
        """ui/resource-teardown; the output removes the iframe once the View answered."""
        if self.host.state in ("closing", "closed"):
            return
        self.host.log.append(f"teardown: {why}")
        self.host.teardown()
        self._report()

    def _report(self):
        self.outbox.put({"status": self.status()})
        if self.host.state == "closed":
            self.outbox.put({"closed": True})

    def close(self):
        self.outbox.put({"closed": True})
        self._server.shutdown()
        self._server.server_close()

    def _handler(self):
        view = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass  # the transcript is the log

            def _reply(self, status, body=b"", content_type="application/json", extra=()):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Access-Control-Allow-Origin", "*")  # the token, not the origin, guards the relay
                self.send_header("Cache-Control", "no-store")
                for name, value in extra:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                if self.path == "/sandbox.html":
                    self._reply(200, SANDBOX_PAGE, "text/html; charset=utf-8",
                                [("Content-Security-Policy", view.host.policy)])
                elif self.path == f"/outbox/{view.token}":
                    items = []
                    try:
                        items.append(view.outbox.get(timeout=POLL_SECONDS))
                        while True:
                            items.append(view.outbox.get_nowait())
                    except queue.Empty:
                        pass
                    self._reply(200, json.dumps(items).encode())
                else:
                    self._reply(404)

            def do_POST(self):
                if self.path not in (f"/relay/{view.token}", f"/context/{view.token}", f"/cleared/{view.token}"):
                    self._reply(404)
                    return
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    message = json.loads(body)
                except ValueError:
                    message = body.decode("utf-8", "replace")  # the host answers it as malformed
                if self.path.startswith("/context/"):
                    view.take_context(message)
                elif self.path.startswith("/cleared/"):
                    view.teardown("the output was removed (cleared, or its cell deleted)")
                else:
                    view._relayed(message)
                self._reply(204)

        return Handler

    def _repr_html_(self):
        border = "1px solid #ccc" if ((self.host.resource or {}).get("_meta") or {}).get("ui", {}).get("prefersBorder") else "0"
        config = html.escape(json.dumps({"proxyPath": SERVER_PROXY_PATH.format(port=self.port), "loopback": self.origin,
                                         "token": self.token, "sandbox": PROXY_SANDBOX, "border": border}))
        return f"""<div class="mcpwire-app" data-config="{config}">
<div class="mw-app-slot" style="height: 160px;"></div>
<div class="mw-app-notes" style="font-size: 12px;"></div>
<pre class="mw-app-status" style="font-size: 11px; color: #666;"></pre>
<script>
(function () {{
  const root = document.currentScript.parentElement;
  const config = JSON.parse(root.dataset.config);
  let slot = root.querySelector(".mw-app-slot");
  const status = root.querySelector(".mw-app-status");
  const notes = root.querySelector(".mw-app-notes");
  // JupyterLab draws an output again when its cell moves: the View already on the page takes the new output over.
  const shown = (window.mcpwireAppViews = window.mcpwireAppViews || new Map());
  if (shown.has(config.token)) return shown.get(config.token)(root);
  const proxy = document.createElement("iframe");
  proxy.className = "mw-app-proxy";
  proxy.setAttribute("sandbox", config.sandbox);
  proxy.style.cssText = "width: 100%; height: 100%; display: block; border: " + config.border;
  // In JupyterLab the frame lives beside the cells, over this output, not in it: clearing an output removes its
  // elements at once, an iframe among them, and the host must still ask the View (ui/resource-teardown) first.
  const scroller = root.closest(".jp-WindowedPanel-outer");
  const frame = document.createElement("div");
  frame.className = "mw-app-frame";
  frame.id = root.dataset.frame = "mw-app-" + Math.random().toString(36).slice(2);
  frame.style.cssText = scroller ? "position: absolute; z-index: 1;" : "height: 100%;";
  frame.append(proxy);
  (scroller || slot).append(frame);
  let state = "open";  // -> closing (the output was removed) -> closed (the frame is gone)
  let detachedSince = null;  // when this output left the page; if no new drawing of it comes, it was cleared
  if (scroller) shown.set(config.token, function takeOver(newRoot) {{
    const newStatus = newRoot.querySelector(".mw-app-status");
    if (state !== "open" || slot.isConnected || newRoot.closest(".jp-WindowedPanel-outer") !== scroller) {{
      newRoot.querySelector(".mw-app-slot").style.height = "0";
      newStatus.textContent = state === "open" ? "this View is shown in another output" : "this View was closed";
      return;
    }}
    newRoot.querySelector(".mw-app-slot").style.height = slot.style.height;
    slot = newRoot.querySelector(".mw-app-slot");
    newRoot.querySelector(".mw-app-notes").replaceWith(notes);
    newStatus.replaceWith(status);
    newRoot.dataset.frame = frame.id;
    detachedSince = null;
  }});
  // The kernel's server as this page reaches it: through the page's own Jupyter server (jupyter-server-proxy), so the
  // View loads wherever JupyterLab does. A page that is not a Jupyter server's (no page config: another front end on
  // the kernel's own machine) uses the kernel's loopback port itself.
  const jupyterConfig = document.getElementById("jupyter-config-data");
  const server = jupyterConfig
    ? new URL(JSON.parse(jupyterConfig.textContent).baseUrl + config.proxyPath, location.href).href : config.loopback;
  const post = (path, data) => fetch(server + path + config.token, {{ method: "POST", body: JSON.stringify(data) }})
    .then((response) => {{ if (!response.ok) throw new Error(path + " " + response.status); return response; }});
  // One request at a time, in order: the host must see the View's messages in the order the View sent them.
  let relayed = post("/context/", {{
    theme: document.body.dataset.jpThemeLight === "false" ? "dark" : "light", width: Math.round(root.clientWidth) }});
  const reached = relayed.then(() => true, () => false);
  // The proxy page learns the host page's origin from its fragment: an opaque frame gets no origin to check otherwise.
  reached.then((ok) => {{ if (ok) proxy.src = server + "/sandbox.html#" + encodeURIComponent(location.origin); }});
  window.addEventListener("message", (event) => {{
    // The proxy's origin is opaque ("null"): the frame it came from is what identifies it.
    if (event.source !== proxy.contentWindow || event.origin !== "null") return;
    relayed = relayed.then(() => post("/relay/", event.data), () => post("/relay/", event.data));
  }});
  function removeFrame(why) {{
    if (state === "closed") return;
    state = "closed";
    frame.remove();
    status.textContent = why;
    shown.delete(config.token);
  }}
  // No host to ask (the kernel is gone): the page sends the View its ui/resource-teardown itself and waits for the answer.
  function tearDownWithoutKernel(why) {{
    const id = "teardown-without-kernel";
    const onAnswer = (event) => {{
      if (event.source !== proxy.contentWindow || !event.data || event.data.id !== id) return;
      window.removeEventListener("message", onAnswer);
      removeFrame(why + ": the View answered ui/resource-teardown");
    }};
    window.addEventListener("message", onAnswer);
    proxy.contentWindow.postMessage({{ jsonrpc: "2.0", id, method: "ui/resource-teardown", params: {{}} }}, "*");
    setTimeout(() => removeFrame(why + ": the View did not answer"), {TEARDOWN_WAIT_MS});
  }}
  // The output was cleared or its cell deleted: the frame hides, the host (in the kernel) sends ui/resource-teardown,
  // and the frame goes once the View answered, or after {TEARDOWN_WAIT_MS} ms.
  function cleared() {{
    state = "closing";
    frame.style.visibility = "hidden";
    post("/cleared/", {{}}).catch(() => tearDownWithoutKernel("the output was removed without a kernel"));
    setTimeout(() => removeFrame("the output was removed: the View did not answer"), {TEARDOWN_WAIT_MS});
  }}
  function follow() {{
    if (state !== "open") return;
    if (!slot.isConnected) {{
      frame.style.visibility = "hidden";
      detachedSince = detachedSince === null ? performance.now() : detachedSince;
      if (performance.now() - detachedSince > {REDRAW_WAIT_MS}) return cleared();
    }} else {{
      detachedSince = null;
      const box = slot.getBoundingClientRect(), base = scroller.getBoundingClientRect();
      frame.style.top = box.top - base.top + scroller.scrollTop - scroller.clientTop + "px";
      frame.style.left = box.left - base.left + scroller.scrollLeft - scroller.clientLeft + "px";
      frame.style.width = box.width + "px";
      frame.style.height = box.height + "px";
      frame.style.visibility = box.width > 0 ? "visible" : "hidden";
    }}
    requestAnimationFrame(follow);
  }}
  if (scroller) follow();
  // What the View asked the host for, shown and never acted on by the page: a link waits for the learner's click.
  const labels = {{ link: "The View offers a link: ", message: "For the conversation (ui/message): ",
                   context: "Model context now (ui/update-model-context): " }};
  function note(item) {{
    const line = document.createElement("div");
    line.className = "mw-app-note mw-app-note-" + item.note;
    line.append(labels[item.note]);
    let clickable = false;
    try {{ clickable = item.note === "link" && ["http:", "https:"].includes(new URL(item.url).protocol); }}
    catch (error) {{ clickable = false; }}
    if (clickable) {{
      const link = document.createElement("a");
      link.href = item.url;
      link.target = "_blank";
      link.rel = "noopener noreferrer";
      link.textContent = item.url;
      line.append(link);
    }} else {{
      line.append(item.text || item.url);
    }}
    if (item.note === "context") notes.querySelectorAll(".mw-app-note-context").forEach((old) => old.remove());
    notes.append(line);
  }}
  (async function poll() {{
    if (!(await reached)) {{
      status.textContent = "the View cannot load: this page's Jupyter server did not pass it on (" + config.proxyPath +
        "/ needs jupyter-server-proxy in the server's environment)";
      return;
    }}
    for (;;) {{
      let items;
      try {{
        const response = await fetch(server + "/outbox/" + config.token);
        if (!response.ok) throw new Error("outbox " + response.status);
        items = await response.json();
      }}
      catch (error) {{ if (state !== "closed") tearDownWithoutKernel("the kernel stopped"); return; }}
      for (const item of items) {{
        // "*": an opaque origin cannot be named as a target; the frame is the kit's proxy, which never navigates.
        if (item.post) proxy.contentWindow.postMessage(item.post, "*");
        if (item.size && item.size.height) slot.style.height = Math.min(item.size.height, {MAX_HEIGHT}) + "px";
        if (item.status) status.textContent = item.status;
        if (item.note) note(item);
        if (item.closed) {{ removeFrame(status.textContent); return; }}
      }}
    }}
  }})();
}})();
</script>
</div>"""

    def _repr_pretty_(self, printer, cycle):
        printer.text(f"AppView({self.host.tool['name']}, {self.host.resource_uri})")
