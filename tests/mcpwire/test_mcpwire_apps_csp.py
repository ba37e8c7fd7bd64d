"""mcpwire.apps_csp.allows decides as a browser does where Python's urlsplit would not: the URL tricks a View
could use to reach an undeclared host are blocked, and a URL it cannot parse is blocked instead of raising."""

import pytest

from mcpwire.apps_csp import allows, build_policy

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
