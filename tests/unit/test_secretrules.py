"""The one secret rule set: names, URLs, options, and twin's rules over what a replay reports
(each rule, what is left alone, linear time, an attempt as the replayer hands it back), and the
five places that show a URL masking it one way."""
from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from runner.verdict.judge import Attempt, Expected
from runner.verdict.attempted import SUPPLIED, attempt_of, redacted
from runner.secretrules import (
    a_source, looks_random, mask_url, mask_urls, option_secret, scrub, scrub_bytes, secret_name, url_secrets,
)

GH = "ghp_" + "a1B2c3D4" * 5


@pytest.mark.parametrize(("text", "want"), [
    (f"token {GH} done", "token <redacted:github-token> done"),
    ("https://bob:hunter2@git.example.com/app.git", "https://git.example.com/app.git"),
    ("see https://gitlab.com/o/r?private_token=abc123def, then", "see https://gitlab.com/o/r?private_token=***, then"),
    ("key AKIAABCDEFGHIJKLMNOP", "key <redacted:aws-access-key>"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----!", "<redacted:private-key>!"),
    ("glpat-abcdefghij0123456789", "<redacted:gitlab-token>"),
    ("xoxb-1234567890-abc", "<redacted:slack-token>"),
    ("sk_live_0123456789abcdefXYZ", "<redacted:stripe-key>"),
    ("npm_" + "a" * 36, "<redacted:npm-token>"),
    ("sk-ant-abcdefghijklmnopqrstuvwx", "<redacted:llm-api-key>"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmno", "<redacted:jwt>"),
    ("Authorization: Bearer abcdefghijklmnop", "Authorization: Bearer <redacted:bearer-token>"),
    ("export DB_PASSWORD=hunter22", "export DB_PASSWORD=<redacted:assignment>"),
    ('{"api_key": "s3cr3t-value"}', '{"api_key": "<redacted:assignment>"}'),
    ("x=token=secret123", "x=token=<redacted:assignment>"),
    ("ENCRYPTION_KEY=c2VjcmV0", "ENCRYPTION_KEY=<redacted:assignment>"),  # any *_KEY, not only api/access/private
    ("DB_PASS=hunter22 PASSPHRASE='open sesame'", "DB_PASS=<redacted:assignment> PASSPHRASE='<redacted:assignment>'"),
    ('"Authorization": "Bearer abcdefghijklmnop"', '"Authorization": "Bearer <redacted:bearer-token>"'),
    ('{"signingKey": "abcd1234"}', '{"signingKey": "<redacted:assignment>"}'),
    ("seed Xk29Lm3Np8Qr4St7Uv1Wx5Yz0Ab6Cd2Ef", "seed <redacted:high-entropy>"),
    # an option and its value as text: a `set -x` trace, a command a log echoes
    ("+ docker login --password hunter2 reg", "+ docker login --password <redacted:option-value> reg"),
    ('+ gpg --passphrase "correct horse" -d', '+ gpg --passphrase "<redacted:option-value>" -d'),
    ("keytool -storepass abc -keypass def", "keytool -storepass <redacted:option-value> -keypass <redacted:option-value>"),
    # a key block with no END (the program died printing it): its body goes, the next line stays
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAK+/CAQEA\nAbCd==\n\nTraceback: died", "<redacted:private-key>\nTraceback: died"),
    ("-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,AB\n\nMHcCAQEE", "<redacted:private-key>"),
    ('{"k": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADAN\\nBgkqhkiG9w0", "b": 1}', '{"k": "<redacted:private-key>", "b": 1}'),
])
def test_each_rule_replaces_its_match_with_a_marker(text: str, want: str) -> None:
    assert scrub(text) == want


@pytest.mark.parametrize("text", [
    "commit 3f2c9e1a4b5c6d7e8f90a1b2c3d4e5f6a7b8c9d0",  # hex digests stay readable
    "integrity sha512-" + "aB3dE6" * 12,  # lockfile integrity hashes are public
    "Error: value is 41, expected 42", "tz America/New_York", "token: abc",  # too short to be a value
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",  # long but not random
    "--- PASS: TestParse (0.00s)", "sorted(rows, key=lambda r: r.name)", "cache_key = digest(path)",  # not secrets
    '"author": "Jane Doe"', "OLDPWD=/home/runner/work", "https://example.com/a?page=2&sort=name",
    "docker login --password-stdin reg", "use --token-file t.txt now", "x --password --verbose", "gcc -pthread x.c",
    "mysql -p db",  # as text, no program is known: a short option stays (argv knows its program: capture/argv.py)
    # a variable's reference is where the secret comes from, not the secret
    'mysql --password "$DB_PASS" db', "POSTGRES_PASSWORD=${PG_PASS}", "export API_TOKEN=$GITHUB_TOKEN",
])
def test_what_is_not_a_secret_is_left_alone(text: str) -> None:
    assert scrub(text) == text


def test_entropy_needs_mixed_case_digits_and_bits() -> None:
    assert looks_random("Xk29Lm3Np8Qr4St7Uv1Wx5Yz0Ab6Cd2Ef")
    assert not looks_random("abcdefabcdefabcdefabcdefabcdefab")


@pytest.mark.parametrize("text", [
    "a." * 500_000, "token=" * 100_000, "-----BEGIN PRIVATE KEY-----" * 30_000, "x://" * 200_000,
    "Bearer " * 150_000, "eyJ" * 300_000, "a" * 1_000_000, "passwd:" * 150_000, "a=b " * 200_000,
    "key=1 " * 150_000, "https://a:b@" * 80_000, "x=https://h/?token=a&" * 50_000,
    "-----BEGIN PRIVATE KEY-----" + "\n" + "A" * 1_000_000, "-----BEGIN PRIVATE KEY-----" + "\nAb\n\n" * 200_000,
    ("-----BEGIN PRIVATE KEY-----\n" + "A" * 129 + "\n") * 5_000, "--password " * 100_000, "-a " * 300_000,
    "--password-" * 100_000,
])
def test_scrubbing_stays_linear_on_what_a_program_may_print(text: str) -> None:
    start = time.perf_counter()
    scrub(text)
    assert time.perf_counter() - start < 10  # about 1-2 s a megabyte on a loaded 2-core machine


def test_bytes_that_are_not_utf8_survive() -> None:
    assert scrub_bytes(b"\xff " + GH.encode() + b" \xfe") == b"\xff <redacted:github-token> \xfe"


def test_an_attempt_is_judged_on_what_it_printed_and_reported_without_secrets() -> None:
    out = f"token=[{GH}] supplied=[hunter2-secret]\nError: boom\n".encode()
    expected = Expected(False, 0, None, None, (), out)
    att = attempt_of(out, out, 0, None, 1.0, False, expected)
    assert att.classification == "recorded"  # byte for byte, before scrubbing
    shown = redacted(att, ["hunter2-secret"])
    for text in (shown.output_tail, shown.stdout.decode(), *shown.key_lines):
        assert GH not in text and "hunter2-secret" not in text
    assert "<redacted:github-token>" in shown.output_tail and SUPPLIED in shown.output_tail
    assert shown.classification == "recorded"


def test_nothing_to_scrub_leaves_the_attempt_as_it_was() -> None:
    att = Attempt(1, None, "exit1:0", ("Error: boom",), 1.0, stdout=b"ok\n", output_tail="Error: boom")
    assert redacted(att, []) == att


def test_a_supplied_value_shown_as_such_is_not_scrubbed_again() -> None:
    assert scrub(f"token={SUPPLIED}") == f"token={SUPPLIED}"


@pytest.mark.parametrize("name", [
    "MY_SIGNING_KEY", "KEY", "APIKEY", "ENCRYPTION_KEY", "AWS_SECRET_ACCESS_KEY", "DB_PASS", "DB_PASSWORD",
    "PGPASSWORD", "PASSPHRASE", "GITHUB_TOKEN", "CLIENT_SECRET", "SENTRY_DSN", "MYSQL_PWD", "GH_PAT", "NPM_AUTH",
    "REPLAY_SALT", "api_key", "apiKey", "x-api-key", "encryption_key", "Authorization", "session_cookie",
])
def test_a_secret_looking_name(name: str) -> None:
    assert secret_name(name)


@pytest.mark.parametrize("name", [
    "PWD", "OLDPWD", "PASS", "TERM", "COLUMNS", "CI", "PATH", "HOME", "LANG", "AUTHOR", "BYPASS_CACHE", "key",
    "sort_key", "cache_key", "first_pass", "author", "KEYBOARD_LAYOUT",
    # where a secret is kept, not the secret: a path, which argv may name and a replay needs as it was
    "SSH_AUTH_SOCK", "KEY_FILE", "POSTGRES_PASSWORD_FILE", "PRIVATE_KEY_PATH", "PASSWORD_STORE_DIR", "token_file",
])
def test_not_a_secret_looking_name(name: str) -> None:
    assert not secret_name(name)


@pytest.mark.parametrize(("url", "want"), [
    ("https://bob:hunter2@git.example.com/app.git", "https://git.example.com/app.git"),
    ("https://x-access-token:ghs_abc@github.com/o/r", "https://github.com/o/r"),
    ("https://TOKEN@github.com/o/r", "https://github.com/o/r"),  # a token as the user name
    ("postgresql://farm:s3cret@127.0.0.1:5432/x", "postgresql://127.0.0.1:5432/x"),
    ("redis://:pw@broker:6379/0", "redis://broker:6379/0"),
    ("https://gitlab.com/o/r.git?private_token=glpat-abc", "https://gitlab.com/o/r.git?private_token=***"),
    ("https://h/x?a=1&token=t&access_token=u&key=k&sig=s&X-Amz-Signature=z&page=2",
     "https://h/x?a=1&token=***&access_token=***&key=***&sig=***&X-Amz-Signature=***&page=2"),
    ("https://h/cb#access_token=abc&state=1", "https://h/cb#access_token=***&state=1"),
    ("https://[::1]:8080/x?api_key=abc", "https://[::1]:8080/x?api_key=***"),
    ("https://u:p@h/x?token=t", "https://h/x?token=***"),
])
def test_mask_url_removes_credentials_and_masks_secret_parameters(url: str, want: str) -> None:
    assert mask_url(url) == want


@pytest.mark.parametrize("url", ["https://example.com/a?page=2&q=x", "git@github.com:o/r.git", "/srv/repo",
                                 "https://h/x?token=", "not a url", "http://[bad"])
def test_mask_url_leaves_a_url_without_secrets_as_it_was(url: str) -> None:
    assert mask_url(url) is url or mask_url(url) == url


def test_urls_in_a_message_are_masked_and_their_secrets_listed() -> None:
    line = "fatal: https://u:hunter22@h/r.git?token=abc (see https://h/help)."
    assert mask_urls(line) == "fatal: https://h/r.git?token=*** (see https://h/help)."
    assert url_secrets(line) == ["hunter22", "abc"]
    assert url_secrets("DSN https://TOKEN123@h/x") == ["TOKEN123"]


def test_the_places_that_show_a_url_mask_it_with_the_one_function() -> None:
    """One name for URL masking (issue 40): config, the farm's store and the workers had an alias each."""
    from runner import config
    from runner.build.sources.repo import RemoteFailed
    from runner.farm import store
    from runner.farm.prepare import _repo
    from runner.workers import taskkeys

    url = "https://bob:hunter22@git.example.com/o/r.git?private_token=glpat-abcdefghij0123456789"
    want = "https://git.example.com/o/r.git?private_token=***"
    capsule = SimpleNamespace(repo=SimpleNamespace(remote=url))
    assert mask_url(url) == _repo(capsule) == want  # type: ignore[arg-type]
    assert want in str(RemoteFailed(url, "does not answer")) and "hunter22" not in str(RemoteFailed(url, "x"))
    with pytest.raises(ValueError, match="private_token=\\*\\*\\*") as refused:
        taskkeys.check_broker_url(url)
    assert "hunter22" not in str(refused.value)
    assert not any(hasattr(m, n) for m, n in ((config, "without_credentials"), (store, "shown"), (taskkeys, "redacted")))


def test_an_option_secret_says_where_the_secret_is() -> None:
    assert a_source("env:PW") and a_source('"$DB_PASS"') and a_source("${pw}") and not a_source("$ecret1")
    assert option_secret("--password=x", None).at == len("--password=")  # type: ignore[union-attr]
    assert option_secret("--password", None).at is None  # type: ignore[union-attr]
    assert option_secret("-pX", "mysql").at == 2 and option_secret("-pX", None) is None  # type: ignore[union-attr]


def test_a_cred_word_names_a_secret_and_credit_does_not() -> None:
    assert all(secret_name(n) for n in ("MY_CRED", "CRED_STORE", "dbCred", "AWS_CREDS"))
    assert not any(secret_name(n) for n in ("CREDIT_LIMIT", "incredible", "MY_CRED_FILE"))
