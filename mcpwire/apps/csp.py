"""The Content-Security-Policy a web host puts around an MCP App's View, built from the resource's `_meta.ui.csp`.

MCP Apps (2026-01-26, "UI Resource Format" and "Sandbox proxy"): the host MUST build the CSP from the
declared domains, MUST NOT allow an undeclared one, MUST use the restrictive default when `ui.csp` is
absent, and the sandbox adds `frame-src` (declared or 'none'), `base-uri` (declared or 'self') and
`object-src 'none'`. The kit restricts further where the spec allows it: `connect-src` lists only the
declared domains (the spec's recipe adds 'self', which here would be the sandbox proxy's own origin: the
View's `srcdoc` frame inherits the proxy's policy, and with it the proxy's origin as the one 'self' names).

A declared entry is kept only if it is an https or wss origin and nothing more (`https://host`,
`https://*.host`, `wss://host:port`): no path, not even a trailing `/`, no user, query or fragment.
Anything else is refused and reported, never written into the policy: what could smuggle a directive or a
keyword in (`;`, quotes, spaces, `*`, `data:`), a path a browser would match differently from the origin,
and `http`/`ws` entries, whose traffic is readable on the network and which a browser would let reach
`https`/`wss` too. With only https and wss sources, a browser matches a scheme exactly.
"""

import re
from urllib.parse import unquote, urlsplit

DEFAULT_POLICY = ("default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
                  "img-src 'self' data:; media-src 'self' data:; connect-src 'none'")
# Added to every policy by the sandbox: "Block dangerous features" and the frame-src / base-uri defaults.
SANDBOX_DEFAULTS = "frame-src 'none'; object-src 'none'; base-uri 'self'"
SELF, NONE, UNSAFE_INLINE = "'self'", "'none'", "'unsafe-inline'"
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
DOMAIN_LISTS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
# A CSP host source with a scheme and nothing after the host and port: what allows() can match.
HOST_SOURCE = re.compile(r"(https?|wss?)://(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?")
ENCRYPTED_SCHEMES = ("https", "wss")
# Which URL schemes a source's scheme reaches: the insecure scheme also reaches its secure upgrade, and nothing
# else. Measured in Chromium 156; CSP3's scheme-part match (§6.7.2.9) also lets ws reach http(s) and wss reach
# https, which Chromium does not.
SCHEMES_REACHED = {"http": ("http", "https"), "https": ("https",), "ws": ("ws", "wss"), "wss": ("wss",)}
# WHATWG URL: the characters a host may not hold once its percent escapes are decoded; such a URL does not parse.
FORBIDDEN_IN_HOST = re.compile(r"[\x00-\x20\x7f#%/:<>?@\[\\\]^|]")
# WHATWG URL: a browser strips these from both ends of a URL before it reads it.
C0_CONTROL_OR_SPACE = "".join(chr(code) for code in range(0x21))


def refusal(entry):
    """Why a declared domain entry cannot go into a policy, or None if it can."""
    if not isinstance(entry, str):
        return f"not a string: {entry!r}"
    if any(character in entry for character in ";,'\"\\") or any(character.isspace() for character in entry):
        return f"{entry!r} has a character that could add to the policy (; , quotes, spaces)"
    if not HOST_SOURCE.fullmatch(entry.lower()):
        return (f"{entry!r} is not an origin like https://host, https://*.host or wss://host:port "
                "(no path, user, query or fragment)")
    if entry.lower().split(":", 1)[0] not in ENCRYPTED_SCHEMES:
        return f"{entry!r} is not https or wss: the kit keeps only encrypted origins"
    return None


def approved_domains(declared):
    """(approved, refused): the `_meta.ui.csp` lists with only the entries that are safe origins, and why the rest are not."""
    approved, refused = {}, []
    if not isinstance(declared, dict):
        return approved, [] if declared is None else [f"ui.csp is not an object: {declared!r}"]
    for name in DOMAIN_LISTS:
        entries = declared.get(name)
        if entries is None:
            continue
        if not isinstance(entries, list):
            refused.append(f"{name} is not a list: {entries!r}")
            continue
        kept = []
        for entry in entries:
            reason = refusal(entry)
            if reason:
                refused.append(f"{name}: {reason}")
            else:
                kept.append(entry.lower())
        if kept:
            approved[name] = kept
    return approved, refused


