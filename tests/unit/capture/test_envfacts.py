"""The environment as twin records it: names kept, noise left out, values only where they are
facts about the run, never a secret's."""
from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import pytest

from runner.capture.envfacts import ALWAYS_LISTED, EnvOptions, env_facts, locale_tag, redaction, time_zone
from runner.capture.scrub import Scrubber
from runner.secretrules import RULES_VERSION

ENV = {"TZ": "America/New_York", "LANG": "en_US.UTF-8", "PATH": "/usr/bin", "HOME": "/home/sam", "USER": "sam",
       "SSH_AUTH_SOCK": "/tmp/x", "XDG_RUNTIME_DIR": "/run/user/1", "npm_lifecycle_event": "test",
       "API_TOKEN": "s3cr3t-value-123", "FEATURE": "on", "EMPTY": ""}


def facts(env: dict[str, str] = ENV, **kw: object) -> tuple[dict[str, dict[str, str]], list[str], Scrubber]:
    scrub = Scrubber(env, env.get("HOME"))
    res = env_facts(env, EnvOptions(**kw), scrub)  # type: ignore[arg-type]
    return res.facts, res.values_included, scrub


def test_allowlisted_names_are_always_listed_absent_when_unset_and_noise_is_left_out() -> None:
    found, included, _ = facts()
    assert list(found)[: len(ALWAYS_LISTED)] == list(ALWAYS_LISTED)
    assert found["CI"] == {"state": "absent"} and found["PATH"] == {"state": "set"}
    assert found["TZ"] == {"state": "set", "value": "America/New_York"} and included == ["LANG", "TZ"]
    assert found["FEATURE"] == {"state": "set"} and found["EMPTY"] == {"state": "empty"}
    for noise in ("HOME", "USER", "SSH_AUTH_SOCK", "XDG_RUNTIME_DIR", "npm_lifecycle_event"):
        assert noise not in found


def test_include_env_records_a_value_scrubbed_but_never_a_secrets() -> None:
    found, included, _ = facts(include=("FEATURE", "API_TOKEN"))
    assert found["FEATURE"] == {"state": "set", "value": "on"} and "FEATURE" in included
    assert found["API_TOKEN"] == {"state": "set"} and "API_TOKEN" not in included


def test_a_recorded_value_holding_a_command_line_loses_its_options_secrets() -> None:
    env = {"PYTEST_ADDOPTS": "-x --db-password hunter22 --pg-token=t0k3n-value", "NODE_OPTIONS": "--max-old-space-size=4096"}
    found, included, scrub = facts(env)
    assert found["PYTEST_ADDOPTS"]["value"] == "-x --db-password <redacted:option-value> --pg-token=<redacted:assignment>"
    assert found["NODE_OPTIONS"]["value"] == "--max-old-space-size=4096" and included == ["NODE_OPTIONS", "PYTEST_ADDOPTS"]
    assert scrub.scrubbed() == {"assignment": 1, "option-value": 1}


def test_a_salt_hashes_the_values_not_recorded() -> None:
    found, _, _ = facts(salt="pepper")
    want = hmac.new(b"pepper", b"s3cr3t-value-123", hashlib.sha256).hexdigest()[:32]
    assert found["API_TOKEN"] == {"state": "set", "hash": want} and "hash" not in found["TZ"]


def test_the_time_zone_is_tz_or_the_systems_and_never_a_guess(tmp_path: Path) -> None:
    assert time_zone({"TZ": ":Europe/Paris"}) == "Europe/Paris"
    assert time_zone({"TZ": "Not/AZone"}) is None
    etc = tmp_path / "etc"
    etc.mkdir()
    assert time_zone({}, etc) is None
    (etc / "timezone").write_text("Asia/Tokyo\n")
    assert time_zone({}, etc) == "Asia/Tokyo"
    zone = Path("/usr/share/zoneinfo/America/Chicago")
    if zone.exists():
        (etc / "localtime").symlink_to(zone)
        assert time_zone({}, etc) == "America/Chicago"


