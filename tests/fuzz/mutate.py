"""Hypothesis strategies that mutate a valid capsule document, one class of damage each.

A mutation works on the parsed document (a JSON-like tree): it picks one node by
its path and replaces, removes or adds something there. Text-level damage
(duplicate or case-variant members, truncation, YAML aliases and big integers)
works on the serialised text. Every strategy draws from a fixed list of hostile
values plus small generated ones, so a derandomized run is the same run everywhere.
"""
from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

Path_ = tuple[str | int, ...]
Doc = Any

# Strings a hostile or broken recorder might write, beside generated ones.
HOSTILE_TEXT = (
    "\ud800", "x\udfffy", "\udc00\ud800", "\x1b[2J\x1b[H", "\x1b]0;pwned\x07", "\x00", "a\nb", "tab\there",
    "\u202eevil\u202c", "\u2066x\u2069", "\x7f\x85\x9b", "2.\u00b3\u2076", "\u0663.\u0661\u0662", "\uff11\uff12",
    "\U0001f600", "e\u0301" * 50, "\ufeff", "\ufffd", "", " ", "-", "--upload-pack=touch /tmp/x", "$(touch /tmp/x)",
    "`id`", "'\"", "{{ 7*7 }}", "{% raw %}", "../../etc/passwd", "/etc/passwd", "~", "sub\nRUN touch /pwned",
    "C:\\x", "\\", "a" * 300, "%s%n", "NaN", "1e400", "-0", "0x10", "\u0130", "\u017f", "ß",
)
HOSTILE_NUMBERS: tuple[Any, ...] = (
    10**400, -(10**400), 2**63, 2**64, -(2**63) - 1, 10**30, 1.7976931348623157e308, 5e-324, -0.0, 0.1, -1,
    3.5, 0, 1,
)
# Literal numbers json.dumps never writes: spliced into the text as written.
HOSTILE_NUMBER_LITERALS = ("1e400", "-1e400", "1" + "0" * 4000, "1" + "0" * 5000, "1E-400", "1.0000000000000000001",
                           "0.0e0", "-0", "12345678901234567890123456789",
                           "[" * 5000 + "]" * 5000, '{"a":' * 3000 + "1" + "}" * 3000, "[" * 100_000)
HOSTILE_VALUES: tuple[Any, ...] = (None, True, False, 0, -1, 1.5, "", "x", [], {}, [None], {"": None}, [[]], {"a": {}})

_KEY = st.sampled_from(("", "x", "argv", "__proto__", "constructor", "\x1b", "\ud800", "a.b", "[0]", "A" * 200))


