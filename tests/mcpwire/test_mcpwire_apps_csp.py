"""mcpwire.apps.csp.allows decides as a browser does where Python's urlsplit would not: the URL tricks a View
could use to reach an undeclared host are blocked, and a URL it cannot parse is blocked instead of raising.
The scheme and 'self' rules were measured in Chromium 156 (a page with each policy, and the
securitypolicyviolation events of a fetch or a WebSocket to each URL)."""

import pytest

from mcpwire.apps.csp import allows, approved_domains, build_policy, origin

API = build_policy({"connectDomains": ["https://api.example.com"]})


@pytest.mark.parametrize("url", [
    "https://evil.net\\@api.example.com/",  # urlsplit's host is api.example.com; a browser's is evil.net
    "https://api.example.com@evil.net/",
    "https://api.example.com:99999/",
    "https://[::1/",
    "https://api.example.com:8443/",
    "not a url",
])
def test_a_url_that_does_not_reach_the_declared_origin_is_blocked(url):
    assert allows(API, "connect-src", url) is False


@pytest.mark.parametrize("url", ["https://api.example.com:443/v1", "https://API.Example.com/v1"])
def test_the_default_port_and_an_uppercase_host_are_the_same_origin(url):
    assert allows(API, "connect-src", url) is True


@pytest.mark.parametrize("url", [
    "https://api%2Eexample.com/v1",  # a host's percent escapes are decoded
    "https://%41PI.example.com/v1",  # and the host is lowercased after, not before
    "https:api.example.com/v1",  # any run of slashes after a special scheme's colon leads to the host
    "https:///api.example.com/v1",
    "https:\\\\api.example.com/v1",
    "HTTPS://api.example.com/v1",
    "https://user:secret@api.example.com/v1",
    " https://api.exa\tmple.com/v1\n",  # spaces around the URL and tabs or newlines in it are removed
    "https://ａｐｉ.example。com/v1",  # fullwidth letters and an ideographic full stop map to ASCII
])
def test_a_url_a_browser_reads_as_the_declared_origin_is_allowed(url):
    assert allows(API, "connect-src", url) is True


@pytest.mark.parametrize("url", [
    "https://evil.net%2F.example.com/",  # urlsplit's host ends in .example.com; a browser's host may not hold '/'
    "https://a%00b.example.com/",
    "https://%zz.example.com/",
])
def test_a_host_with_a_character_no_host_may_hold_does_not_parse(url):
    assert origin(url) is None
    assert allows(build_policy({"connectDomains": ["https://*.example.com"]}), "connect-src", url) is False


def test_a_declared_port_matches_only_that_port():
    live = build_policy({"connectDomains": ["wss://live.example.com:8443"]})
    assert allows(live, "connect-src", "wss://live.example.com:8443/x") is True
    assert allows(live, "connect-src", "wss://live.example.com/x") is False


def test_a_declared_default_port_matches_a_url_without_one():
    assert allows(build_policy({"connectDomains": ["https://api.example.com:443"]}), "connect-src",
                  "https://api.example.com/v1") is True


def test_a_unicode_host_matches_its_punycode_entry():
    assert allows(build_policy({"connectDomains": ["https://xn--bcher-kva.example"]}), "connect-src",
                  "https://bücher.example/") is True


@pytest.mark.parametrize("entry", [
    "https://api.example.com/",  # a browser would match every path under it: not the origin the host approves
    "https://api.example.com/v1",
    "https://user@api.example.com",
    "https://api.example.com?x",
    "https://api.example.com#x",
    "https://api.example.com\\",
])
def test_an_entry_with_more_than_an_origin_is_refused_and_reaches_nothing(entry):
    approved, refused = approved_domains({"connectDomains": [entry]})
    assert approved == {} and len(refused) == 1, refused
    assert allows(build_policy({"connectDomains": [entry]}), "connect-src", "https://api.example.com/v1") is False


@pytest.mark.parametrize("entry", ["http://api.example.com", "ws://live.example.com:8080"])
def test_an_unencrypted_entry_is_refused_with_the_reason(entry):
    approved, refused = approved_domains({"connectDomains": [entry]})
    assert approved == {} and refused == [f"connectDomains: {entry!r} is not https or wss: the kit keeps only "
                                          "encrypted origins"]
    assert "http://" not in build_policy({"connectDomains": [entry]})


@pytest.mark.parametrize("source, url, reached", [
    ("https://h.example", "http://h.example/", False),
    ("https://h.example", "wss://h.example/", False),
    ("wss://h.example", "https://h.example/", False),  # CSP3's scheme-part match says it matches; Chromium blocks it
    ("wss://h.example", "wss://h.example/", True),
    ("http://h.example", "https://h.example/", True),  # the secure upgrade of an insecure source
    ("http://h.example:80", "https://h.example/", True),
    ("ws://h.example", "wss://h.example/", True),
    ("ws://h.example", "https://h.example/", False),
    ("http://h.example", "ws://h.example/", False),
    ("https://h.example/v1", "https://h.example/v1", False),  # a path source: the kit writes none, allows() skips it
    ("'none'", "https://h.example/", False),
])
def test_a_source_reaches_its_own_scheme_and_an_insecure_one_its_secure_upgrade(source, url, reached):
    assert allows(f"connect-src {source}", "connect-src", url) is reached


PROXY = "http://127.0.0.1:8123"


@pytest.mark.parametrize("url, reached", [
    ("http://127.0.0.1:8123/sandbox.html", True),
    ("https://127.0.0.1:8123/x", True),
    ("ws://127.0.0.1:8123/x", True),
    ("http://127.0.0.1:9000/x", False),
    ("http://localhost:8123/x", False),
])
def test_self_is_the_origin_the_policy_was_served_from(url, reached):
    # A View's srcdoc frame is an opaque origin, yet the proxy's policy it inherits keeps the proxy's 'self'.
    assert allows(build_policy({}), "img-src", url, self_origin=PROXY) is reached


def test_without_a_self_origin_self_matches_nothing():
    assert allows(build_policy({}), "img-src", "http://127.0.0.1:8123/x") is False
