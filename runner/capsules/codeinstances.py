"""Reader for CodeInstances files (``codeinstances/0``): one run with its HTTP calls,
clock and random values, identified by the SHA-256 of its canonical form.

Refusals the format demands (another version, a duplicated member, a known member
spelled in another case) raise in read() and verify() alike; an id that does not
match the content is verify()'s answer, not a read error.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import CapsuleError, UnsupportedVersion
from .jsonload import (
    INTEGER, LIST, NUMBER, OBJECT, STRING, STRINGS, Kind, Shape, canonical, describe, load, member_path,
    one_of, sniff, find_lone_surrogate, replace_lone_surrogates,
)
from .model import (
    Body, Capsule, Command, Format, HttpCall, HttpError, HttpRequest, HttpResponse, Provenance, RecordedValue,
)
from . import limits
from .scope import Scope
from .verification import VerifyResult

FORMAT = Format.CODEINSTANCES
SCOPE = Scope(frozenset({"http", "values"}), ("command:argv", "command:host_cwd", "http:*"))
PREFIX = "codeinstances/"
VERSION = "codeinstances/0"
ERROR_KINDS = ("dns", "connect-refused", "connect-timeout", "reset", "tls", "timeout")

# The members each object may hold; another spelling of one of them is refused.
TOP = ("format", "id", "command", "result", "calls", "values")
COMMAND = ("argv", "cwd")
RESULT = ("exitCode", "signal", "durationMs", "stdout", "stderr")
CALL = ("seq", "atMs", "request", "response", "error")
REQUEST = ("method", "url", "headers", "body")
RESPONSE = ("status", "reason", "headers", "body")
ERROR = ("kind", "message")
VALUE = ("seq", "kind", "value")
BODY = ("text", "base64")

HEADERS = Kind(
    "a list of [name, value] string pairs",
    lambda v: isinstance(v, list) and all(STRINGS.test(h) and len(h) == 2 for h in v),
)
_CLOCK = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{9}Z")
_ID = re.compile(r"sha256:[0-9a-f]{64}")


def detect(path: Path) -> Any | None:
    doc = sniff(path)
    return doc if claims(doc) else None


def claims(doc: Any) -> bool:
    """A parsed JSON document that says it is a CodeInstances file."""
    return _claims_format(doc)


def read(path: Path, parsed: Any = None) -> Capsule:
    """The run as the model; CapsuleError naming the first bad member (the id is not checked)."""
    shape = Shape()
    capsule = _Reader(path, shape).capsule(_document(path, parsed))
    shape.raise_errors(path)
    return capsule


def verify(path: Path, trust_keys: Sequence[Path] = (), parsed: Any = None) -> VerifyResult:
    """Shapes, the id against the canonical form, then consistency of what was read.

    CodeInstances files are not signed (yet), so ``trust_keys`` has nothing to check.
    """
    doc = _document(path, parsed)
    shape = Shape()
    capsule = _Reader(path, shape).capsule(doc)
    well_formed = not shape.errors
    _check_id(doc, shape)
    checks = ["JSON syntax", "format version", "duplicate and case-variant members", "structure and types", "id"]
    if well_formed:
        _check(capsule, shape)
        checks.append("consistency")
    return VerifyResult(format=FORMAT.value, path=str(path), problems=tuple(shape.problems), checks=tuple(checks))


def compute_id(doc: dict[str, Any]) -> str:
    """``sha256:`` + the SHA-256 of the canonical form (the document without its top-level id)."""
    body = {key: value for key, value in doc.items() if key != "id"}
    return "sha256:" + hashlib.sha256(canonical(body)).hexdigest()


def _claims_format(doc: Any) -> bool:
    if not isinstance(doc, dict) or not doc or next(iter(doc)) != "format":
        return False
    return isinstance(doc["format"], str) and doc["format"].startswith(PREFIX)


def _document(path: Path, parsed: Any) -> dict[str, Any]:
    doc = load(path) if parsed is None else parsed
    if not _claims_format(doc):
        raise CapsuleError(path, f'not a CodeInstances file (its first member must be "format": "{VERSION}")')
    found: str = doc["format"]
    if found != VERSION:
        number = found[len(PREFIX):]
        if re.fullmatch(r"[0-9]+", number) and number.strip("0"):
            raise UnsupportedVersion(path, found, VERSION, "codeinstances")
        raise CapsuleError(path, f"format: unknown version {found[:80]!r} (this replay understands {VERSION})")
    limits.check(path, doc, limits.CODEINSTANCES_RULES, limits.CODEINSTANCES_LONG)  # before any work that grows with them
    # Go's decoder, which CodeInstances uses, reads a lone surrogate escape as U+FFFD; so does
    # the canonical form, so the id is unchanged, and no unencodable text reaches a build or a terminal.
    checked: dict[str, Any] = doc
    if find_lone_surrogate(doc) is not None:
        checked = replace_lone_surrogates(doc)
    return checked


class _Reader:
    """Builds the model from a document, refusing case variants and recording shape problems."""

    def __init__(self, path: Path, shape: Shape) -> None:
        self.path = path
        self.s = shape

    def members(self, obj: dict[str, Any], where: str, known: tuple[str, ...]) -> None:
        folded = {name.casefold(): name for name in known}
        for key in obj:
            if key not in known and key.casefold() in folded:
                raise CapsuleError(
                    self.path, f"{member_path(where, key)}: the member {folded[key.casefold()]!r} spelled in another case"
                )

    def obj(self, parent: Any, where: str, key: str, known: tuple[str, ...], *, nullable: bool = False,
            optional: bool = False) -> Any:
        value = self.s.get(parent, where, key, OBJECT, nullable=nullable, optional=optional)
        if value is not None:
            self.members(value, member_path(where, key), known)
        return value

    def items(self, parent: Any, key: str, known: tuple[str, ...]) -> list[tuple[str, dict[str, Any]]]:
        """The objects of a top-level list, each with its JSON path."""
        found = []
        for i, item in enumerate(self.s.get(parent, "", key, LIST) or ()):
            where = f"{key}[{i}]"
            if isinstance(item, dict):
                self.members(item, where, known)
                found.append((where, item))
            else:
                self.s.error(where, f"expected an object, got {describe(item)}")
        return found

    def capsule(self, doc: dict[str, Any]) -> Capsule:
        self.members(doc, "", TOP)
        s = self.s
        recorded_id = s.get(doc, "", "id", STRING)
        cmd = self.obj(doc, "", "command", COMMAND)
        argv = tuple(s.get(cmd, "command", "argv", STRINGS) or ())
        cwd = s.get(cmd, "command", "cwd", STRING)
        command = self.command(argv, cwd, doc)  # members read in document order, for the report
        calls = tuple(self.call(item, w) for w, item in self.items(doc, "calls", CALL))
        values = tuple(v for w, item in self.items(doc, "values", VALUE) if (v := self.value(item, w)))
        clocks = [v.value for v in values if v.kind == "clock"]
        return Capsule(
            provenance=Provenance(
                format=FORMAT,
                format_version=VERSION.removeprefix(PREFIX),
                path=str(self.path),
                created_at=clocks[0] if clocks else None,
                capsule_id=recorded_id,
            ),
            command=command,
            http_calls=calls,
            values=values,
            working_directory=cwd,
        )

    def command(self, argv: tuple[str, ...], cwd: str | None, doc: dict[str, Any]) -> Command:
        s, w = self.s, "result"
        res = self.obj(doc, "", "result", RESULT)
        exit_code = s.get(res, w, "exitCode", INTEGER, nullable=True)
        signal = s.get(res, w, "signal", STRING, nullable=True)
        duration = s.get(res, w, "durationMs", NUMBER)
        return Command(
            argv=argv,
            cwd=cwd,
            cwd_is_host_path=True,
            exit_code=None if exit_code is None else int(exit_code),
            signal=signal,
            outcome="pass" if exit_code == 0 and signal is None else "fail",
            duration_ms=None if duration is None else float(duration),
            stdout=self.body(res, w, "stdout"),
            stderr=self.body(res, w, "stderr"),
        )

    def body(self, parent: Any, where: str, key: str) -> Body | None:
        body = self.obj(parent, where, key, BODY, nullable=True)
        if body is None:
            return None
        w = member_path(where, key)
        text = self.s.get(body, w, "text", STRING, optional=True)
        data = self.s.get(body, w, "base64", STRING, optional=True)
        if ("text" in body) == ("base64" in body):
            self.s.error(w, 'expected exactly one of "text" and "base64"')
        elif data is not None and not _is_base64(data):
            self.s.error(member_path(w, "base64"), "not valid base64")
        return Body(text=text, base64=data)

    def call(self, item: dict[str, Any], w: str) -> HttpCall:
        s = self.s
        request = self.obj(item, w, "request", REQUEST)
        rw = member_path(w, "request")
        if (item.get("response") is None) == (item.get("error") is None):
            s.error(w, 'expected exactly one of "response" and "error"')
        seq, at_ms = s.get(item, w, "seq", INTEGER), s.get(item, w, "atMs", NUMBER)
        return HttpCall(
            seq=int(seq or 0),
            at_ms=None if at_ms is None else float(at_ms),
            request=HttpRequest(
                method=s.get(request, rw, "method", STRING) or "",
                url=s.get(request, rw, "url", STRING) or "",
                headers=_pairs(s.get(request, rw, "headers", HEADERS)),
                body=self.body(request, rw, "body"),
            ),
            response=self.response(item, w),
            error=self.error(item, w),
        )

    def response(self, item: dict[str, Any], w: str) -> HttpResponse | None:
        response = self.obj(item, w, "response", RESPONSE, nullable=True, optional=True)
        if response is None:
            return None
        rw, s = member_path(w, "response"), self.s
        return HttpResponse(
            status=int(s.get(response, rw, "status", INTEGER) or 0),
            reason=s.get(response, rw, "reason", STRING) or "",
            headers=_pairs(s.get(response, rw, "headers", HEADERS)),
            body=self.body(response, rw, "body"),
        )

    def error(self, item: dict[str, Any], w: str) -> HttpError | None:
        error = self.obj(item, w, "error", ERROR, nullable=True, optional=True)
        if error is None:
            return None
        ew = member_path(w, "error")
        kind = self.s.get(error, ew, "kind", one_of(*ERROR_KINDS))
        message = self.s.get(error, ew, "message", STRING)
        return HttpError(kind=kind or "dns", message=message or "")

    def value(self, item: dict[str, Any], w: str) -> RecordedValue | None:
        seq = self.s.get(item, w, "seq", INTEGER)
        kind = self.s.get(item, w, "kind", one_of("clock", "random"))
        value = self.s.get(item, w, "value", STRING)
        if seq is None or kind is None or value is None:
            return None
        return RecordedValue(seq=int(seq), kind=kind, value=value)


def _pairs(headers: list[list[str]] | None) -> tuple[tuple[str, str], ...]:
    return tuple((name, value) for name, value in headers or ())


def _is_base64(text: str) -> bool:
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


# --- verify only -----------------------------------------------------------------


def _check_id(doc: dict[str, Any], s: Shape) -> None:
    computed = compute_id(doc)
    recorded = doc.get("id")
    if not isinstance(recorded, str):
        s.error("id", f"no id to check; the content hashes to {computed}")
    elif not _ID.fullmatch(recorded):
        s.error("id", f'expected "sha256:" and 64 lowercase hex characters, got {describe(recorded)}')
    elif recorded != computed:
        s.error("id", f"does not match the content: recorded {recorded}, computed {computed}")


def _check(c: Capsule, s: Shape) -> None:
    cmd = c.command
    if cmd.exit_code is None and cmd.signal is None:
        s.error("result", "neither exitCode nor signal is set")
    elif cmd.exit_code is not None and cmd.signal is not None:
        s.add("warning", "result", "both exitCode and signal are set")
    if cmd.duration_ms is not None and cmd.duration_ms < 0:
        s.error("result.durationMs", "negative")
    _check_order("calls", [call.seq for call in c.http_calls], s)
    _check_order("values", [value.seq for value in c.values], s)
    last_at = 0.0
    for i, call in enumerate(c.http_calls):
        at = call.at_ms if call.at_ms is not None else last_at
        if at < last_at:
            s.add("warning", f"calls[{i}].atMs", "earlier than the call before it")
        last_at = at
        if call.response is not None and not 100 <= call.response.status <= 599:
            s.error(f"calls[{i}].response.status", f"{call.response.status} is not an HTTP status")
    for i, value in enumerate(c.values):
        if value.kind == "clock" and not _CLOCK.fullmatch(value.value):
            s.error(f"values[{i}].value", "expected an RFC 3339 UTC time with nanoseconds")
        if value.kind == "random" and not _is_base64(value.value):
            s.error(f"values[{i}].value", "not valid base64")


def _check_order(where: str, seqs: list[int], s: Shape) -> None:
    previous = 0
    for i, seq in enumerate(seqs):
        if seq <= previous:
            s.error(f"{where}[{i}].seq", f"{seq} does not follow {previous} (seq counts up from 1)")
        previous = seq
