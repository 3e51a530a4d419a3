"""A seeded corpus of planted secrets for `replay capture` (issue 39): 37 formats (34 shapes, and
3 ways of splitting one over two lines) in 8 places.

Each run of `Corpus.runs()` is one capture: the secrets it plants in the environment's recorded
values, argv, the output, the diff (added and removed lines; a secret split over two lines), the
untracked file names, the branch, the remote and the working directory, and every planted
secret (`Planted.secret`) as the bytes that must not reach the capsule. The formats are written
from the services' own shapes, not from replay's rules, so the corpus measures the rules.
"""
from __future__ import annotations

import base64
import math
import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field

ALNUM = string.ascii_letters + string.digits
LOWER = string.ascii_lowercase + string.digits
TEXT_PLACES = ("env", "argv", "output", "diff")
NAME_PLACES = ("untracked", "branch", "cwd")
PLACES = (*TEXT_PLACES, *NAME_PLACES, "remote")
ENV_NAMES = ("MY_CRED", "DB_PASS", "DATABASE_URL")  # secret-named: their values are the environment's secrets


@dataclass(frozen=True)
class Planted:
    format: str
    place: str
    secret: str  # what must not be in the capsule, nor either half of it when it is long


@dataclass
class Run:
    """One capture: what to plant where, and the secrets it plants."""
    env_secrets: dict[str, str]  # secret-named variables set for the run
    env_values: list[str] = field(default_factory=list)  # recorded with --include-env APP_NOTE_<i>
    argv: list[str] = field(default_factory=list)
    output: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)  # lines the diff adds
    removed: list[str] = field(default_factory=list)  # lines the diff removes (committed, then deleted)
    untracked: list[str] = field(default_factory=list)
    branch: str = "main"
    remote: str = "https://git.example.com/o/r.git"
    cwd: str = "."
    planted: list[Planted] = field(default_factory=list)


class _Gen:
    def __init__(self, rng: random.Random, env: dict[str, str]) -> None:
        self.rng, self.env = rng, env

    def pick(self, chars: str, n: int) -> str:
        return "".join(self.rng.choice(chars) for _ in range(n))

    def mixed(self, n: int) -> str:
        """Random letters of both cases and digits, at least one of each (a random token's shape)."""
        while True:
            s = self.pick(ALNUM, n)
            if any(c.islower() for c in s) and any(c.isupper() for c in s) and any(c.isdigit() for c in s):
                return s

    def dense(self, n: int) -> str:
        """A random token as the high-entropy rule is documented to find one: at least 4.3 bits a
        character (uniformly random 40-character tokens fall below 1 time in 3,000; 32-character ones
        1 in 25: docs/security.md)."""
        while True:
            s = self.mixed(n)
            counts = [s.count(c) for c in set(s)]
            if -sum(k / n * math.log2(k / n) for k in counts) >= 4.3:
                return s

    def words(self) -> str:  # a secret with no telling shape: only its name or place says so
        return f"{self.pick(string.ascii_lowercase, 5)}-{self.pick(LOWER, 7)}-{self.pick(string.digits, 3)}"

    def env_value(self, name: str) -> str:
        value = self.env[name]
        return value.split(":")[2].split("@")[0] if name == "DATABASE_URL" else value


Format = Callable[[_Gen], tuple[str, str]]  # -> (the secret, the text that holds it)


def _token(prefix: str, n: int, chars: str = ALNUM) -> Format:
    return lambda g: (s := prefix + (g.mixed(n) if chars == ALNUM else g.pick(chars, n)), s)


def _jwt(g: _Gen) -> tuple[str, str]:
    head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    body = base64.urlsafe_b64encode(f'{{"sub":"{g.pick(LOWER, 10)}"}}'.encode()).decode().rstrip("=")
    s = f"{head}.{body}.{g.pick(ALNUM + '-_', 43)}"
    return s, s


def _env(name: str) -> Format:
    return lambda g: (v := g.env_value(name), v)


