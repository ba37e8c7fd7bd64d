"""Shared fixtures: lab servers over stdio and HTTP, stopped after the module that used them."""

import pytest

from mcpwire import HttpWire, StdioWire


@pytest.fixture(scope="module")
def stdio_wire():
    with StdioWire.labserver() as wire:
        yield wire


@pytest.fixture(scope="module")
def http_wire():
    with HttpWire.labserver() as wire:
        yield wire
