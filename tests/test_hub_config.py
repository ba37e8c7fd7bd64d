"""The Zero to JupyterHub example an instructor deploys a class with: keys the chart reads, the course it pulls.

The chart validates its values against its own schema at install time; this table holds the keys the example
uses, with the types that schema gives them (jupyterhub/values.schema.yaml of zero-to-jupyterhub-k8s), so a
typo or a wrong type fails here instead of at `helm upgrade`.
"""

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "ci-examples" / "z2jh-config.yaml"
FIRST_LESSON = sorted((ROOT / "notebooks").glob("00-*.ipynb"))[0].name

# Key path -> the type the chart's schema gives it.
CHART_KEYS = {
    "singleuser.image.name": str,
    "singleuser.image.tag": str,
    "singleuser.lifecycleHooks.postStart.exec.command": list,
    "singleuser.defaultUrl": str,
    "singleuser.cpu.guarantee": (int, float),
    "singleuser.cpu.limit": (int, float),
    "singleuser.memory.guarantee": (str, int),
    "singleuser.memory.limit": (str, int),
    "singleuser.networkPolicy.enabled": bool,
    "singleuser.networkPolicy.egressAllowRules.cloudMetadataServer": bool,
    "singleuser.networkPolicy.egressAllowRules.dnsPortsCloudMetadataServer": bool,
    "singleuser.networkPolicy.egressAllowRules.dnsPortsKubeSystemNamespace": bool,
    "singleuser.networkPolicy.egressAllowRules.dnsPortsPrivateIPs": bool,
    "singleuser.networkPolicy.egressAllowRules.nonPrivateIPs": bool,
    "singleuser.networkPolicy.egressAllowRules.privateIPs": bool,
    "cull.enabled": bool,
    "cull.timeout": int,
}


def leaves(tree, prefix=""):
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from leaves(value, path + ".")
        else:
            yield path, value


def unknown_or_mistyped(values):
    return [(path, value) for path, value in leaves(values)
            if path not in CHART_KEYS or not isinstance(value, CHART_KEYS[path])
            or (CHART_KEYS[path] is not bool and isinstance(value, bool))]


def config():
    return yaml.safe_load(CONFIG.read_text())


def test_every_key_is_one_the_chart_reads_with_its_type():
    assert unknown_or_mistyped(config()) == []


@pytest.mark.parametrize("mistake", [("singleuser", "defaultURL", "/lab"), ("cull", "timeout", "1h"),
                                     ("singleuser", "networkPolicy", {"enabled": "yes"})],
                         ids=["misspelt key", "wrong type", "text for a flag"])
def test_the_key_check_catches_a_broken_config(mistake):
    values = config()
    section, key, value = mistake
    values[section][key] = value
    assert unknown_or_mistyped(values)


def test_learners_start_in_lesson_00_of_the_course_nbgitpuller_pulls():
    single = config()["singleuser"]
    command = single["lifecycleHooks"]["postStart"]["exec"]["command"]
    assert command[0] == "gitpuller" and len(command) == 4
    folder = command[3]
    assert single["defaultUrl"] == f"/lab/tree/{folder}/notebooks/{FIRST_LESSON}"
    readme = (ROOT / "README.md").read_text()
    link = re.search(r"hub/user-redirect/git-pull\?\S*urlpath=lab%2Ftree%2F([\w-]+)%2Fnotebooks%2F([\w.-]+)", readme)
    assert link and link.groups() == (folder, FIRST_LESSON), "the README's nbgitpuller link opens the same lesson"


def test_the_image_is_the_binder_build_and_it_has_nbgitpuller_and_jupyterhub():
    # The chart starts each learner's server as `jupyterhub-singleuser`, a command of the jupyterhub package.
    assert "binder/" in CONFIG.read_text()
    assert "-r requirements/hub.txt" in (ROOT / "binder" / "postBuild").read_text()
    hub_lock = (ROOT / "requirements" / "hub.txt").read_text()
    assert re.search(r"^nbgitpuller==", hub_lock, re.M) and re.search(r"^jupyterhub==", hub_lock, re.M)


def test_no_egress_is_opened_beyond_what_the_course_pull_needs():
    rules = config()["singleuser"]["networkPolicy"]["egressAllowRules"]
    assert config()["singleuser"]["networkPolicy"]["enabled"] is True
    assert rules["privateIPs"] is False and rules["cloudMetadataServer"] is False
