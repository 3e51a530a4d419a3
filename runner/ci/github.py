"""The pull-request job's side of GitHub: the capsules attached to the issues a PR closes,
and one comment per capsule on the PR (found again by its hidden marker, so a rerun
updates it instead of adding another).

Plain urllib against the REST API (GITHUB_API_URL, default https://api.github.com;
GITHUB_TOKEN). Closing issues are read as GitHub links them: the closing keywords
(close/fix/resolve and their forms) followed by `#N`, `OWNER/REPO#N` of this repository,
or the issue's URL, in the PR's body and its commits' messages. An attachment is a link
in the issue's body or comments whose file name ends in `.json` and that replay reads
as a capsule. The token goes only to the API and to this GitHub server (attachments of a
private repository need it), never to another host an issue links to.

    replay ci find --repo OWNER/REPO --pr N --out DIR   # prints one capsule path a line
    replay ci post --repo OWNER/REPO --pr N FILE...     # create or update the comments
"""
from __future__ import annotations

import json
import os
import re
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CapsuleError, ReplayError, UsageError
from ..report.comment import read_marker

MAX_ATTACHMENT = 32 * 1024 * 1024  # a capsule is small; refuse to fill a runner's disk
_KEYWORDS = r"(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)"
_URL = re.compile(r"https?://[^\s)<>\]\"']+")
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


class GitHubError(ReplayError):
    """GitHub did not answer as expected (exit 3)."""


@dataclass(frozen=True)
class Attachment:
    issue: int
    url: str
    path: Path | None  # where it was saved, None when skipped
    why: str = ""  # why it was skipped


class GitHub:
    def __init__(self, repo: str, token: str | None = None, api_url: str | None = None,
                 server_url: str | None = None, timeout_s: float = 30.0) -> None:
        if not _REPO.match(repo):
            raise UsageError(f"--repo {repo!r}: expected OWNER/REPO")
        self.repo, self.token, self.timeout_s = repo, token, timeout_s
        self.api = (api_url or os.environ.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/")
        self.server = (server_url or os.environ.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/")

    # -- HTTP ---------------------------------------------------------------------
    def _trusted(self, url: str) -> bool:
        host = urllib.parse.urlsplit(url).netloc
        return host in {urllib.parse.urlsplit(self.api).netloc, urllib.parse.urlsplit(self.server).netloc}

    def _request(self, method: str, url: str, body: Any = None, accept: str = "application/vnd.github+json",
                 limit: int | None = None) -> tuple[bytes, Any]:
        headers = {"Accept": accept, "User-Agent": "replay-ci", "X-GitHub-Api-Version": "2022-11-28"}
        if self.token and self._trusted(url):
            headers["Authorization"] = f"Bearer {self.token}"
        data = json.dumps(body).encode() if body is not None else None
        if data is not None:
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                raw = resp.read(limit + 1 if limit else -1)
                if limit and len(raw) > limit:
                    raise GitHubError(f"{url}: larger than {limit} bytes")
                return raw, resp.headers
        except OSError as exc:  # URLError, HTTPError, timeouts; the token is never in the message
            raise GitHubError(f"GitHub: {method} {url} failed ({exc})") from exc

    def _pages(self, path: str) -> Iterator[Any]:
        """Every item of a paginated list (the Link header's rel="next")."""
        url: str | None = f"{self.api}{path}{'&' if '?' in path else '?'}per_page=100"
        while url:
            raw, headers = self._request("GET", url)
            yield from json.loads(raw)
            url = next((m.group(1) for m in re.finditer(r'<([^>]+)>;\s*rel="next"', headers.get("Link") or "")), None)

    def _get(self, path: str) -> Any:
        return json.loads(self._request("GET", f"{self.api}{path}")[0])

    # -- closing issues ---------------------------------------------------------------
    def closing_issues(self, pr: int) -> list[int]:
        """Issues of this repository the PR closes, in the order first named."""
        texts = [self._get(f"/repos/{self.repo}/pulls/{pr}").get("body") or ""]
        texts += [c["commit"]["message"] for c in self._pages(f"/repos/{self.repo}/pulls/{pr}/commits")]
        found: list[int] = []
        for text in texts:
            for n in closing_references(text, self.repo, self.server):
                if n not in found:
                    found.append(n)
        return found

    def issue_texts(self, issue: int) -> list[str]:
        body = self._get(f"/repos/{self.repo}/issues/{issue}").get("body") or ""
        return [body, *(c.get("body") or "" for c in self._pages(f"/repos/{self.repo}/issues/{issue}/comments"))]

    def find_capsules(self, pr: int, out: Path) -> list[Attachment]:
        """Download each issue's capsule attachments into out/; the ones skipped say why."""
        out.mkdir(parents=True, exist_ok=True)
        result: list[Attachment] = []
        for issue in self.closing_issues(pr):
            for k, url in enumerate(attachment_links(self.issue_texts(issue)), 1):
                result.append(self._fetch(issue, k, url, out))
        return result

    def _fetch(self, issue: int, k: int, url: str, out: Path) -> Attachment:
        name = re.sub(r"[^A-Za-z0-9._-]", "_", urllib.parse.unquote(url.rsplit("/", 1)[-1]))[-80:]
        path = out / f"issue{issue}-{k}-{name}"
        try:
            raw, _ = self._request("GET", url, accept="application/octet-stream", limit=MAX_ATTACHMENT)
        except GitHubError as exc:
            return Attachment(issue, url, None, str(exc))
        path.write_bytes(raw)
        try:
            from ..capsules import read_capsule

            read_capsule(path)
        except CapsuleError as exc:
            path.unlink()
            return Attachment(issue, url, None, f"not a capsule ({exc.problem})")
        return Attachment(issue, url, path)

    # -- comments ---------------------------------------------------------------------
    def upsert_comment(self, pr: int, body: str) -> str:
        """Update the PR's comment for this capsule (same marker), or create it; "updated" / "created"."""
        mine = read_marker(body)
        if mine is None:
            raise UsageError("the comment has no replay marker (write it with `replay CAPSULE --comment FILE`)")
        for c in self._pages(f"/repos/{self.repo}/issues/{pr}/comments"):
            theirs = read_marker(c.get("body") or "")
            if theirs is not None and theirs[0] == mine[0]:
                self._request("PATCH", f"{self.api}/repos/{self.repo}/issues/comments/{c['id']}", {"body": body})
                return "updated"
        self._request("POST", f"{self.api}/repos/{self.repo}/issues/{pr}/comments", {"body": body})
        return "created"


def closing_references(text: str, repo: str, server: str = "https://github.com") -> list[int]:
    """Issue numbers of `repo` after a closing keyword: #N, OWNER/REPO#N, or the issue URL."""
    own = re.escape(repo)
    url = re.escape(server.rstrip("/")) + "/" + own + "/issues/"
    pattern = rf"(?i)\b{_KEYWORDS}:?\s+(?:#|{own}#|{url})(\d+)\b"
    return [int(n) for n in re.findall(pattern, text)]


def attachment_links(texts: Sequence[str]) -> list[str]:
    """Links whose file name ends in .json, in order, once each."""
    seen: list[str] = []
    for text in texts:
        for url in _URL.findall(text):
            url = url.rstrip(".,;:")
            if urllib.parse.urlsplit(url).path.lower().endswith(".json") and url not in seen:
                seen.append(url)
    return seen
