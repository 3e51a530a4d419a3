"""diff_capsules: the environment facts that differ, under stable keys."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from runner.capsules import read_capsule
from runner.capsules.model import (
    Body,
    Capsule,
    Command,
    EnvFact,
    Failure,
    Format,
    FrozenMap,
    HttpCall,
    HttpError,
    HttpRequest,
    HttpResponse,
    Locale,
    PackageManager,
    Platform,
    Provenance,
    PythonEnv,
    Repo,
    Resolved,
)
from runner.facts.diff import diff_capsules, diff_to_data

EXAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "examples"


def twin(**changes: object) -> Capsule:
    base = Capsule(
        provenance=Provenance(Format.TWIN, "1", "a.json", created_at="2026-01-01T00:00:00Z"),
        command=Command(("npm", "test"), ".", exit_code=1, outcome="fail", duration_ms=10,
                        failure=Failure("exit1:0123456789abcdef")),
        platform=Platform(os="linux", distro="debian", distro_version="12", arch="x64", libc="glibc",
                          libc_version="2.36", release="6.1.0"),
        runtimes=FrozenMap({"node": "20.11.1"}),
        tools=FrozenMap({"npm": "10.2.4", "git": "2.43.0"}),
        package_managers=(PackageManager("npm", "node", "10.2.4", None, "package-lock.json", "ab" * 32),),
        resolved=Resolved(node=FrozenMap({"lodash": ("4.17.21",), "debug": ("2.6.9", "4.3.4")})),
        repo=Repo("https://example.com/r.git", "c" * 40, "main", False, ""),
        env=FrozenMap({
            "TZ": EnvFact("TZ", "set", "America/New_York"),
            "CI": EnvFact("CI", "absent"),
            "PATH": EnvFact("PATH", "set", host_specific=True),
            "NODE_OPTIONS": EnvFact("NODE_OPTIONS", "set"),
        }),
        locale=Locale(time_zone="America/New_York", locale="en-US"),
    )  # fmt: skip
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def with_env(c: Capsule, *facts: EnvFact) -> Capsule:
    return dataclasses.replace(c, env=FrozenMap({**c.env, **{f.name: f for f in facts}}))


def keys(c1: Capsule, c2: Capsule) -> list[str]:
    return [d.key for d in diff_capsules(c1, c2).differences]


def test_identical_capsules_do_not_differ() -> None:
    d = diff_capsules(twin(), twin())
    assert d.differences == () and d.not_comparable == ()
    assert not d.differ
    # Both set, neither value recorded: equal, but said so.
    assert [c.key for c in d.caveats] == ["env:NODE_OPTIONS", "env:PATH"]


def test_time_zone_change_is_listed_with_both_values() -> None:
    b = with_env(twin(locale=Locale(time_zone="Europe/Berlin", locale="en-US")), EnvFact("TZ", "set", "Europe/Berlin"))
    d = diff_capsules(twin(), b)
    assert d.differ
    assert [(f.key, f.a, f.b, f.could_change_outcome) for f in d.differences] == [
        ("env:TZ", "America/New_York", "Europe/Berlin", True),
        ("locale:timeZone", "America/New_York", "Europe/Berlin", True),
    ]
    assert d.outcome_keys == ("env:TZ", "locale:timeZone")


def test_runtime_dep_and_repo_diff_changes_get_stable_keys() -> None:
    b = twin(
        runtimes=FrozenMap({"node": "22.1.0"}),
        resolved=Resolved(node=FrozenMap({"lodash": ("4.17.20",), "debug": ("4.3.4", "2.6.9")})),
        repo=Repo("https://example.com/r.git", "c" * 40, "main", True, "diff --git a/x b/x\n+1\n"),
    )
    d = diff_capsules(twin(), b)
    assert [f.key for f in d.differences] == ["runtime:node", "pin:node:lodash", "source:diff", "source:dirty"]
    by_key = {f.key: f for f in d.differences}
    assert (by_key["runtime:node"].a, by_key["runtime:node"].b) == ("20.11.1", "22.1.0")
    assert by_key["source:diff"].a == "(clean)" and by_key["source:diff"].b.startswith("22 bytes, sha256:")
    assert all(f.group in ("runtimes", "resolved packages", "repo") for f in d.differences)


def test_recorded_outcome_fields_never_count() -> None:
    b = twin(
        provenance=Provenance(Format.TWIN, "1", "elsewhere.json", created_at="2027-01-01T00:00:00Z", capsule_id="x"),
        command=Command(("npm", "test"), ".", exit_code=0, outcome="pass", duration_ms=99999,
                        stdout=Body(text="other")),
    )  # fmt: skip
    assert diff_capsules(twin(), b).differences == ()


def test_missing_tool_and_dependency_are_differences_within_twin() -> None:
    b = twin(tools=FrozenMap({"npm": "10.2.4"}), resolved=Resolved(node=FrozenMap({"lodash": ("4.17.21",)})))
    d = diff_capsules(twin(), b)
    assert [(f.key, f.a, f.b) for f in d.differences] == [
        ("tool:git", "2.43.0", "(not found)"),
        ("pin:node:debug", "2.6.9, 4.3.4", "(not installed)"),
    ]


def test_lockfile_and_package_manager_keys() -> None:
    pm = PackageManager("npm", "node", "10.2.4", "npm@10.2.4", "package-lock.json", "cd" * 32)
    assert keys(twin(), twin(package_managers=(pm,))) == ["tool:npm:declared", "lock:npm"]
    pnpm = PackageManager("pnpm", "node", "9.0.0", None, "pnpm-lock.yaml", "ef" * 32)
    # npm's version is still the one twin's tools record: only pnpm and the lockfiles differ
    assert keys(twin(), twin(package_managers=(pnpm,))) == ["tool:pnpm", "lock:npm", "lock:pnpm"]


def test_host_specific_env_is_listed_but_cannot_change_the_outcome() -> None:
    a = with_env(twin(), EnvFact("PATH", "set", "/usr/bin", host_specific=True))
    b = with_env(twin(), EnvFact("PATH", "set", "/opt/bin:/usr/bin", host_specific=True))
    d = diff_capsules(a, b)
    assert [(f.key, f.could_change_outcome) for f in d.differences] == [("env:PATH", False)]
    assert not d.differ


def test_set_values_not_recorded_on_one_side_compare_equal_with_a_note() -> None:
    b = with_env(twin(), EnvFact("NODE_OPTIONS", "set", "--max-old-space-size=4096"))
    d = diff_capsules(twin(), b)
    assert d.differences == ()
    note = {c.key: c.note for c in d.caveats}["env:NODE_OPTIONS"]
    assert note == "compared equal without values: A (value not recorded), B --max-old-space-size=4096"


def test_env_state_changes_count_and_explicit_absent_equals_unlisted() -> None:
    unlisted = twin(env=FrozenMap({k: v for k, v in twin().env.items() if k != "CI"}))
    assert keys(twin(), unlisted) == []
    ci_set = with_env(twin(), EnvFact("CI", "set", "true"))
    d = diff_capsules(twin(), ci_set)
    assert [(f.key, f.a, f.b, f.could_change_outcome) for f in d.differences] == [("env:CI", "(absent)", "true", True)]
    empty = with_env(twin(), EnvFact("CI", "empty"))
    assert [(f.a, f.b) for f in diff_capsules(twin(), empty).differences] == [("(absent)", "(empty)")]


def test_salted_hashes_compare_to_hashes_only() -> None:
    h1 = with_env(twin(), EnvFact("TZ", "set", hash="1" * 32))
    h2 = with_env(twin(), EnvFact("TZ", "set", hash="2" * 32))
    d = diff_capsules(h1, h2)
    assert [(f.key, f.a, f.b) for f in d.differences] == [("env:TZ", "hash:" + "1" * 32, "hash:" + "2" * 32)]
    assert "same salt" in (d.differences[0].note or "")
    assert keys(h1, h1) == []
    hv = diff_capsules(twin(), h1)  # a value against a hash: cannot tell, so equal with a note
    assert hv.differences == () and "env:TZ" in [c.key for c in hv.caveats]


def test_platform_aliases_and_informational_facts() -> None:
    b = twin(platform=dataclasses.replace(twin().platform, arch="x86_64", release="6.8.0"))
    d = diff_capsules(twin(), b)
    assert [(f.key, f.could_change_outcome) for f in d.differences] == [("platform:release", False)]
    assert not d.differ
    musl = twin(platform=dataclasses.replace(twin().platform, libc="musl", libc_version="1.2.4"))
    assert keys(twin(), musl) == ["platform:libc", "platform:libc_version"]


def ci(*calls: HttpCall, argv: tuple[str, ...] = ("npm", "test")) -> Capsule:
    return Capsule(
        provenance=Provenance(Format.CODEINSTANCES, "0", "b.json", capsule_id="sha256:" + "0" * 64),
        command=Command(argv, "/home/sam", cwd_is_host_path=True, exit_code=0),
        http_calls=calls,
    )


def call(status: int | None, body: str = "{}") -> HttpCall:
    req = HttpRequest("GET", "https://api.example.com/v1/x")
    if status is None:
        return HttpCall(1, 1.0, req, error=HttpError("dns", "no such host"))
    return HttpCall(1, 1.0, req, HttpResponse(status, "OK", body=Body(text=body)))


def test_twin_against_codeinstances_lists_not_comparable_facts_without_counting_them() -> None:
    d = diff_capsules(twin(), ci(call(200)))
    assert d.differences == () and not d.differ
    lone = {n.key: n for n in d.not_comparable}
    assert {"platform:distro", "runtime:node", "tool:npm", "env:TZ", "locale:timeZone", "http:calls",
            "command:cwd", "command:host_cwd", "pin:node", "source:commit"} <= set(lone)  # fmt: skip
    assert lone["http:calls"].recorded_in == "b" and lone["runtime:node"].recorded_in == "a"
    assert lone["pin:node"].value == "2 packages"
    assert lone["platform:distro"].note == "codeinstances does not record it"


def test_http_calls_differ_by_status_error_or_body() -> None:
    assert keys(ci(call(200)), ci(call(200))) == []
    assert keys(ci(call(200)), ci(call(503))) == ["http:calls"]
    assert keys(ci(call(200)), ci(call(None))) == ["http:calls"]
    d = diff_capsules(ci(call(200, '{"a": 1}')), ci(call(200, '{"a": 2}')))
    assert [(f.key, f.could_change_outcome) for f in d.differences] == [("http:calls", True)]
    assert d.differences[0].a == "GET https://api.example.com/v1/x -> 200 OK (8 B)"
    assert keys(ci(), ci(call(200))) == ["http:calls"]


def nova(**changes: object) -> Capsule:
    base = Capsule(
        provenance=Provenance(Format.NOVAFABRIC, "0.1.0", "run"),
        command=Command(("npm", "test"), "~/w", cwd_is_host_path=True, exit_code=0, status="success"),
        platform=Platform(os="linux", arch="x86_64", cpu_count=8, memory_bytes=1 << 34),
        runtimes=FrozenMap({"python": "3.11.2"}),
        resolved=Resolved(python=FrozenMap({"PyYAML": "6.0.1", "six": "1.16.0"})),
        env=FrozenMap({"TZ": EnvFact("TZ", "set", "America/New_York"), "HOME": EnvFact("HOME", "set", "/home/u", host_specific=True)}),
        locale=Locale(time_zone="America/New_York", lang="en_US.UTF-8"),
        python=PythonEnv("cpython", "3.11.2", "pip", "requirements.txt", None, "sha256:" + "aa" * 32),
    )  # fmt: skip
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_novafabric_python_environment_facts() -> None:
    b = nova(
        resolved=Resolved(python=FrozenMap({"pyyaml": "6.0.2", "six": "1.16.0"})),
        python=PythonEnv("cpython", "3.12.1", "pip", "requirements.txt", None, "sha256:" + "bb" * 32),
        runtimes=FrozenMap({"python": "3.12.1"}),
    )
    assert keys(nova(), b) == ["runtime:python", "lock:pip", "pin:python:pyyaml"]
    assert keys(nova(), nova(platform=Platform(os="linux", arch="x86_64", cpu_count=64, memory_bytes=1))) == [
        "platform:cpu_count", "platform:memory_bytes",
    ]  # fmt: skip
    assert not diff_capsules(nova(), nova(platform=Platform(os="linux", arch="x86_64", cpu_count=64))).differ


def test_twin_against_novafabric_compares_what_both_record() -> None:
    py_twin = twin(runtimes=FrozenMap({"node": "20.11.1", "python": "3.11.2"}))
    d = diff_capsules(py_twin, nova())
    assert [f.key for f in d.differences] == []  # same arch under another name, same TZ, same python
    lone = {n.key for n in d.not_comparable}
    assert {"platform:distro", "platform:libc", "platform:cpu_count", "runtime:node", "env:HOME", "env:CI",
            "pin:node", "pin:python", "locale:lang", "locale:locale", "python:interpreter"} <= lone  # fmt: skip
    assert "runtime:python" not in lone and "env:TZ" not in lone


def test_diff_to_data_shape() -> None:
    b = with_env(twin(tools=FrozenMap({"npm": "10.2.4"})), EnvFact("TZ", "set", "UTC"))
    a = twin()
    data = diff_to_data(diff_capsules(a, b), a, b)
    assert data["differ"] is True
    assert data["a"] == {"path": "a.json", "format": "twin",
                         "outcome": {"failed": True, "exit_code": 1, "signal": None,
                                     "signature": "exit1:0123456789abcdef"}}  # fmt: skip
    assert [(f["group"], f["key"]) for f in data["differences"]] == [("tools", "tool:git"), ("env", "env:TZ")]
    tz = data["differences"][1]
    assert tz == {"key": "env:TZ", "group": "env", "a": {"state": "set", "value": "America/New_York", "hash": None},
                  "b": {"state": "set", "value": "UTC", "hash": None}, "a_shown": "America/New_York",
                  "b_shown": "UTC", "could_change_outcome": True, "note": None, "score": 15,
                  "evidence": "tool: node reads TZ", "follows": None}  # fmt: skip
    git = data["differences"][0]
    assert (git["a"], git["b"], git["b_shown"]) == ("2.43.0", None, "(not found)")  # absent is null, not a string
    assert data["not_comparable"] == []
    assert [c["key"] for c in data["equal_without_values"]] == ["env:NODE_OPTIONS", "env:PATH"]
    assert data["next"]["argv"] == ["replay", "a.json"]  # both record a failure: nothing to bisect from
    lone = diff_to_data(diff_capsules(twin(), ci()), twin(), ci())["not_comparable"]
    assert {"key": "runtime:node", "group": "runtimes", "recorded_in": "a", "value": "20.11.1", "shown": "20.11.1",
            "note": "codeinstances does not record it"} in lone  # fmt: skip


def test_values_are_data_booleans_and_lists() -> None:
    dirty = dataclasses.replace(twin(), repo=Repo("https://example.com/r.git", "c" * 40, "main", True, ""))
    data = diff_to_data(diff_capsules(twin(), dirty), twin(), dirty)
    row = next(f for f in data["differences"] if f["key"] == "source:dirty")
    assert (row["a"], row["b"], row["a_shown"]) == (False, True, "False")
    pins = dataclasses.replace(twin(), resolved=Resolved(node=FrozenMap({"lodash": ("4.17.20",),
                                                                        "debug": ("2.6.9", "4.3.4")})))
    rows = diff_to_data(diff_capsules(twin(), pins), twin(), pins)["differences"]
    assert [(r["key"], r["a"], r["b"]) for r in rows] == [("pin:node:lodash", ["4.17.21"], ["4.17.20"])]


# --- on the real example capsules -------------------------------------------------------


def test_real_twin_fixture_against_itself_and_a_variant() -> None:
    a = read_capsule(EXAMPLES / "twin" / "echarts-new-york.json")
    assert diff_capsules(a, a).differences == ()
    b = with_env(dataclasses.replace(a, runtimes=FrozenMap({**a.runtimes, "node": "20.0.0"})),
                 EnvFact("TZ", "set", "Asia/Tokyo"))  # fmt: skip
    d = diff_capsules(a, b)
    assert d.outcome_keys == ("runtime:node", "env:TZ")
    assert d.differences[1].a == "America/New_York"


def test_real_twin_against_real_codeinstances() -> None:
    a = read_capsule(EXAMPLES / "twin" / "echarts-new-york.json")
    b = read_capsule(EXAMPLES / "codeinstances" / "fetch-greeting.json")
    d = diff_capsules(a, b)
    assert [f.key for f in d.differences] == ["command:argv"]  # different commands, nothing else comparable
    assert {"platform:distro", "runtime:node", "env:TZ", "http:calls", "pin:node"} <= {n.key for n in d.not_comparable}


def test_real_novafabric_captures_differ_in_python_and_locale() -> None:
    a = read_capsule(EXAMPLES / "novafabric" / "minimal-run")
    b = read_capsule(EXAMPLES / "novafabric" / "01JC4Q7W9Z2M5N8P3R6T1V0X4B")
    d = diff_capsules(a, b)
    found = {f.key for f in d.differences}
    assert {"runtime:python", "locale:timeZone", "locale:lang", "env:LANG", "command:argv"} <= found
    assert {"input:poem.txt", "input:wordcount.py", "pin:python:six", "lock:uv", "lock:pip"} <= found
    assert d.differ
    # minimal-run's env.lock recorded no TZ, so TZ is only comparable through locale.
    assert "env:TZ" in {n.key for n in d.not_comparable}
    host = {f.key: f.could_change_outcome for f in d.differences if f.key in ("env:HOME", "command:host_cwd")}
    assert host == {"env:HOME": False, "command:host_cwd": False}
    twin_capsule = read_capsule(EXAMPLES / "twin" / "echarts-new-york.json")
    assert "platform:distro" in {n.key for n in diff_capsules(twin_capsule, a).not_comparable}


def test_next_suggests_commits_when_the_commit_is_what_differs_and_carries_what_only_the_user_has() -> None:
    from runner.facts.diff import next_step

    failing = dataclasses.replace(twin(), repo=Repo("https://example.com/r.git", "c" * 40, "main", False, ""))
    passing = dataclasses.replace(failing, repo=Repo("https://example.com/r.git", "b" * 40, "main", False, ""),
                                  provenance=dataclasses.replace(failing.provenance, path="b.json"),
                                  command=dataclasses.replace(failing.command, exit_code=0, outcome="pass", failure=None))
    argv, why = next_step(failing, passing, diff_capsules(failing, passing))
    assert argv == ["replay", "bisect", "a.json", "--good", "b.json", "--commits"] and "the commit is what differs" in why
    # the options the diff was given go on, and a commit without a fetchable remote asks for --repo
    local = dataclasses.replace(failing, repo=Repo("/home/me/app", "c" * 40, "main", False, ""))
    argv, why = next_step(local, passing, diff_capsules(local, passing), ["--mirror", "https://x=/m"])
    assert argv[-4:] == ["--mirror", "https://x=/m", "--repo", "PATH_OR_URL"] and "fill in --repo" in why
    assert next_step(local, passing, diff_capsules(local, passing), ["--repo", "../app.git"])[0][-2:] == [
        "--repo", "../app.git"]
    # as `replay diff --repo X` carries it (--repo=X): given, so never asked for a second time
    assert next_step(local, passing, diff_capsules(local, passing), ["--repo=../app.git"])[0][-1] == "--repo=../app.git"
    # a variable one end records by name only, which the other lacks: its value is asked for
    by_name = with_env(failing, EnvFact("APP_LANG", "set"))
    argv, why = next_step(by_name, passing, diff_capsules(by_name, passing))
    assert argv == ["replay", "bisect", "a.json", "--good", "b.json", "--env", "APP_LANG=…"]
    assert "the value of APP_LANG" in why and "--commits" not in argv  # the variable differs too: a plain bisect
