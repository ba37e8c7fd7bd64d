"""The Content-Security-Policy a web host puts around an MCP App's View, built from the resource's `_meta.ui.csp`.

MCP Apps (2026-01-26, "UI Resource Format" and "Sandbox proxy"): the host MUST build the CSP from the
declared domains, MUST NOT allow an undeclared one, MUST use the restrictive default when `ui.csp` is
absent, and the sandbox adds `frame-src` (declared or 'none'), `base-uri` (declared or 'self') and
`object-src 'none'`. The kit restricts further where the spec allows it: `connect-src` lists only the
declared domains (the spec's recipe adds 'self', which here would be the sandbox proxy's own origin).

A declared entry is kept only if it is an origin (`https://host`, `https://*.host`, `wss://host:port`);
anything that could smuggle a directive or a keyword into the policy (`;`, quotes, spaces, `*`, `data:`)
is refused and reported, never written into the policy.
"""

import re
from urllib.parse import urlsplit

DEFAULT_POLICY = ("default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
                  "img-src 'self' data:; media-src 'self' data:; connect-src 'none'")
# Added to every policy by the sandbox: "Block dangerous features" and the frame-src / base-uri defaults.
SANDBOX_DEFAULTS = "frame-src 'none'; object-src 'none'; base-uri 'self'"
SELF, NONE, UNSAFE_INLINE = "'self'", "'none'", "'unsafe-inline'"
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
DOMAIN_LISTS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
ORIGIN = re.compile(r"(https?|wss?)://(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?")


def refusal(entry):
    """Why a declared domain entry cannot go into a policy, or None if it can."""
    if not isinstance(entry, str):
        return f"not a string: {entry!r}"
    if any(character in entry for character in ";,'\"\\") or any(character.isspace() for character in entry):
        return f"{entry!r} has a character that could add to the policy (; , quotes, spaces)"
    if not ORIGIN.fullmatch(entry.lower()):
        return f"{entry!r} is not an origin like https://host, https://*.host or wss://host:port"
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


def allows(policy, directive, url):
    """Whether `policy` lets a View reach `url` under `directive` (e.g. 'connect-src'), as a browser would decide.

    Enough of CSP's source matching for the kit's policies: host sources with an optional `*.` and port, the
    scheme's default port when none is written; 'self' never matches here, because a View runs in an opaque
    origin. A URL a browser could not parse is never reached.
    """
    parsed = directives(policy)
    sources = parsed.get(directive, parsed.get("default-src", [NONE]))
    target = origin(url)
    if target is None:
        return False
    for source in sources:
        if source.startswith("'") or source.endswith(":"):
            continue
        allowed = origin(source)
        if allowed is None or allowed[0::2] != target[0::2]:
            continue
        host, wanted = allowed[1], target[1]
        if host == wanted or (host.startswith("*.") and wanted.endswith(host[1:])):
            return True
    return False


def origin(url):
    """(scheme, host, port) of `url` as a browser reads it, or None if a browser could not parse it.

    Where Python's urlsplit and a browser's URL parser differ, this follows the browser: in http(s) and ws(s)
    URLs a backslash ends the host like a slash, the scheme's default port is the port when none is written,
    and a Unicode host is compared in its ASCII (punycode) form.
    """
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url.replace("\\", "/"))
        port, host = parts.port, parts.hostname
    except ValueError:  # a port out of range or an unclosed IPv6 bracket
        return None
    if parts.scheme not in DEFAULT_PORTS or not host:
        return None
    wildcard, name = ("*.", host[2:]) if host.startswith("*.") else ("", host)
    try:
        name = name if ":" in name else name.encode("idna").decode("ascii")
    except UnicodeError:
        return None
    return parts.scheme, wildcard + name, DEFAULT_PORTS[parts.scheme] if port is None else port
