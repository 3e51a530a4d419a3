"""The one secret rule set: what every writer (capture, a replay's reports, the farm's history,
error lines) treats as a secret, by name, by shape and inside URLs.

* `secret_name`: a variable, option or key whose *name* says it holds a secret.
* `mask_url` / `mask_urls`: a URL as it may be shown or written: no user:password@, and the
  values of secret query parameters (`private_token`, `token`, `key`, `sig`...) as `***`.
* `option_secret`: an option that carries a secret (`--password=x`) or announces one as the next
  word (`--password x`, keytool's `-storepass x`); capture walks argv with it (capture/argv.py).
* `RULES` / `scrub`: twin's secret rules over text (its privacy reference lists them; these
  are written from that description), with the URL and name rules above in place of twin's
  narrower ones. A match becomes ``<redacted:RULE-ID>``, or the URL masked. Supplied ``--env``
  values are replaced before these run, by value (runner/replay/replayer.py).

No pattern lets two unbounded repetitions meet (each is bounded, or anchored so that one run is
tried once), so scrubbing stays linear in the text: the output is the program's, and a program
may print anything.
"""
from __future__ import annotations

import functools
import math
import re
import urllib.parse
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

# 2: twin's rules version 2 (its privacy reference: the value allowlist with TERM, FORCE_COLOR,
# NO_COLOR, LC_*, PYTHONIOENCODING..., anyone's home path as ~), here with the name, URL and
# option rules below, which only ever scrub more.
RULES_VERSION = 2
# What a value supplied with --env is shown as (replaced before the rules run, which leave it alone).
SUPPLIED = "[supplied value]"
MASK = "***"  # a secret query parameter's value in a masked URL


def marker(rule: str) -> str:
    return f"<redacted:{rule}>"


# -- names ----------------------------------------------------------------------------

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# A word holding one of these, anywhere in any name: GITHUB_TOKEN, clientSecret, PGPASSWORD.
_INSIDE = ("secret", "token", "passw", "passphrase", "credential", "cookie")
_WHOLE = frozenset({"auth", "oauth", "authorization", "dsn", "cred", "creds", "salt"})
# Only as a word of an upper-case name of two words or more: DB_PASS, MYSQL_PWD, GH_PAT; never
# go test's "--- PASS:", the shell's PWD and OLDPWD, or a program's first_pass.
_ENV_WORDS = frozenset({"pass", "pwd", "pat"})
# What names a key as a secret in a name of any case: api_key, signingKey, x-api-key.
_KEY_KINDS = frozenset({
    "api", "access", "private", "secret", "signing", "sign", "encryption", "master", "license", "client", "app",
    "deploy", "ssh", "gpg", "pgp", "hmac", "jwt", "session", "service", "account", "storage", "subscription",
    "auth", "crypto", "cipher", "aes", "rsa", "consumer", "shared", "root", "admin", "webhook",
})


# A name that ends in one of these names where a secret is kept, not the secret: SSH_AUTH_SOCK,
# KEY_FILE, POSTGRES_PASSWORD_FILE, PRIVATE_KEY_PATH, PASSWORD_STORE_DIR. Its value is a path, which
# must stay as it was (argv naming it must still run), and is no secret to record.
_LOCATOR = frozenset({"file", "files", "path", "paths", "dir", "directory", "sock", "socket"})


# Every rule below needs one of these: most names (and every name in a flood of output) are
# passed over without being split into words.
_HINT = re.compile(r"secret|token|pass|pwd|pat|key|auth|dsn|cred|cookie|salt", re.I)


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(name)]


@functools.lru_cache(maxsize=4096)  # output repeats its names: each is judged once
def secret_name(name: str) -> bool:
    """Does this name (a variable, an option, a config key) say its value is a secret?"""
    if _HINT.search(name) is None:
        return False
    words = _words(name)
    if not words or words[-1] in _LOCATOR:
        return False
    if any(part in w for w in words for part in _INSIDE) or any(w in _WHOLE for w in words):
        return True
    upper = name == name.upper()
    if upper and len(words) > 1 and any(w in _ENV_WORDS for w in words):
        return True
    for i, w in enumerate(words):
        if w in ("key", "keys") and (upper or (i > 0 and words[i - 1] in _KEY_KINDS)):
            return True
        if len(w) > 3 and w.endswith("key") and (upper or w[:-3] in _KEY_KINDS):
            return True
    return False