def paths(doc: Doc) -> list[Path_]:
    """Every node of the tree by its path (the root is ``()``)."""
    found: list[Path_] = []
    stack: list[tuple[Path_, Any]] = [((), doc)]
    while stack:
        where, value = stack.pop()
        found.append(where)
        if isinstance(value, dict):
            stack.extend(((*where, k), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend(((*where, i), v) for i, v in enumerate(value))
    return sorted(found, key=lambda p: tuple(map(str, p)))


def get(doc: Doc, where: Path_) -> Any:
    for step in where:
        doc = doc[step]
    return doc


def replaced(doc: Doc, where: Path_, value: Any) -> Doc:
    if not where:
        return value
    out = copy.deepcopy(doc)
    get(out, where[:-1])[where[-1]] = value
    return out


def removed(doc: Doc, where: Path_) -> Doc:
    out = copy.deepcopy(doc)
    if where:
        del get(out, where[:-1])[where[-1]]
    return out


def _strings(doc: Doc) -> list[Path_]:
    return [p for p in paths(doc) if isinstance(get(doc, p), str)] or [()]


def _members(doc: Doc) -> list[Path_]:
    return [p for p in paths(doc) if p and isinstance(get(doc, p[:-1]), dict)] or [()]


def _containers(doc: Doc) -> list[Path_]:
    return [p for p in paths(doc) if isinstance(get(doc, p), (dict, list))]


def hostile_text() -> st.SearchStrategy[str]:
    pieces = st.sampled_from(HOSTILE_TEXT) | st.text(max_size=8)
    return st.lists(pieces, min_size=1, max_size=4).map("".join)


def nested(depth: int) -> Any:
    value: Any = "deep"
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


# --- tree mutations: each a strategy of new documents -------------------------------


def types(doc: Doc) -> st.SearchStrategy[Doc]:
    """A node replaced by a value of another JSON type."""
    return st.tuples(st.sampled_from(paths(doc)), st.sampled_from(HOSTILE_VALUES) | hostile_text()).map(
        lambda t: replaced(doc, *t))


def missing(doc: Doc) -> st.SearchStrategy[Doc]:
    """A member or list item removed (a required one, often)."""
    where = [p for p in paths(doc) if p]
    return st.sampled_from(where).map(lambda p: removed(doc, p))


def extra(doc: Doc) -> st.SearchStrategy[Doc]:
    """A member the format does not define, added to some object or list."""
    def add(where: Path_, key: str, value: Any) -> Doc:
        out = copy.deepcopy(doc)
        node = get(out, where)
        if isinstance(node, dict):
            node[key] = value
        else:
            node.append(value)
        return out
    return st.tuples(st.sampled_from(_containers(doc)), _KEY, st.sampled_from(HOSTILE_VALUES) | hostile_text()).map(
        lambda t: add(*t))


def unicode(doc: Doc) -> st.SearchStrategy[Doc]:
    """A string replaced by (or extended with) lone surrogates, controls, bidi marks, odd digits."""
    def change(where: Path_, text: str, append: bool) -> Doc:
        old = get(doc, where)
        return replaced(doc, where, (old + text) if append and isinstance(old, str) else text)
    return st.tuples(st.sampled_from(_strings(doc)), hostile_text(), st.booleans()).map(lambda t: change(*t))


def keys(doc: Doc) -> st.SearchStrategy[Doc]:
    """A member renamed to hostile text (env names, package names, map keys are capsule text too)."""
    def rename(where: Path_, key: str) -> Doc:
        out = copy.deepcopy(doc)
        parent = get(out, where[:-1])
        parent[key] = parent.pop(where[-1])
        return out
    return st.tuples(st.sampled_from(_members(doc)), hostile_text()).map(lambda t: rename(*t))


def huge_numbers(doc: Doc) -> st.SearchStrategy[Doc]:
    """A node replaced by a number no recorder writes (beyond float, beyond 64 bits)."""
    return st.tuples(st.sampled_from(paths(doc)), st.sampled_from(HOSTILE_NUMBERS)).map(lambda t: replaced(doc, *t))


def huge_strings(doc: Doc) -> st.SearchStrategy[Doc]:
    """A string replaced by a long one (up to 2 MB), maybe of many lines."""
    sizes = st.sampled_from((300, 5_000, 70_000, 300_000, 2_000_000))
    unit = st.sampled_from(("a", "a\n", "\x1b[", "é", "1."))
    return st.tuples(st.sampled_from(_strings(doc)), sizes, unit).map(
        lambda t: replaced(doc, t[0], (t[2] * (t[1] // len(t[2])))[: t[1]]))


def nesting(doc: Doc) -> st.SearchStrategy[Doc]:
    """A node replaced by values nested 2 to 400 levels deep (deeper: ``number_literals``, as text)."""
    return st.tuples(st.sampled_from(paths(doc)), st.sampled_from((2, 30, 63, 65, 199, 201, 400))).map(
        lambda t: replaced(doc, t[0], nested(t[1])))


def many(doc: Doc) -> st.SearchStrategy[Doc]:
    """A list or object grown to many entries (work must stay bounded)."""
    def grow(where: Path_, n: int) -> Doc:
        node = get(doc, where)
        if isinstance(node, dict):
            big: Any = {f"K{i}": copy.deepcopy(next(iter(node.values()), "v")) for i in range(n)}
        else:
            big = [copy.deepcopy(node[0] if node else "v") for _ in range(n)]
        return replaced(doc, where, big)
    targets = _containers(doc)
    return st.tuples(st.sampled_from(targets), st.sampled_from((100, 3_000, 20_000))).map(lambda t: grow(*t))


TREE_CLASSES: dict[str, Callable[[Doc], st.SearchStrategy[Doc]]] = {
    "types": types, "missing members": missing, "extra members": extra, "unicode": unicode, "member names": keys,
    "huge numbers": huge_numbers, "huge strings": huge_strings, "nested values": nesting, "many entries": many,
}


# --- JSON text mutations -------------------------------------------------------------


def json_text(doc: Doc) -> str:
    return json.dumps(doc, indent=1)  # ensure_ascii: lone surrogates become "\ud800" escapes, as a recorder's would


_MEMBER = re.compile(r'^(\s*)"([^"\\]+)": (.*?),?$', re.M)


def duplicates(text: str) -> st.SearchStrategy[str]:
    """A member line repeated (same name), with the same or another value."""
    lines = [m for m in _MEMBER.finditer(text)]

    def dup(i: int, other: bool) -> str:
        m = lines[i]
        value = '"other"' if other else m.group(3).rstrip(",")
        insert = f'{m.group(1)}"{m.group(2)}": {value},\n'
        return text[: m.start()] + insert + text[m.start():]
    return st.tuples(st.integers(0, len(lines) - 1), st.booleans()).map(lambda t: dup(*t))


def case_variants(text: str) -> st.SearchStrategy[str]:
    """A member name spelled in another case, replacing or beside the original."""
    lines = [m for m in _MEMBER.finditer(text) if m.group(2).lower() != m.group(2).upper()]

    def vary(i: int, beside: bool, how: int) -> str:
        m = lines[i]
        name = m.group(2)
        variant = (name.upper(), name.lower(), name.swapcase(), name[:1].upper() + name[1:])[how]
        if variant == name:
            variant = name.swapcase()
        line = f'{m.group(1)}"{variant}": {m.group(3).rstrip(",")},\n'
        if beside:
            return text[: m.start()] + line + text[m.start():]
        return text[: m.start()] + line.rstrip(",\n") + ("," if m.group(0).endswith(",") else "") + text[m.end():]
    return st.tuples(st.integers(0, len(lines) - 1), st.booleans(), st.integers(0, 3)).map(lambda t: vary(*t))


def number_literals(text: str) -> st.SearchStrategy[str]:
    """A scalar replaced by a literal json.dumps never writes: 1e400, 5,000 digits, 100,000 open brackets."""
    spots = [m for m in re.finditer(r'(?<=": )(-?[0-9][0-9.eE+-]*|null|true|false)', text)]

    def put(i: int, literal: str) -> str:
        m = spots[i]
        return text[: m.start()] + literal + text[m.end():]
    return st.tuples(st.integers(0, len(spots) - 1), st.sampled_from(HOSTILE_NUMBER_LITERALS)).map(lambda t: put(*t))


def raw_bytes(text: str) -> st.SearchStrategy[bytes]:
    """The file truncated, or a byte overwritten with garbage (invalid UTF-8, NUL, a BOM)."""
    data = text.encode("utf-8")

    def damage(at: int, kind: int) -> bytes:
        if kind == 0:
            return data[:at]
        junk = (b"\xff", b"\x00", b"\xef\xbb\xbf", b"\xc3", b"\xed\xa0\x80", b"\\", b'"', b"{", b"]")[kind % 9]
        return data[:at] + junk + data[at + (kind > 4):]
    return st.tuples(st.integers(0, len(data)), st.integers(0, 9)).map(lambda t: damage(*t))


# --- YAML text mutations (NovaFabric) ------------------------------------------------


def yaml_aliases(text: str) -> st.SearchStrategy[str]:
    """An anchor and aliases (the billion laughs, of any width and depth), a merge key, or an
    anchor on one scalar aliased at another."""
    def bomb(width: int, depth: int) -> str:
        names = [f"l{i}" for i in range(depth + 1)]
        rows = [f"{names[0]}: &{names[0]} [{', '.join(['x'] * width)}]"]
        rows += [f"{c}: &{c} [{', '.join([f'*{p}'] * width)}]" for p, c in zip(names, names[1:])]
        return text + "\n" + "\n".join(rows) + "\n"
    spots = [m for m in re.finditer(r"(?<=: )(\S.*)$", text, re.M)] or [None]

    def anchored(i: int, j: int) -> str:
        a, b = spots[i % len(spots)], spots[j % len(spots)]
        if a is None or b is None or a.start() == b.start():
            return text + "\nzz_alias: &anchor {k: v}\nzz_use: *anchor\n"
        first, second = sorted((a, b), key=lambda m: m.start())
        return (text[: first.start()] + "&anchor " + first.group() + text[first.end(): second.start()] + "*anchor"
                + text[second.end():])
    return st.one_of(
        st.sampled_from((text + "\nzz_alias: &anchor {k: v}\nzz_use: *anchor\n",
                         text.replace("host:\n", "host_defaults: &h {os: linux}\nhost:\n  <<: *h\n", 1))),
        st.tuples(st.integers(1, 12), st.integers(1, 10)).map(lambda t: bomb(*t)),
        st.tuples(st.integers(0, len(spots) - 1), st.integers(0, len(spots) - 1)).map(lambda t: anchored(*t)),
    )


def yaml_scalars(text: str) -> st.SearchStrategy[str]:
    """A scalar value replaced by YAML's odd forms: huge ints, .inf, tags, timestamps, octal, sexagesimal."""
    spots = [m for m in re.finditer(r"(?<=: )(\S.*)$", text, re.M)]
    forms = ("9" * 5000, "9" * 4301, "-" + "9" * 400, "0x" + "f" * 300, ".inf", "-.inf", ".nan", "0o777", "1_000",
             "12:30:45", "2026-01-01", "2026-01-01 00:00:00 +99:00", "!!binary aGVsbG8=", "!!python/object:os.system x",
             "!!set {a, b}", "!!omap [a: 1]", "~", "yes", "on", "'2.\u00b3\u2076'", '"\\ud800"', '"\\e[2J"', "|\n  x",
             "!custom x", "[a, b", "{a: b")

    def put(i: int, form: str) -> str:
        m = spots[i]
        return text[: m.start()] + form + text[m.end():]
    return st.tuples(st.integers(0, len(spots) - 1), st.sampled_from(forms)).map(lambda t: put(*t))


def yaml_duplicates(text: str) -> st.SearchStrategy[str]:
    """A top-level member repeated, or repeated in another case."""
    tops = [m for m in re.finditer(r"^([a-z_]+):(.*)$", text, re.M)]

    def dup(i: int, upper: bool) -> str:
        m = tops[i]
        name = m.group(1).upper() if upper else m.group(1)
        return text + f"\n{name}: 1\n"
    return st.tuples(st.integers(0, len(tops) - 1), st.booleans()).map(lambda t: dup(*t))


# --- values a format decodes: base64, clock times -----------------------------------


_B64_JUNK = (" ", "\n", "\t", "!", "@", "*", ".", "-", "_", "=", "\u00e9", "\ud800", "\x00", "\x1b")


def broken_base64(original: str) -> st.SearchStrategy[str]:
    """A base64 value damaged the ways a recorder or a hand edit breaks one: padding dropped or
    doubled, a character outside the alphabet, cut short, the url-safe alphabet, a lone surrogate,
    a megabyte of it; or one of a few fixed bad values."""
    fixed = st.sampled_from(("", "a", "ab=", "a===", "@@@@", "====", "-_-_", "\ud800A==", "aGV sbG8=", "aGVs\nbG8="))
    n = max(len(original), 1)

    def damage(kind: int, at: int, junk: str) -> str:
        at %= n
        return (
            original.rstrip("="),
            original + "=",
            original + "===",
            original[:at] + junk + original[at:],
            original[:at] + junk + original[at + 1:],
            original[:at],
            original.replace("+", "-").replace("/", "_").rstrip("="),
            original.swapcase(),
            original * 2,
            "data:;base64," + original,
            (original * (1_000_000 // n + 1))[:1_000_000],
        )[kind]
    return fixed | st.tuples(st.integers(0, 10), st.integers(0, n - 1), st.sampled_from(_B64_JUNK)).map(
        lambda t: damage(*t))


CLOCKS = (
    "2026-10-13T08:00:00.000000000+05:45", "2026-10-13T08:00:00.000000000+14:00", "2026-10-13T08:00:00.000000000-12:00",
    "2026-10-13T08:00:00.000000000+23:59", "2026-10-13T08:00:00.000000000-23:59", "2026-10-13T08:00:00.000000000+24:00",
    "2026-10-13T08:00:00.000000000+99:99", "2026-10-13T08:00:00.000000000-00:00", "2026-10-13T08:00:00+05:30",
    "2026-10-13T08:00:00.000000000+0530", "2026-10-13T08:00:00.000000000+5:30", "2026-10-13T08:00:00.000000000 +05:30",
    "2026-10-13t08:00:00.000000000z", "2026-10-13 08:00:00Z", "2026-10-13T08:00:00Z", "2026-10-13T08:00:00.0000000000001Z",
    "2016-12-31T23:59:60.000000000Z", "2026-02-30T00:00:00.000000000Z", "2026-10-13T24:00:00.000000000Z",
    "0000-01-01T00:00:00.000000000Z", "0001-01-01T00:00:00.000000000+01:00", "9999-12-31T23:59:59.999999999-23:59",
    "10000-01-01T00:00:00.000000000Z", "-2026-10-13T08:00:00Z", "+002026-10-13T08:00:00Z", "1969-12-31T23:59:59Z",
    "\uff12\uff10\uff12\uff16-10-13T08:00:00Z", "\u0662\u0660\u0662\u0666-10-13T08:00:00Z", "2026-10-13T08:00:00Z\n",
    "2026-10-13T08:00:00Z\x00", "2026-10-13T08:00:00\ud800Z", "2026-10-13T08:00:00.000000000Z[Europe/Paris]",
    "1760342400", "1e400", "", "now", "2026-W42-2T08:00:00Z", "2026-286T08:00:00Z",
)


def hostile_clock() -> st.SearchStrategy[str]:
    """An RFC 3339-looking time: unusual UTC offsets, leap seconds, days that do not exist, far
    years, long fractions, other digits; fixed ones and generated ones."""
    def made(year: int, month: int, day: int, hour: int, minute: int, second: int, frac: int, sign: str,
             off_h: int, off_m: int) -> str:
        fraction = ("." + "1" * frac) if frac else ""
        zone = "Z" if sign == "Z" else f"{sign}{off_h:02d}:{off_m:02d}"
        return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}{fraction}{zone}"
    generated = st.builds(
        made, st.sampled_from((0, 1, 1969, 1970, 2026, 2038, 9999, 10000, 99999)), st.integers(0, 13),
        st.integers(0, 32), st.integers(0, 25), st.integers(0, 60), st.integers(0, 61), st.sampled_from((0, 3, 9, 10, 30)),
        st.sampled_from(("Z", "+", "-")), st.integers(0, 30), st.integers(0, 99))
    return st.sampled_from(CLOCKS) | generated


def case_keys(doc: Doc) -> st.SearchStrategy[Doc]:
    """A mapping key at any depth spelled in another case, instead of or beside the original."""
    spots = [p for p in _members(doc) if p and isinstance(p[-1], str) and p[-1].lower() != p[-1].upper()] or [()]

    def vary(where: Path_, how: int, beside: bool) -> Doc:
        if not where:
            return doc
        out = copy.deepcopy(doc)
        parent = get(out, where[:-1])
        name = str(where[-1])
        variant = (name.upper(), name.swapcase(), name[:1].upper() + name[1:], name.title().replace("_", ""))[how]
        if variant == name:
            variant = name.upper() if name != name.upper() else name.lower()
        value = parent[name] if beside else parent.pop(name)
        parent[variant] = copy.deepcopy(value)
        return out
    return st.tuples(st.sampled_from(spots), st.integers(0, 3), st.booleans()).map(lambda t: vary(*t))


def yaml_surrogates(text: str) -> st.SearchStrategy[str]:
    """A YAML scalar (or key) holding a lone UTF-16 surrogate: as a double-quoted escape, as a
    pair split by other text, or as the raw 3 bytes (written with surrogatepass: not UTF-8)."""
    spots = [m for m in re.finditer(r"(?<=: )(\S.*)$", text, re.M)]
    keys = [m for m in re.finditer(r"^(\s*)([A-Za-z_]+):", text, re.M)]
    forms = ('"\\ud800"', '"x\\udfffy"', '"\\udc00\\ud800"', '"\\ud83d\\ude00"', '"\\ud83d-\\ude00"', "\ud800",
             "'a\udfffb'", '"\\U0000d800"', '"\\ud800\\n\\e[2J"', '"2.\\ud800"', "x\ud83d")

    def put(i: int, form: str, on_key: bool) -> str:
        if on_key and keys:
            m = keys[i % len(keys)]
            return text[: m.start(2)] + form.strip("'\"") + text[m.end(2):] if form[0] not in "'\"" else \
                text[: m.start(2)] + form + text[m.end(2):]
        m = spots[i % len(spots)]
        return text[: m.start()] + form + text[m.end():]
    return st.tuples(st.integers(0, max(len(spots), len(keys)) - 1), st.sampled_from(forms), st.booleans()).map(
        lambda t: put(*t))
