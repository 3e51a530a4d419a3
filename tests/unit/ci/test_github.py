"""Finding the capsules attached to the issues a PR closes, and upserting the PR's comments,
against GitHub API responses served on loopback (GitHub is unreachable here)."""
from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from runner.ci.github import GitHub, GitHubError, attachment_links, closing_references
from runner.cli.main import main as replay_main

RECORDED = Path(__file__).parent / "recorded"
CAPSULE = Path(__file__).parents[2] / "fixtures/examples/codeinstances/fetch-greeting.json"


class Api:
    """GitHub's REST API as recorded: GET answers from recorded/*.json, writes are kept."""

    def __init__(self) -> None:
        self.responses: dict[str, Any] = json.loads((RECORDED / "pr-42.json").read_text())
        self.writes: list[tuple[str, str, Any]] = []
        self.auth: dict[str, str | None] = {}
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v.replace("{api}", api.url))
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                api.auth[self.path] = self.headers.get("Authorization")
                if self.path.startswith("/files/"):
                    name = self.path.rsplit("/", 1)[-1]
                    data = CAPSULE.read_bytes() if name == "fetch-greeting.json" else b'{"not": "a capsule"}'
                    return self._send(200, data)
                entry = api.responses.get(self.path)
                if entry is None:
                    return self._send(404, b'{"message": "Not Found"}')
                self._send(200, json.dumps(entry["body"]).replace("{api}", api.url).encode(), entry.get("headers"))

            def _write(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                api.writes.append((self.command, self.path, json.loads(self.rfile.read(length))))
                self._send(201 if self.command == "POST" else 200, b"{}")

            do_POST = do_PATCH = _write

        return Handler

    def __enter__(self) -> Api:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def api() -> Iterator[Api]:
    with Api() as a:
        yield a


def client(api: Api) -> GitHub:
    return GitHub("acme/app", token="s3cret", api_url=api.url, server_url="https://github.com")


def test_closing_keywords_as_github_reads_them() -> None:
    text = ("Fixes #12, closes acme/app#13 and Resolved: https://github.com/acme/app/issues/14.\n"
            "Refs #15; fixes other/repo#16; prefix#17; fixed #12")
    assert closing_references(text, "acme/app") == [12, 13, 14, 12]


def test_attachment_links_are_json_files_once_each() -> None:
    texts = ["see [capsule](https://github.com/user-attachments/files/1/capsule.json) and "
             "https://example.com/log.txt", "again https://github.com/user-attachments/files/1/capsule.json."]
    assert attachment_links(texts) == ["https://github.com/user-attachments/files/1/capsule.json"]


def test_find_capsules_of_the_closed_issues_over_paginated_lists(api: Api, tmp_path: Path) -> None:
    gh = client(api)
    assert gh.closing_issues(42) == [7, 9]  # #7 in the body, #9 in the second page of commits
    found = gh.find_capsules(42, tmp_path)
    saved = [a for a in found if a.path is not None]
    assert [(a.issue, a.path.name) for a in saved] == [(7, "issue7-1-fetch-greeting.json")]  # type: ignore[union-attr]
    assert saved[0].path.read_bytes() == CAPSULE.read_bytes()  # type: ignore[union-attr]
    skipped = {a.url.rsplit("/", 1)[-1]: a.why for a in found if a.path is None}
    assert skipped.keys() == {"notes.json", "gone.json"}
    assert skipped["notes.json"].startswith("not a capsule") and "failed" in skipped["gone.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["issue7-1-fetch-greeting.json"]


def test_the_token_goes_to_the_api_only(api: Api, tmp_path: Path) -> None:
    client(api).find_capsules(42, tmp_path)
    assert api.auth["/repos/acme/app/pulls/42"] == "Bearer s3cret"
    # the attachment is served from this loopback address too, so it counts as the API host here;
    # a link to another host gets no token:
    gh = GitHub("acme/app", token="s3cret", api_url="https://api.github.com")
    assert not gh._trusted(f"{api.url}/files/1/fetch-greeting.json") and gh._trusted("https://github.com/x")


def test_a_comment_is_created_then_a_rerun_updates_it(api: Api, tmp_path: Path) -> None:
    gh = client(api)
    new = "<!-- replay-ci capsule=cafe01 state=fixed -->\n### fixed"
    assert gh.upsert_comment(42, new) == "created"
    assert api.writes[-1] == ("POST", "/repos/acme/app/issues/42/comments", {"body": new})
    again = "<!-- replay-ci capsule=beef02 state=not-fixed -->\n### still failing"
    assert gh.upsert_comment(42, again) == "updated"  # beef02's comment is on the second page
    assert api.writes[-1] == ("PATCH", "/repos/acme/app/issues/comments/9002", {"body": again})


def test_the_cli_finds_and_posts(api: Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GITHUB_API_URL", api.url)
    monkeypatch.setenv("GITHUB_TOKEN", "s3cret")
    assert replay_main(["ci", "find", "--repo", "acme/app", "--pr", "42", "--out", str(tmp_path / "c")]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [str(tmp_path / "c" / "issue7-1-fetch-greeting.json")] and "skipped" in err
    comment = tmp_path / "c.md"
    comment.write_text("<!-- replay-ci capsule=beef02 state=fixed -->\nok")
    assert replay_main(["ci", "post", "--repo", "acme/app", "--pr", "42", str(comment)]) == 0
    assert api.writes[-1][0] == "PATCH" and "s3cret" not in capsys.readouterr().err


def test_an_unreachable_api_is_one_line_exit_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:9")
    assert replay_main(["ci", "find", "--repo", "acme/app", "--pr", "1"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("replay: error: GitHub: GET http://127.0.0.1:9/repos/acme/app/pulls/1 failed")
    assert replay_main(["ci", "find", "--repo", "not a repo", "--pr", "1"]) == 2
    with pytest.raises(GitHubError):
        GitHub("acme/app", api_url="http://127.0.0.1:9", timeout_s=2).closing_issues(1)