# -- URLs ------------------------------------------------------------------------------

# Query parameters that hold secrets though the name rule does not say so.
_SECRET_PARAMS = frozenset({"key", "sig", "signature", "code", "pass", "pwd", "apikey", "session", "sessionid",
                            "x-amz-signature", "x-goog-signature", "sas"})
# Not inside a word or a host name; after a diff's `+` or `-` it starts a URL (`git+https://`
# is still matched whole, from its first letter: the search takes the leftmost start).
_URL = r"(?<![A-Za-z0-9.])[A-Za-z][A-Za-z0-9+.-]{0,30}://"
_URL_CHARS = r"[^\s\"'<>`]"


def _secret_param(name: str) -> bool:
    name = urllib.parse.unquote_plus(name).strip()
    return name.lower() in _SECRET_PARAMS or secret_name(name)


def _mask_params(params: str) -> tuple[str, list[str]]:
    """`a=1&token=x` -> `a=1&token=***`, and the values masked."""
    out, found = [], []
    for part in re.split(r"([&;])", params):
        name, eq, value = part.partition("=")
        if eq and value and value != MASK and _secret_param(name):
            found.append(urllib.parse.unquote_plus(value))
            part = f"{name}={MASK}"
        out.append(part)
    return "".join(out), found


@dataclass(frozen=True)
class _Split:
    url: str
    credentials: str  # the user:password@ taken out ("" when none)
    values: tuple[str, ...]  # the secret parameters' values masked


def _split(url: str) -> _Split:
    head, sep, rest = url.partition("://")
    userinfo = ""
    if sep:
        end = min([i for i in (rest.find(c) for c in "/?#") if i >= 0] or [len(rest)])
        authority = rest[:end]
        if "@" in authority:  # a token as the user name is a credential too (https://TOKEN@host)
            userinfo, _, host = authority.rpartition("@")
            rest = host + rest[end:]
    else:
        head, rest = "", url
    main, hash_, fragment = rest.partition("#")
    path, qmark, query = main.partition("?")
    query, found = _mask_params(query)
    if hash_ and "=" in fragment:  # OAuth's implicit flow puts access_token=... here
        fragment, more = _mask_params(fragment)
        found += more
    if not userinfo and not found:
        return _Split(url, "", ())
    return _Split(f"{head}{sep}{path}{qmark}{query}{hash_}{fragment}", userinfo, tuple(found))


def mask_url(url: str) -> str:
    """The URL as it may be shown, logged or written: any user:password@ removed and the value of
    every secret query (or fragment) parameter as `***`. A URL with neither comes back as it was."""
    return _split(url).url


def url_secrets(text: str) -> list[str]:
    """The secrets the URLs in `text` hold: each password (or token given as the user) and each
    secret parameter's value, for scrubbing them wherever else they show up."""
    out = []
    for m in re.finditer(_URL + _URL_CHARS + "{1,8192}+", text):
        split = _split(m.group().rstrip(".,;:!?)]}"))
        user, _, password = urllib.parse.unquote(split.credentials).partition(":")
        out += [v for v in (password or user, *split.values) if v]
    return out


def _in_text(url: str) -> str:
    """mask_url of a URL found in text, where the punctuation that ends a sentence is not the URL's."""
    end = len(url.rstrip(".,;:!?)]}"))
    return mask_url(url[:end]) + url[end:]


def mask_urls(text: str) -> str:
    """Every URL in `text` (a message, a log line) through mask_url."""
    return re.sub(_URL + _URL_CHARS + "{1,8192}+", lambda m: _in_text(m.group()), text)


# -- options ---------------------------------------------------------------------------