# Tokens by their shape: each is also a name (a branch, a file, a folder) and a URL's password.
NAME_FORMATS: dict[str, Format] = {
    "github-classic": _token("ghp_", 36), "github-app": _token("ghs_", 36),
    "github-fine-grained": lambda g: (s := f"github_pat_{g.mixed(22)}_{g.mixed(59)}", s),
    "gitlab-pat": _token("glpat-", 20), "slack-bot": lambda g: (s := f"xoxb-{g.pick(string.digits, 11)}-"
                                                                    f"{g.pick(string.digits, 12)}-{g.mixed(24)}", s),
    "stripe-live": _token("sk_live_", 24), "google-api": _token("AIza", 35, ALNUM + "-_"),
    "npm": _token("npm_", 36), "aws-key-id": _token("AKIA", 16, string.ascii_uppercase + string.digits),
    "anthropic": _token("sk-ant-api03-", 40), "openai-project": _token("sk-proj-", 40),
    "jwt": _jwt, "solari": _token("slr_live_", 20), "high-entropy": lambda g: (s := g.dense(40), s),
    "env-cred": _env("MY_CRED"), "env-db-pass": _env("DB_PASS"), "env-dsn-password": _env("DATABASE_URL"),
}


def _pem(g: _Gen) -> tuple[str, str]:
    body = [g.pick(ALNUM + "+/", 64) for _ in range(3)]
    return body[1], "\n".join(["-----BEGIN RSA PRIVATE KEY-----", *body, "-----END RSA PRIVATE KEY-----"])


def _basic(g: _Gen) -> tuple[str, str]:
    s = base64.b64encode(f"ci:{g.words()}".encode()).decode()
    return s, f"Authorization: Basic {s}"


def _text(template: str, make: Callable[[_Gen], str]) -> Format:
    return lambda g: (s := make(g), template.format(s))


# Secrets in text: by their shape, their name, their place in a URL, a header, a file format.
TEXT_FORMATS: dict[str, Format] = {
    **NAME_FORMATS,
    "private-key": _pem,
    "bearer-header": _text("Authorization: Bearer {}", lambda g: g.pick(LOWER, 32)),
    "basic-header": _basic,
    "url-password": _text("https://deploy:{}@registry.example.com/v2/", lambda g: g.words()),
    "url-token-user": _text("https://{}@github.com/o/r.git", lambda g: g.pick(LOWER, 30)),
    "url-query-token": _text("https://api.example.com/v1/items?page=2&access_token={}", lambda g: g.words()),
    "azure-sas": _text("https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&sp=r&sig={}",
                       lambda g: g.mixed(30) + "%3D"),
    "slack-webhook": _text("https://hooks.slack.com/services/{}",
                           lambda g: f"T{g.pick(string.ascii_uppercase, 8)}/B{g.pick(string.ascii_uppercase, 10)}/"
                                     f"{g.mixed(24)}"),
    "discord-webhook": _text("https://discord.com/api/webhooks/{}",
                             lambda g: f"{g.pick(string.digits, 18)}/{g.pick(ALNUM + '-_', 68)}"),
    "teams-webhook": _text("https://contoso.webhook.office.com/webhookb2/{}",
                           lambda g: f"{g.pick('0123456789abcdef', 32)}/IncomingWebhook/{g.pick('0123456789abcdef', 32)}"),
    "netrc-line": _text("machine api.example.com login ci password {}", lambda g: g.words()),
    "netrc-password": _text("password {}", lambda g: g.words()),
    "dotenv-assignment": _text("API_KEY={}", lambda g: g.words()),
    "json-member": _text('{{"client_secret": "{}"}}', lambda g: g.words()),
    "yaml-member": _text("db_password: {}", lambda g: g.words()),
    "option-pair": _text("--password {}", lambda g: g.words()),
    "option-equals": _text("--api-token={}", lambda g: g.words()),
}