def test_the_locale_is_what_icu_resolves() -> None:
    assert locale_tag({"LANG": "de_DE.UTF-8"}) == "de-DE"
    assert locale_tag({"LANG": "de_DE.UTF-8", "LC_ALL": "fr_CA.UTF-8"}) == "fr-CA"
    assert locale_tag({}) == locale_tag({"LANG": "C.UTF-8"}) == locale_tag({"LC_ALL": "POSIX"}) == "en-US"
    assert locale_tag({"LANG": "pt"}) == "pt" and locale_tag({"LANG": "!!"}) is None


def test_the_scrubber_counts_per_rule_and_replaces_secret_values_and_home() -> None:
    scrub = Scrubber(ENV, "/home/sam")
    text = scrub.text("token s3cr3t-value-123 in /home/sam/src and ghp_" + "a1B2" * 10)
    assert "s3cr3t-value-123" not in text and "/home/sam" not in text and "ghp_" not in text
    assert "~/src" in text
    assert scrub.scrubbed() == {"env-value": 1, "github-token": 1, "home-path": 1}


# twin's value allowlist, rules version 2 (its privacy reference), in its order.
TWIN_ALLOWLIST = ("CI", "TERM", "FORCE_COLOR", "NO_COLOR", "NODE_ENV", "NODE_OPTIONS", "TZ", "LANG", "LANGUAGE",
                  "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_NUMERIC", "LC_TIME", "PYTHONHASHSEED",
                  "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "PYTHONUTF8", "GOFLAGS", "CGO_ENABLED",
                  "RUST_BACKTRACE")
CI_RUN = {"TERM": "dumb", "CI": "true", "COLUMNS": "80", "LINES": "24", "GITHUB_ACTIONS": "true", "GITLAB_CI": "true",
          "BUILDKITE": "true", "NO_COLOR": "1", "FORCE_COLOR": "0", "NODE_ENV": "test", "PYTHONHASHSEED": "0",
          "GOFLAGS": "-mod=mod", "LC_PAPER": "de_DE.UTF-8", "PYTHONIOENCODING": "utf-8", "PYTHONUTF8": "1",
          "BUILD_NUMBER": "42", "TTY_COMPATIBLE": "1",
          "PATH": "/usr/bin", "JAVA_HOME": "/opt/jdk", "HTTPS_PROXY": "http://proxy:3128", "APP_LANG": "de",
          "GITHUB_TOKEN": "ghs_abcdef123456", "GITHUB_SHA": "0" * 40}


def test_the_variables_always_listed_are_twins_own_list_and_the_rules_are_version_2() -> None:
    assert ALWAYS_LISTED == TWIN_ALLOWLIST
    found, included, scrub = facts({})
    assert list(found) == list(TWIN_ALLOWLIST) and all(f == {"state": "absent"} for f in found.values())
    assert RULES_VERSION == 2
    res = env_facts({}, EnvOptions(), scrub)
    assert redaction(res, scrub, RULES_VERSION, False)["rulesVersion"] == 2


@pytest.mark.parametrize("name", ["TERM", "CI", "COLUMNS", "LINES", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE",
                                  "NO_COLOR", "FORCE_COLOR", "NODE_ENV", "PYTHONHASHSEED", "GOFLAGS", "LC_PAPER",
                                  "PYTHONIOENCODING", "PYTHONUTF8", "BUILD_NUMBER", "TTY_COMPATIBLE"])
def test_what_decides_a_ci_failure_is_recorded_with_its_value(name: str) -> None:
    found, included, _ = facts(CI_RUN)
    assert found[name] == {"state": "set", "value": CI_RUN[name]} and name in included


@pytest.mark.parametrize("name", ["PATH", "JAVA_HOME", "HTTPS_PROXY", "APP_LANG", "GITHUB_TOKEN", "GITHUB_SHA"])
def test_everything_else_is_recorded_by_name_only(name: str) -> None:
    found, included, _ = facts(CI_RUN)
    assert found[name] == {"state": "set"} and name not in included


def test_include_env_of_a_session_variable_records_it_as_it_is() -> None:
    found, included, _ = facts(include=("HOME",))
    assert found["HOME"] == {"state": "set", "value": "/home/sam"} and "HOME" in included  # asked: not `~`
    assert "USER" not in facts()[0] and "HOME" not in facts()[0]  # unasked, still noise