# Short options that take a secret, by program, and whether the secret may also be the next word
# (mysql's `-p SECRET` is not: there the next word is the database, and -p asks for the password).
_MYSQL = ("-p", False)
SHORT_SECRET_OPTIONS: dict[str, tuple[str, bool]] = {
    **{p: _MYSQL for p in ("mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlcheck", "mysqlshow",
                           "mysqlslap", "mysqlpump", "mariadb", "mariadb-dump", "mariadb-admin")},
    **{p: ("-p", True) for p in ("sshpass", "mongo", "mongosh", "mongodump", "mongorestore", "mongoexport",
                                 "mongoimport")},
    "redis-cli": ("-a", True), "curl": ("-u", True), "zip": ("-P", True), "unzip": ("-P", True),
    "7z": ("-p", False), "7za": ("-p", False),
}
# An option named for a secret whose value is not one: --password-stdin, --token-file, --no-password.
_NOT_A_VALUE = frozenset({"stdin", "file", "path", "dir", "prompt", "env", "var", "cmd", "command", "helper",
                          "url", "uri", "length", "type"})
# Options whose one word says "password" the tools' own way: keytool's and jarsigner's -storepass and
# -keypass (an Android signing step), openssl's -passin, -passout and -pass.
_PASS_OPTIONS = frozenset({"pass", "passin", "passout", "storepass", "keypass", "srcstorepass", "deststorepass",
                           "srckeypass", "destkeypass", "keystorepass", "truststorepass"})
# openssl's pass phrase arguments: `pass:SECRET` holds it; `env:VAR`, `file:PATH`, `fd:N`, `stdin` say
# where it is, and stay (the command still runs where that is given).
_PASS_SOURCES = ("env:", "file:", "fd:")
# A shell variable's reference is where the secret comes from, not the secret (`--password "$DB_PASS"`
# in a script or an `sh -c` line stays runnable): `${name}`, or `$NAME` in capitals as variables are.
_VAR_REF = r"\$\{[A-Za-z_][A-Za-z0-9_]{0,127}\}|\$[A-Z_][A-Z0-9_]{0,127}"


def a_source(value: str) -> bool:
    """Does this value say where a secret comes from rather than hold it: `env:VAR`, `file:PATH`,
    `stdin` (openssl), a variable's reference (`"$DB_PASS"`, `${pw}`)?"""
    return value == "stdin" or value.startswith(_PASS_SOURCES) or re.fullmatch(f"([\"']?)(?:{_VAR_REF})\\1",
                                                                               value) is not None


@dataclass(frozen=True)
class OptionSecret:
    at: int | None  # where the secret starts in this word (--token=x, -pX); None: it is the next word


@functools.lru_cache(maxsize=4096)  # a log repeats its options: each is judged once
def option_secret(word: str, program: str | None) -> OptionSecret | None:
    """Does this argument carry a secret (`--password=x`, mysql's `-pX`) or announce one as the
    next argument (`--password x`, redis-cli's `-a x`)? `program`: the command it belongs to."""
    short = SHORT_SECRET_OPTIONS.get(program or "")
    if short is not None and word.startswith(short[0]) and not word.startswith("--"):
        if len(word) > len(short[0]):
            return OptionSecret(len(short[0]))
        return OptionSecret(None) if short[1] else None
    if re.match(r"--?[A-Za-z][A-Za-z0-9_.-]", word):
        name, eq, _ = word.lstrip("-").partition("=")
        words = _words(name)
        if ((secret_name(name) or any(w in _PASS_OPTIONS for w in words)) and words[0] != "no"
                and words[-1] not in _NOT_A_VALUE):
            return OptionSecret(word.index("=") + 1 if eq else None)
    return None


# -- the text rules -------------------------------------------------------------------

@dataclass(frozen=True)
class Rule:
    id: str
    pattern: re.Pattern[str]
    # The replacement of one match, or None to leave it alone; default: the whole match becomes the marker.
    replace: Callable[[re.Match[str]], str | None] | None = None
    # What the replacement also covers, matched where the match ends, only once the replacement
    # is decided: a name is judged before its value is read, so a value is read at most once and
    # the names inside one (`x=token=abc`) are still seen.
    value: re.Pattern[str] | None = None


