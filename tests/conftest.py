"""Shared fixtures: lab servers over stdio and HTTP, stopped after the module that used them."""

from collections import Counter

import pytest

from checks.ex13_host import two_servers
from labserver.warm import WARM
from mcpwire import HttpWire, StdioWire



def pytest_collection_modifyitems(items):
    """Files with a test marked slow first, then files that start labs cold, then files with the most items.

    With `--no-loadscope-reorder` (the Makefile passes it) xdist hands out whole files in this order, so
    the long ones overlap the rest instead of running alone at the end. xdist's own order, by count
    alone, put the single test that starts fifty cold labs last.
    """
    def file_of(item):
        return item.nodeid.split("::")[0]

    rank = {}
    for item in items:
        module = getattr(item, "module", None)  # a notebook cell (nbval) has none
        own = 0 if item.get_closest_marker("slow") else 1 if getattr(module, "LAB_STARTS_COLD", False) else 2
        rank[file_of(item)] = min(own, rank.get(file_of(item), 2))
    count = Counter(file_of(item) for item in items)
    items.sort(key=lambda item: (rank[file_of(item)], -count[file_of(item)]))


@pytest.fixture(scope="module", autouse=True)
def _cold_labs_where_the_process_is_watched(request):
    """A module that sets LAB_STARTS_COLD watches the lab's own process: no warm starts there."""
    if not getattr(request.module, "LAB_STARTS_COLD", False):
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(WARM, raising=False)
        yield


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
