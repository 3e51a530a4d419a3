"""Package managers from lockfiles and package.json, and what node_modules really holds."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from runner.capture.packages import package_managers, resolved_node, search_dirs


def pkg(modules: Path, name: str, version: str) -> Path:
    d = modules / name
    d.mkdir(parents=True)
    (d / "package.json").write_text(json.dumps({"name": name, "version": version}))
    return d


def test_lockfiles_from_cwd_up_to_the_root_nearest_first(tmp_path: Path) -> None:
    app = tmp_path / "packages" / "app"
    app.mkdir(parents=True)
    (tmp_path / "pnpm-lock.yaml").write_text("lockfileVersion: '9.0'\n")
    (app / "uv.lock").write_text("version = 1\n")
    (tmp_path / "package.json").write_text(json.dumps({"packageManager": "pnpm@9.15.9+sha512.abc"}))
    dirs = search_dirs(app, tmp_path)
    assert dirs == [app, app.parent, tmp_path]
    found = {pm["name"]: pm for pm in package_managers(dirs, tmp_path, {"pnpm": "9.15.9"})}
    assert found["uv"]["lockfile"] == "packages/app/uv.lock" and found["uv"]["version"] is None
    assert found["uv"]["lockfileSha256"] == hashlib.sha256(b"version = 1\n").hexdigest()
    assert (found["pnpm"]["version"], found["pnpm"]["declared"], found["pnpm"]["ecosystem"]) == (
        "9.15.9", "9.15.9+sha512.abc", "node")


def test_a_bare_package_json_is_npm_without_a_lockfile_and_no_project_is_none(tmp_path: Path) -> None:
    assert package_managers([tmp_path], tmp_path, {}) == []
    (tmp_path / "package.json").write_text("{}")
    assert package_managers([tmp_path], tmp_path, {"npm": "10.9.9"}) == [
        {"name": "npm", "ecosystem": "node", "version": "10.9.9", "declared": None, "lockfile": None,
         "lockfileSha256": None}]


def test_resolved_node_lists_duplicates_scopes_and_the_pnpm_store_once(tmp_path: Path) -> None:
    assert resolved_node([tmp_path]) is None
    nm = tmp_path / "node_modules"
    pkg(nm, "lodash", "4.17.21")
    nested = pkg(nm, "@babel/core", "7.26.0")
    pkg(nested / "node_modules", "lodash", "4.17.4")
    store = nm / ".pnpm" / "chalk@5.3.0" / "node_modules"
    chalk = pkg(store, "chalk", "5.3.0")
    (nm / "chalk").symlink_to(chalk)  # pnpm's link: the same install, not a duplicate
    (nm / ".bin").mkdir()
    assert resolved_node([tmp_path]) == {"@babel/core": ["7.26.0"], "chalk": ["5.3.0"],
                                         "lodash": ["4.17.4", "4.17.21"]}
    assert len(resolved_node([tmp_path], limit=2) or {}) == 2
