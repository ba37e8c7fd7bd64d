"""For every pytest run here (tests and notebooks): labs start warm, forked from one process that imported the SDK once.

See labserver.warm. Test modules that watch the lab's own process set LAB_STARTS_COLD = True.
"""

from bench.test_times import ItemCpu, RunTimes
from labserver.warm import warm_starter


def pytest_configure(config):
    config.pluginmanager.register(ItemCpu(), "item-cpu")  # in every process that runs tests
    if not hasattr(config, "workerinput"):  # xdist workers inherit the controller's starter
        config._warm_labs = warm_starter()
        config._warm_labs.__enter__()
        config.pluginmanager.register(RunTimes(), "test-times")


def pytest_unconfigure(config):
    starter = getattr(config, "_warm_labs", None)
    if starter is not None:
        starter.__exit__(None, None, None)