def _assignment(m: re.Match[str]) -> str | None:
    if not secret_name(m.group("name")):
        return None
    return f"{m.group('name')}{m.group('sep')}{m.group('quote')}{marker('assignment')}"


def _option(m: re.Match[str]) -> str | None:
    if _HINT.search(m.group("opt")) is None:  # most options in a log: passed over without a look
        return None
    found = option_secret(m.group("opt"), None)
    if found is None or found.at is not None:  # --token=x is an assignment
        return None
    return f"{m.group('opt')}{m.group('gap')}{m.group('quote')}{marker('option-value')}"


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def looks_random(text: str) -> bool:
    """Mixed case and digits (so hex digests stay readable) and at least 4.3 bits per character."""
    return (any(c.islower() for c in text) and any(c.isupper() for c in text) and any(c.isdigit() for c in text)
            and _entropy(text) >= 4.3)


def _high_entropy(m: re.Match[str]) -> str | None:
    text = m.group()
    if re.match(r"sha(?:1|256|384|512)-", text):  # integrity hashes in a lockfile diff are public
        return None
    return marker("high-entropy") if looks_random(text) else None


def _masked(m: re.Match[str]) -> str | None:
    new = _in_text(m.group())
    return None if new == m.group() else new


# A key block with no END (the program died printing it, or the text ends inside it): its body, line
# by line (a line break as text, `\\n`, too: a key inside a JSON string), the PEM headers of an
# encrypted key and blank lines with it; the first other line ends it.
_BREAK = r"(?:\r?\n|(?:\\r)?\\n)"
_PEM_BODY = ("(?:" + _BREAK + r"(?:[A-Za-z0-9+/=]{1,128}|(?:Proc-Type|DEK-Info|Comment):[^\r\n\\]{0,256}|[ \t]{0,8})"
             r"(?=" + _BREAK + r"|\Z|[\"']))*")

