"""Shared fixtures: lab servers over stdio and HTTP, stopped after the module that used them."""

import pytest

from checks.ex13_host import two_servers
from mcpwire import HttpWire, StdioWire


@pytest.fixture(scope="module")
def stdio_wire():
    with StdioWire.labserver() as wire:
        yield wire


@pytest.fixture(scope="module")
def http_wire():
    with HttpWire.labserver() as wire:
        yield wire


@pytest.fixture(scope="module")
def lab(stdio_wire):
    """The stdio lab server under the name the exercises give it."""
    return stdio_wire


@pytest.fixture(scope="module")
def http(http_wire):
    return http_wire


@pytest.fixture(scope="module")
def clients():
    """Exercise 13's two lab servers, one client each, for a module of host checks."""
    with two_servers() as pair:
        yield pair


@pytest.fixture
def verdict(capsys):
    """Run a check and return what it printed, as a learner would read it."""

    def run(check, *args):
        check(*args)
        return capsys.readouterr().out

    return run
