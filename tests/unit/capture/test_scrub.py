"""What capture scrubs, as the Scrubber does it: secrets this environment holds (by value, URLs'
credentials included), options' values, homes, counted per kind; PWD and OLDPWD are paths."""
from __future__ import annotations

from pathlib import Path

from runner.capture.scrub import Scrubber, secret_values


def test_secret_named_values_and_url_credentials_are_the_environments_secrets() -> None:
    env = {"API_TOKEN": "tok-123456", "DATABASE_URL": "postgres://app:dbpass99@db/x?sslpassword=sslpw123",
           "OLDPWD": "/srv/project", "PWD": "/srv/project/sub", "FEATURE": "on", "DB_PASS": "short"}
    assert secret_values(env) == ["tok-123456", "dbpass99", "sslpw123"]  # longest first; "short" is too short


def test_pwd_and_oldpwd_are_never_secrets_so_a_path_in_argv_stays_runnable() -> None:
    scrub = Scrubber({"OLDPWD": "/srv/project", "PWD": "/srv/project/sub"}, None)
    assert scrub.argv(["sh", "/srv/project/t.sh"]) == ["sh", "/srv/project/t.sh"]
    assert scrub.scrubbed() == {}


def test_argv_options_values_and_environment_values_are_scrubbed_and_counted() -> None:
    scrub = Scrubber({"MY_SIGNING_KEY": "s3cr3tvalue123"}, None)
    argv = ["deploy", "--password", "hunter2", "--token=abc", "mysql", "-pSECRET", "--sign", "s3cr3tvalue123",
            "https://u:pw@h/x?private_token=glpat-0123456789abcdefghij"]
    assert scrub.argv(argv) == ["deploy", "--password", "<redacted:option-value>", "--token=<redacted:option-value>",
                                "mysql", "-p<redacted:option-value>", "--sign", "<redacted:env-value>",
                                "https://h/x?private_token=***"]
    assert scrub.scrubbed() == {"env-value": 1, "option-value": 3, "url-credentials": 1}


def test_home_directories_become_tilde_ours_and_anyones() -> None:
    scrub = Scrubber({}, "/root")
    text = scrub.text("at /root/src/a.py, /home/sam/x, /Users/kim/y and C:\\Users\\lee\\z; /rootfs and /x/root stay")
    assert text == "at ~/src/a.py, ~/x, ~/y and ~\\z; /rootfs and /x/root stay"
    assert scrub.scrubbed() == {"home-path": 4}


def test_what_is_left_out_is_named_scrubbed() -> None:
    scrub = Scrubber({"API_TOKEN": "tok-123456"}, None)
    scrub.omit("assets/tok-123456.bin")
    assert scrub.omitted == ["assets/<redacted:env-value>.bin"]


def test_a_secret_named_variable_holding_a_path_here_names_where_the_secret_is_not_the_secret(tmp_path: Path) -> None:
    key = tmp_path / "gcp.json"
    key.write_text("{}")
    env = {"GOOGLE_APPLICATION_CREDENTIALS": str(key), "SSH_AUTH_SOCK": str(tmp_path / "agent.1"),
           "DEPLOY_TOKEN": "/not/a/path/here/tok"}
    assert secret_values(env) == ["/not/a/path/here/tok"]
    scrub = Scrubber(env, None)
    assert scrub.argv(["gcloud", "auth", f"--key-file={key}"]) == ["gcloud", "auth", f"--key-file={key}"]


def test_a_url_with_a_password_at_the_start_of_a_diff_line_loses_it() -> None:
    scrub = Scrubber({}, None)
    diff = b"@@ -1 +1 @@\n-https://alice:pw-old-9x@host.example/x\n+https://alice:pw-new-9x@host.example/x;\n"
    assert scrub.diff(diff) == b"@@ -1 +1 @@\n-https://host.example/x\n+https://host.example/x;\n"


def test_netrc_passwords_webhook_urls_and_cred_named_values_are_scrubbed() -> None:
    scrub = Scrubber({"MY_CRED": "credvalue12345"}, None)
    text = ("machine api.example.com login bob password netrcpw777\npassword netrcpw888\n"
            "posted to https://hooks.slack.com/services/T0000000/B0000000/XXXXXXXXXXXXXXXXXXXXXXXX\n"
            "using credvalue12345\n")
    assert scrub.text(text) == ("machine api.example.com login bob password <redacted:netrc-password>\n"
                                "password <redacted:netrc-password>\n"
                                "posted to https://hooks.slack.com/services/<redacted:webhook-url>\n"
                                "using <redacted:env-value>\n")
    assert scrub.text("the password reset mail was sent") == "the password reset mail was sent"


def test_a_secret_split_over_two_diff_lines_is_replaced_in_both() -> None:
    scrub = Scrubber({"MY_CRED": "credvalue12345"}, None)
    diff = (b'@@ -1,2 +1,6 @@\n+export GH_HOOK="ghp_Zq7Xa1B2c3D4e5F6g7\\\n+H8i9J0kLmNoPqRsTuV"\n'
            b'+cred credval\n+ue12345 end\n+normal(line);\n+another normal line\n')
    assert scrub.diff(diff).decode() == (
        '@@ -1,2 +1,6 @@\n+export GH_HOOK="<redacted:split-secret>\n+<redacted:split-secret>"\n'
        "+cred <redacted:split-secret>\n+<redacted:split-secret> end\n+normal(line);\n+another normal line\n")
    assert scrub.scrubbed() == {"split-secret": 2}


def test_an_option_on_a_removed_diff_line_loses_its_value() -> None:
    scrub = Scrubber({}, None)
    assert scrub.diff(b"@@ -1 +1 @@\n---password hunter22\n+--password hunter33\n") == (
        b"@@ -1 +1 @@\n---password <redacted:option-value>\n+--password <redacted:option-value>\n")


def test_lines_that_do_not_continue_are_not_read_as_one_random_word() -> None:
    """A lockfile's hash at a line's end and a word at the next one's start, prose after a random
    id: nothing split (only a secret with a shape of its own counts across such lines)."""
    diff = (b"@@ -1,4 +1,4 @@\n+build Zq7Xa1B2c3D4e5F6g7H8i9J0kLmNo\n+PqRsTuVwXyZ0a1b2c3d4 done\n"
            b'+  "integrity": "sha512-x/Zq7Xa1B2c3D4e5F6g7H8i9J0kLmN",\n+  "node_modules/left-pad": 1\n')
    scrub = Scrubber({}, None)
    assert scrub.diff(diff) == scrub.data(diff) and "split-secret" not in scrub.scrubbed()
