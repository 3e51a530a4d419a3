"""Fact kinds apply themselves to a plan under the one vocabulary's keys."""
from __future__ import annotations

from runner.bisect import variation
from runner.build.plan import Lock

from tests.unit.bisect.fakes import plan


def test_a_lockfile_goes_to_its_managers_slot() -> None:
    base = plan()
    npm = variation.Fact("lock:npm", "build", 40, Lock("npm", "package-lock.json", "ab" * 32))
    uv = variation.Fact("lock:uv", "build", 40, Lock("uv", "uv.lock", "cd" * 32))
    applied = variation.apply(base, [npm, uv])
    assert applied.lock == npm.value and applied.python_lock == uv.value
    assert set(variation.facts(applied)) >= {"lock:npm", "lock:uv"}
    assert variation.apply(applied, [variation.Fact("lock:uv", "build", 40, None)]).python_lock is None


def test_differences_are_keyed_as_diff_keys_them() -> None:
    good, bad = plan(node="22.11.0", lodash="4.17.20"), plan(node="22.12.0", lodash="4.17.21")
    assert [f.key for f in variation.differences(good, bad)] == ["pin:node:lodash", "runtime:node"]
    assert all(f.stage == "build" for f in variation.differences(good, bad))


def test_a_node_variant_keeps_the_end_s_installer_node() -> None:
    """So its image reuses the end's dependency layer (installer.py); the installer node is no fact."""
    import dataclasses

    from runner.build.plan import Runtime

    installer = Runtime("node", None, "22.23.5", "npm-registry", True)
    good = dataclasses.replace(plan(node="22.11.0"), installer_node=installer)
    bad = dataclasses.replace(plan(node="22.12.0"), installer_node=installer)
    [node] = variation.differences(good, bad)
    variant = variation.apply(good, [node])
    assert variant.runtime("node") == bad.runtime("node") and variant.installer_node == installer
    assert "installer" not in " ".join(variation.facts(variant))