def build_policy(declared):
    """The policy for a View whose resource declared `declared` (its `_meta.ui.csp`, or None)."""
    if declared is None:
        return f"{DEFAULT_POLICY}; {SANDBOX_DEFAULTS}"
    domains, _ = approved_domains(declared)
    resources = domains.get("resourceDomains", [])

    def directive(name, *sources, otherwise=None):
        return " ".join([name, *sources] if sources else [name, otherwise])

    return "; ".join([
        "default-src 'none'",
        directive("script-src", SELF, UNSAFE_INLINE, *resources),
        directive("style-src", SELF, UNSAFE_INLINE, *resources),
        directive("connect-src", *domains.get("connectDomains", []), otherwise=NONE),
        directive("img-src", SELF, "data:", *resources),
        directive("font-src", SELF, *resources),
        directive("media-src", SELF, "data:", *resources),
        directive("frame-src", *domains.get("frameDomains", []), otherwise=NONE),
        "object-src 'none'",
        directive("base-uri", *domains.get("baseUriDomains", []), otherwise=SELF),
    ])


def directives(policy):
    """{directive: [sources]} of a policy text."""
    parsed = {}
    for part in policy.split(";"):
        words = part.split()
        if words:
            parsed.setdefault(words[0].lower(), words[1:])
    return parsed


def allows(policy, directive, url, *, self_origin=None):
    """Whether `policy` lets a View reach `url` under `directive` (e.g. 'connect-src'), as Chromium decides.

    Enough of CSP's source matching for the kit's policies: host sources with an optional `*.` and port (no port
    means the scheme's default), an http or ws source also reaching its https or wss upgrade, and 'self'.
    'self' names the origin the policy was served from; for a View that is the sandbox proxy's, since the View's
    `srcdoc` frame inherits the proxy's policy. Pass it as `self_origin`; without it 'self' matches nothing. A
    scheme source (`data:`) or a source with a path (the kit writes none) matches nothing here, and a URL a
    browser could not parse is never reached.
    """
    parsed = directives(policy)
    sources = parsed.get(directive, parsed.get("default-src", [NONE]))
    target = origin(url)
    if target is None:
        return False
    return any(_matches(source, target, self_origin) for source in sources)


def _matches(source, target, self_origin):
    if source.lower() == SELF:
        return self_origin is not None and _same_origin_or_upgrade(origin(self_origin), target)
    if not HOST_SOURCE.fullmatch(source.lower()):
        return False
    allowed = origin(source)
    if allowed is None or target[0] not in SCHEMES_REACHED[allowed[0]] or not _ports_match(allowed, target):
        return False
    host, wanted = allowed[1], target[1]
    return host == wanted or (host.startswith("*.") and wanted.endswith(host[1:]))


def _ports_match(allowed, target):
    """Same port, or each the default of its own scheme (an http source's 80 reaches https on 443)."""
    return allowed[2] == target[2] or (allowed[2] == DEFAULT_PORTS[allowed[0]] and
                                       target[2] == DEFAULT_PORTS[target[0]])


def _same_origin_or_upgrade(own, target):
    """CSP3's 'self': the same origin, or the same host and port reached over https or wss."""
    if own is None or own[1] != target[1]:
        return False
    if own == target:
        return True
    return _ports_match(own, target) and (target[0] in ENCRYPTED_SCHEMES or (own[0] == "http" and target[0] == "ws"))


def origin(url):
    """(scheme, host, port) of `url` as a browser reads it, or None if a browser could not parse it.

    Where Python's urlsplit and a browser's URL parser differ, this follows the browser: in http(s) and ws(s)
    URLs any run of slashes and backslashes after the scheme's colon (`https:host`, `https:///host`) leads to
    the host, a backslash ends the host like a slash, the scheme's default port is the port when none is
    written, a host's percent escapes are decoded (`api%2Eexample.com` is `api.example.com`) and one that then
    holds a character no host may hold does not parse, and a Unicode host is compared in its ASCII (punycode)
    form. Not followed: IPv4 addresses written in other forms than four decimals (`127.1`, `0x7f.0.0.1`), and
    empty labels (`a..example.com`), which this does not parse and Chromium does.
    """
    if not isinstance(url, str):
        return None
    scheme, colon, rest = url.strip(C0_CONTROL_OR_SPACE).partition(":")
    if not colon or scheme.lower() not in DEFAULT_PORTS:
        return None
    authority_onwards = rest.lstrip("/\\")
    try:
        parts = urlsplit(f"{scheme}://{authority_onwards}".replace("\\", "/"))
        port, host = parts.port, parts.hostname
    except ValueError:  # a port out of range or an unclosed IPv6 bracket
        return None
    if not host:
        return None
    wildcard, name = ("*.", host[2:]) if host.startswith("*.") else ("", host)
    if ":" not in name:  # an IPv6 address keeps its colons and needs no decoding
        try:
            name = unquote(name, errors="strict").encode("idna").decode("ascii").lower()
        except UnicodeError:
            return None
        if FORBIDDEN_IN_HOST.search(name):
            return None
    return parts.scheme, wildcard + name, DEFAULT_PORTS[parts.scheme] if port is None else port
