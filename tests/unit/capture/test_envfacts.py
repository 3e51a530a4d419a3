"""The environment as twin records it: names kept, noise left out, values only where they are
facts about the run, never a secret's."""
from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

from runner.capture.envfacts import ALWAYS_LISTED, EnvOptions, env_facts, locale_tag, time_zone
from runner.capture.scrub import Scrubber

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