def _split(g: _Gen, which: int) -> tuple[str, str]:
    """A secret cut over two lines: a shell continuation, a string concatenated, a wrapped value."""
    if which == 0:
        s = "ghp_" + g.mixed(36)
        return s, f'export GH_HOOK="{s[:18]}\\\n{s[18:]}"'
    if which == 1:
        s = "sk_live_" + g.mixed(24)
        return s, f'stripe = ("{s[:14]}"\n          "{s[14:]}")'
    s = g.env_value("MY_CRED")
    return s, f"cred {s[:8]}\n{s[8:]} end"


class Corpus:
    """`runs` captures planting every text format in every text place `copies` times, and a
    name format in each name place and a remote per run."""

    def __init__(self, seed: int = 2026, runs: int = 18, copies: int = 2) -> None:
        self.seed, self.n, self.copies = seed, runs, copies

    def runs(self) -> list[Run]:
        rng = random.Random(self.seed)
        out = []
        for r in range(self.n):
            env = {"MY_CRED": f"mc{r}-{''.join(rng.choice(LOWER) for _ in range(12))}",
                   "DB_PASS": f"dbp{r}-{''.join(rng.choice(LOWER) for _ in range(12))}",
                   "DATABASE_URL": f"postgres://app:pgpw{r}-{''.join(rng.choice(LOWER) for _ in range(12))}"
                                   "@db.internal:5432/app"}
            run = Run(env_secrets=env)
            self._plant(run, r, _Gen(rng, env))
            out.append(run)
        return out

    def _plant(self, run: Run, r: int, g: _Gen) -> None:
        combos = [(f, p) for f in TEXT_FORMATS for p in TEXT_PLACES]
        every = max(1, self.n // self.copies)  # each combination in `copies` runs
        for k, (name, place) in enumerate(combos):
            if k % every == r % every:
                secret, text = TEXT_FORMATS[name](g)
                self._put(run, place, text, k)
                run.planted.append(Planted(name, place, secret))
        secret, text = _split(g, r % 3)
        run.added += text.split("\n")
        run.planted.append(Planted(f"split-{('continuation', 'concatenation', 'wrapped')[r % 3]}", "diff", secret))
        names = list(NAME_FORMATS)
        for place, offset in (("branch", 0), ("untracked", 5), ("untracked", 11), ("cwd", 3)):
            fmt = names[(r + offset) % len(names)]
            secret, text = NAME_FORMATS[fmt](g)
            if place == "branch":
                run.branch = f"fix/{text}"
            elif place == "cwd":
                run.cwd = f"work/{text}"
            else:
                run.untracked.append(f"{text}.{('txt', 'log')[offset == 11]}")
            run.planted.append(Planted(fmt, place, secret))
        self._remote(run, r, g)

    @staticmethod
    def _put(run: Run, place: str, text: str, k: int) -> None:
        if place == "env":
            run.env_values.append(text)
        elif place == "argv":
            run.argv.append(text)
        elif place == "output":
            run.output += text.split("\n")
        elif k % 2:
            run.removed += text.split("\n")
        else:
            run.added += text.split("\n")

    @staticmethod
    def _remote(run: Run, r: int, g: _Gen) -> None:
        kind = ("url-password", "url-token-user", "url-query-token", "azure-sas", "gitlab-pat")[r % 5]
        if kind == "gitlab-pat":
            secret, _ = NAME_FORMATS["gitlab-pat"](g)
            run.remote = f"https://oauth2:{secret}@gitlab.example.com/o/r.git"
        elif kind in ("url-password", "url-token-user"):
            secret, run.remote = TEXT_FORMATS[kind](g)
        else:
            secret = g.words()
            param = "private_token" if kind == "url-query-token" else "sig"
            run.remote = f"https://git.example.com/o/r.git?{param}={secret}"
        run.planted.append(Planted(f"remote-{kind}", "remote", secret))


def leaks(data: bytes, planted: list[Planted]) -> list[Planted]:
    """The planted secrets whose bytes (or, for one of 16 characters or more, either half) are in `data`."""
    found = []
    for p in planted:
        pieces = [p.secret]
        if len(p.secret) >= 16:
            half = len(p.secret) // 2
            pieces += [p.secret[:half], p.secret[half:]]
        if any(piece.encode() in data for piece in pieces):
            found.append(p)
    return found