URL_RULES: tuple[Rule, ...] = (
    # A URL with a user (and password): through mask_url, which also masks its secret parameters.
    Rule("url-credentials", re.compile(_URL + r"[^\s/?#@\"'<>`]{1,512}@" + _URL_CHARS + "{0,8192}+"), _masked),
    Rule("url-query", re.compile(_URL + _URL_CHARS + "{1,8192}+"), _masked),
)
# Most specific first: what an earlier rule replaced is a marker a later one does not match.
RULES: tuple[Rule, ...] = (
    Rule("private-key", re.compile(  # up to the END line, never past the next BEGIN (linear over many BEGINs)
        r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:(?:(?!-----BEGIN ).){0,65536}?"
        r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|" + _PEM_BODY + ")", re.S)),
    *URL_RULES,
    Rule("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b")),
    Rule("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{40,255})\b")),
    Rule("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,255}\b")),
    Rule("slack-token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,255}\b")),
    Rule("stripe-key", re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,255}\b")),
    Rule("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    Rule("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    Rule("solari-key", re.compile(r"\bslr_(?:live|test)_[A-Za-z0-9_-]{8,255}")),
    Rule("llm-api-key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,255}")),
    Rule("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{8,4096}")),
    Rule("bearer-token", re.compile(r"\b(?P<scheme>Bearer|Basic|Token)\s{1,8}[A-Za-z0-9._~+/-]{8,4096}={0,3}"),
         lambda m: f"{m.group('scheme')} {marker('bearer-token')}"),
    # A webhook URL is its own credential (whoever has it posts): the path after the service's base.
    Rule("webhook-url", re.compile(
        r"(?<=://)(?P<base>hooks\.slack\.com/(?:services|workflows|triggers)|(?:ptb\.|canary\.)?discord(?:app)?\.com"
        r"/api/webhooks|outlook\.office\.com/webhook|[A-Za-z0-9-]{1,63}\.webhook\.office\.com/webhookb2|"
        r"hooks\.zapier\.com/hooks/catch|api\.telegram\.org)/(?!<redacted:)[^\s\"'<>`]{6,2048}+"),
        lambda m: f"{m.group('base')}/{marker('webhook-url')}"),
    # .netrc's `password X` (also `login NAME password X` on one line), at a line's start (after a
    # diff's marker) or after `machine`/`login`/`account NAME`: a word alone, with no `=` or `:`.
    Rule("netrc-password", re.compile(
        r"(?:^[ +-]?[ \t]{0,64}|(?<![^\s])(?:machine|default|login|account)[ \t]{1,8}[^\s]{1,256}[ \t]{1,8})"
        r"(?:password|passwd)[ \t]{1,8}", re.M), lambda m: m.group() + marker("netrc-password"),
        re.compile(r"(?!<redacted:)[^\s]{1,4096}+")),
    # NAME=value, "name": "value", name: value, --name=value, when secret_name says so; the name is
    # kept. A quoted value goes to its closing quote ('open sesame'), an unquoted one to a blank. A
    # name is tried once per run of name characters; the value is taken whole (possessive). What the
    # rules before replaced ("Authorization: Bearer <redacted:...>") is left to them.
    Rule("assignment", re.compile(
        r"(?<![A-Za-z0-9_.-])(?P<name>[A-Za-z0-9_.-]{1,128})(?P<sep>[\"']?[ \t]{0,8}[:=][ \t]{0,8})(?P<quote>[\"']?)"),
        _assignment, re.compile(
            r"(?!<redacted:|" + re.escape(SUPPLIED) + "|(?:" + _VAR_REF + r")(?![A-Za-z0-9_]))(?:"
            r"(?<=\")(?![^\"\n]{0,4096}?<redacted:)[^\"\n]{4,4096}+(?=\")|"
            r"(?<=')(?![^'\n]{0,4096}?<redacted:)[^'\n]{4,4096}+(?=')|"
            r"[^\s\"'<>,;]{4,}+(?![ \t]{1,8}<redacted:))")),
    # `--password hunter2`, `-storepass x` as text (a `set -x` trace, a command echoed in a log): as
    # mask_options reads argv, without the program (so no short option: `-p` is not -p everywhere).
    Rule("option-value", re.compile(
        r"(?:(?<![A-Za-z0-9_.-])|(?<=^-))(?P<opt>--?[A-Za-z][A-Za-z0-9_.-]{1,64})(?P<gap>[ \t]{1,8})(?P<quote>[\"']?)",
        re.M),  # after a removed diff line's `-` too
        _option, re.compile(
            r"(?!<redacted:|-|" + re.escape(SUPPLIED) + "|(?:" + _VAR_REF + r")(?![A-Za-z0-9_]))(?:"
            r"(?<=\")[^\"\n]{1,4096}+(?=\")|(?<=')[^'\n]{1,4096}+(?=')|[^\s\"'<>,;]{1,4096}+)")),
    Rule("high-entropy", re.compile(r"(?<![A-Za-z0-9+_=-])[A-Za-z0-9+_=-]{32,}"), _high_entropy),
)


def apply(rule: Rule, text: str, counts: Counter[str] | None = None) -> str:
    """`text` with the rule's matches replaced (each counted under the rule's id)."""
    out: list[str] = []
    done = look = 0
    while (m := rule.pattern.search(text, look)) is not None:
        new = marker(rule.id) if rule.replace is None else rule.replace(m)
        end = m.end()
        if new is not None and rule.value is not None:
            value = rule.value.match(text, end)
            new, end = (new, value.end()) if value is not None else (None, end)
        if new is None or new == m.group():
            look = m.end() + (m.end() == m.start())
            continue
        out += [text[done:m.start()], new]
        done = look = end
        if counts is not None:
            counts[rule.id] += 1
    return "".join(out) + text[done:] if out else text


def scrub(text: str, counts: Counter[str] | None = None) -> str:
    """``text`` with every match of the rules replaced."""
    for rule in RULES:
        text = apply(rule, text, counts)
    return text


def scrub_bytes(data: bytes) -> bytes:
    """The same over bytes that may not be UTF-8 (bytes that are not stay as they were)."""
    return scrub(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")

