"""mcpwire.apps.csp.allows agrees with Chromium: each policy is served as a page's Content-Security-Policy header,
the page opens a fetch or a WebSocket to each URL, and a securitypolicyviolation event is the browser's "no".

No connection has to succeed (nothing listens on most of these URLs): Chromium checks the policy before it connects,
so a violation event comes or it does not. To know that one did not come without waiting a guessed time, each page
then fetches a sentinel URL no policy here allows: violation events arrive in order, so once the sentinel's has
come, an earlier one would have too. The sandboxed srcdoc case is the View's situation in the kit: an opaque origin
under a policy it inherited from the sandbox proxy, whose 'self' stays the origin of the proxy page's URL (in the kit
JupyterLab's own, even though the proxy frame is opaque too: test_app_in_browser.py shows that in a real JupyterLab).
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from mcpwire.apps.csp import allows, build_policy, origin

pytestmark = [pytest.mark.browser]

# Another host than the page's (127.0.0.1), so that 'self' plays no part in these.
HOST = "localhost"
SENTINEL = "http://sentinel.invalid/"
# Resolves with the blocked URIs once the sentinel's violation has come; the sentinel itself is left out.
WATCH = """(sentinel) => {
  const blocked = [];
  const settled = new Promise((done) => document.addEventListener('securitypolicyviolation', (event) => {
    if (event.blockedURI === sentinel) { done(blocked); } else { blocked.push(event.blockedURI); }
  }));
  return () => { fetch(sentinel).catch(() => {}); return settled; };
}"""
ATTEMPT = f"""async ([how, url]) => {{
  const finish = ({WATCH})({json.dumps(SENTINEL)});
  if (how === 'fetch') {{
    await fetch(url).catch(() => {{}});
  }} else {{
    try {{ new WebSocket(url).onerror = () => {{}}; }} catch (error) {{ return ['threw ' + error.name]; }}
  }}
  return await finish();
}}"""
IN_A_VIEW = f"""async (urls) => {{
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', 'allow-scripts');
  const reply = new Promise((done) => addEventListener('message', (event) => done(JSON.parse(event.data))));
  frame.srcdoc = '<script>' +
    'const finish = (' + {json.dumps(WATCH)} + ')(' + {json.dumps(json.dumps(SENTINEL))} + ');' +
    'Promise.all(' + JSON.stringify(urls) + '.map((url) => fetch(url).catch(() => {{}})))' +
    '.then(finish).then((blocked) => parent.postMessage(JSON.stringify({{origin: self.origin, blocked}}), "*"));' +
    '<' + '/script>';
  document.body.append(frame);
  return await reply;
}}"""


class PolicyPage(BaseHTTPRequestHandler):
    """An empty page whose Content-Security-Policy header is the `csp` query parameter."""

    def do_GET(self):
        policy = parse_qs(urlsplit(self.path).query).get("csp", ["default-src 'none'"])[0]
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Security-Policy", f"{policy}; script-src 'unsafe-inline'")
        self.end_headers()
        self.wfile.write(b"<!doctype html><title>policy</title><body></body>")

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def page_origin():
    server = ThreadingHTTPServer(("127.0.0.1", 0), PolicyPage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def chromium_allows(page, page_origin, policy, how, url):
    page.goto(f"{page_origin}/?" + urlencode({"csp": policy}))
    return page.evaluate(ATTEMPT, [how, url]) == []


SCHEME_CASES = [
    (f"https://{HOST}", "fetch", f"http://{HOST}/"),
    (f"https://{HOST}", "websocket", f"wss://{HOST}/"),
    (f"wss://{HOST}", "fetch", f"https://{HOST}/"),
    (f"wss://{HOST}", "websocket", f"wss://{HOST}/"),
    (f"http://{HOST}", "fetch", f"https://{HOST}/"),
    (f"http://{HOST}:80", "fetch", f"https://{HOST}/"),
    (f"ws://{HOST}", "websocket", f"wss://{HOST}/"),
    (f"ws://{HOST}", "fetch", f"https://{HOST}/"),
    (f"http://{HOST}", "websocket", f"ws://{HOST}/"),
    (f"https://{HOST}:8443", "fetch", f"https://{HOST}/"),
    (f"https://*.{HOST}", "fetch", f"https://{HOST}/"),
]


@pytest.mark.parametrize("source, how, url", SCHEME_CASES, ids=[f"{s} {h} {u}" for s, h, u in SCHEME_CASES])
def test_allows_reaches_what_chromium_reaches(browser_page, page_origin, source, how, url):
    policy = f"default-src 'none'; connect-src {source}"
    assert allows(policy, "connect-src", url) is chromium_allows(browser_page, page_origin, policy, how, url)


# URLs that Python's urlsplit reads differently from a browser; allows() follows the browser.
READING_CASES = [f"https:{HOST}/v1", f"https:///{HOST}/v1", "https://local%68ost/v1", "https://LOCAL%48OST/v1",
                 "https://local%68ost:8443/v1", f"https:{HOST}.evil.net/v1"]


@pytest.mark.parametrize("url", READING_CASES)
def test_allows_reads_a_url_as_chromium_does(browser_page, page_origin, url):
    policy = f"default-src 'none'; connect-src https://{HOST}"
    assert allows(policy, "connect-src", url) is chromium_allows(browser_page, page_origin, policy, "fetch", url)


@pytest.mark.parametrize("url", [f"https://evil.net%2F.{HOST}/", f"https://a%00b.{HOST}/", f"https://%zz.{HOST}/"])
def test_a_url_chromium_cannot_parse_is_one_origin_cannot_parse(browser_page, page_origin, url):
    """No policy decides these: the URL fails before the CSP is asked, so no violation event would tell."""
    browser_page.goto(page_origin)
    assert browser_page.evaluate("(url) => URL.canParse(url)", url) is False
    assert origin(url) is None


@pytest.mark.parametrize("entry", [f"https://{HOST}/", f"https://{HOST}/v1", f"http://{HOST}"])
def test_an_entry_the_kit_drops_is_one_chromium_would_have_let_through(browser_page, page_origin, entry):
    """The kit is stricter than the browser here, as a host MAY be: the entry never reaches the policy."""
    url = f"https://{HOST}/v1"
    assert chromium_allows(browser_page, page_origin, f"default-src 'none'; connect-src {entry}", "fetch", url)
    assert allows(build_policy({"connectDomains": [entry]}), "connect-src", url) is False


def test_self_in_an_inherited_policy_is_the_proxys_origin(browser_page, page_origin):
    policy = "default-src 'none'; connect-src 'self'"
    browser_page.goto(f"{page_origin}/?" + urlencode({"csp": policy}))
    proxy_port = urlsplit(page_origin).port
    urls = [f"{page_origin}/x", f"https://127.0.0.1:{proxy_port}/x", f"http://127.0.0.1:{proxy_port + 1}/x",
            f"http://{HOST}:{proxy_port}/x"]
    seen = browser_page.evaluate(IN_A_VIEW, urls)
    assert seen["origin"] == "null", json.dumps(seen)  # the View's frame is an opaque origin
    reached = [url not in seen["blocked"] for url in urls]
    assert reached == [allows(policy, "connect-src", url, self_origin=page_origin) for url in urls] == [
        True, True, False, False]
