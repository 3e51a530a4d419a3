"""Helpers replay runs inside the build (never capsule-provided code), with the image's venv Python:

  pin PINS DRIFT MODE LOCKED   compare the venv's installed versions with the recorded ones
                               (PINS: name==version lines), add the differences to the drift
                               report; MODE=pin installs the recorded version of every drifted
                               package over the locked environment. A recorded package the
                               lockfile does not install, or one it installs from elsewhere than
                               an index, is listed as unpinned with the reason (the report's
                               fidelity rows). LOCKED=no (no lockfile was installed): the
                               recorded versions are all there is, whatever MODE.
  pip ARGS...                   pip install ARGS (a requirements file), each download kept for later builds

Downloads happen with the index, installs without it (--no-index). A package published only as
source (an sdist: GPyOpt 1.2.6 has no wheel) is built into a wheel right after its download,
while the index is still there for its build requirements (setuptools, wheel, whatever its
build-system names); the install then takes that wheel. Built wheels are kept per interpreter
and libc (WHEELS/built/<cache tag>-<libc>), since a compiled one fits only those.
  uv-sync DRIFT                install the uv project itself now that its source is here, leaving
                               the pinned (drifted) packages as they are: a plain `uv sync` would
                               put the lockfile's versions back.

Kept to Python 3.9 (the oldest venv Python a base suite gives).
"""
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from importlib import metadata


def normal(name):
    """PEP 503: the names the plan uses."""
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_versions():
    return {normal(d.metadata["Name"]): d.version for d in metadata.distributions() if d.metadata["Name"]}


def direct_sources():
    """Where the lockfile installed each distribution from when it was not an index, by name."""
    out = {}
    for d in metadata.distributions():
        text = d.read_text("direct_url.json") if d.metadata["Name"] else None
        try:
            kind = source_kind(json.loads(text)) if text else None
        except ValueError:
            kind = None
        if kind:
            out[normal(d.metadata["Name"])] = kind
    return out


VCS = ("git", "hg", "bzr", "svn")


def source_kind(info):
    """What PEP 610's direct_url.json says a distribution was installed from (None: an index, as
    pip, uv and poetry install registry packages without one). Only the kind: a URL may hold a token."""
    if not isinstance(info, dict):
        return None
    vcs = info.get("vcs_info")
    if isinstance(vcs, dict):
        return f"a {vcs.get('vcs')} checkout" if vcs.get("vcs") in VCS else "a VCS checkout"
    if isinstance(info.get("dir_info"), dict):
        return "a local directory (editable)" if info["dir_info"].get("editable") is True else "a local directory"
    return "an archive URL" if isinstance(info.get("archive_info"), dict) else None


def decide(recorded, installed, source):
    """One recorded package against the locked venv: {"ok"}, {"pin"} (the drift pip moves back to
    the recorded version), or {"why"} it is not applied. `installed`: the venv's version (None: not
    installed); `source`: where it came from when not an index (direct_sources)."""
    if installed is None:
        return {"why": "the lockfile does not install it"}
    if installed == recorded:
        return {"ok": True}
    if source:
        return {"why": f"the lockfile installs {installed} from {source}, not from an index: "
                       f"pip would replace it with the index's {recorded}"}
    return {"pin": True}


def read_pins(path):
    pins = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            name, sep, version = line.strip().partition("==")
            if sep:
                pins[normal(name)] = version
    return pins


def write_drift(path, mode, drift, unpinned):
    """Merge into the report the node helper may have written first (one file for the image)."""
    report = {"mode": mode, "drift": [], "unpinned": []}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    report["drift"] = [d for d in report.get("drift", []) if d.get("ecosystem") != "python"] + drift
    report["unpinned"] = [u for u in report.get("unpinned", []) if u.get("ecosystem") != "python"] + unpinned
    report["python_mode"] = mode
    tmp = path + ".part"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
    os.replace(tmp, path)


# pip's own HTTP cache keeps nothing here (the responses come back uncacheable through the
# proxy), so downloads are kept as files, in pip's cache dir: a BuildKit cache mount, or
# removed after the step by the classic build. pip checks the index's hashes when downloading.
WHEELS = "/root/.cache/pip/replay-files"


SDIST_SUFFIXES = (".tar.gz", ".zip", ".tar.bz2", ".tgz")
_FETCHED = re.compile(r"^\s*(?:Saved|File was already downloaded)\s+(\S.*?)\s*$")


def fetched_files(output):
    """The files a `pip download` chose for this interpreter, from its own lines."""
    return [os.path.abspath(m.group(1)) for m in map(_FETCHED.match, output.splitlines()) if m]


def built_dir():
    """Where wheels built here are kept: one folder per interpreter and libc."""
    libc = "-".join(p for p in platform.libc_ver() if p) or "nolibc"
    return os.path.join(WHEELS, "built", re.sub(r"[^A-Za-z0-9._-]", "_", f"{sys.implementation.cache_tag}-{libc}"))


def stem(filename):
    """An sdist's or a wheel's name and version, as one normalised string ("gpyopt-1-2-6")."""
    base = os.path.basename(filename)
    if base.endswith(".whl"):
        base = "-".join(base.split("-")[:2])
    else:
        base = next((base[:-len(sfx)] for sfx in SDIST_SUFFIXES if base.endswith(sfx)), base)
    return normal(base)


def build_sdists(pip, files, into):
    """A wheel for each sdist among `files` that `into` lacks, built with the index at hand."""
    have = {stem(f) for f in os.listdir(into)} if os.path.isdir(into) else set()
    for sdist in (f for f in files if f.endswith(SDIST_SUFFIXES) and stem(f) not in have):
        print(f"replay: building {os.path.basename(sdist)} (published as source only) into a wheel", flush=True)
        os.makedirs(into, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=into) as tmp:  # whole wheels only: another build may read `into`
            if subprocess.run([*pip, "wheel", "--no-deps", "--find-links", WHEELS, "-w", tmp, sdist]).returncode:
                return False
            for wheel in os.listdir(tmp):
                os.replace(os.path.join(tmp, wheel), os.path.join(into, wheel))
    return True


def pip_cached(args):
    """pip install ARGS, each file downloaded once into WHEELS and installed from there; an sdist
    among them built into a wheel first (the offline install could not fetch its build requirements)."""
    loud = [sys.executable, "-m", "pip", "--disable-pip-version-check"]  # its "Saved FILE" lines are read
    pip = [*loud, "-q"]
    got = subprocess.run([*loud, "download", "-d", WHEELS, "--find-links", WHEELS, *args], stdout=subprocess.PIPE,
                         text=True)
    if got.returncode != 0:
        sys.stdout.write(got.stdout)
        return False
    built = built_dir()
    if not build_sdists(pip, fetched_files(got.stdout), built):
        return False
    links = ["--find-links", built] if os.path.isdir(built) else []
    return subprocess.run([*pip, "install", "--no-index", *links, "--find-links", WHEELS, *args]).returncode == 0


def pip_install(specs):
    if not specs:
        return
    shown = " ".join(specs[:5]) + (f" and {len(specs) - 5} more" if len(specs) > 5 else "")
    print(f"replay: installing {len(specs)} recorded Python package(s): {shown}", flush=True)
    if not pip_cached(["--no-deps", *specs]):
        fail(f"pip install of the recorded versions failed: {shown}")


def pin(pins_path, drift_path, mode, locked):
    pins = read_pins(pins_path)
    if locked != "yes":
        write_drift(drift_path, mode, [], [])
        pip_install([f"{n}=={v}" for n, v in sorted(pins.items())])
        return
    have, sources = installed_versions(), direct_sources()
    drift, unpinned, to_pin = [], [], []
    for n, v in sorted(pins.items()):
        installed = have.get(n)
        if installed is not None and installed != v:  # listed, whether it can be pinned or not
            drift.append({"name": n, "recorded": v, "installed": installed, "ecosystem": "python"})
        got = decide(v, installed, sources.get(n))
        if "why" in got:
            # Left alone (a package the lockfile does not install: the project itself, say), as npm's
            # helper does; the report names it, with the reason.
            unpinned.append({"name": n, "recorded": v, "why": got["why"], "ecosystem": "python",
                             **({"installed": installed} if installed is not None else {})})
        elif "pin" in got:
            to_pin.append((n, v))
    write_drift(drift_path, mode, drift, unpinned)
    for u in unpinned:
        print(f"replay: not pinned: {u['name']} {u['recorded']}: {u['why']}", flush=True)
    if mode == "pin" and to_pin:
        pip_install([f"{n}=={v}" for n, v in to_pin])
        have = installed_versions()
        left = [n for n, v in to_pin if have.get(n) != v]
        if left:
            fail(f"pinning left {', '.join(left)} at another version than the capsule's")
    print(f"replay: {len(drift)} Python package(s) drifted from the capsule's resolved versions", flush=True)


def uv_sync(drift_path):
    keep = []
    if os.path.exists(drift_path):
        with open(drift_path, encoding="utf-8") as f:
            report = json.load(f)
        if report.get("python_mode") == "pin":  # the pinned ones: those left unpinned are the lockfile's
            left = {u.get("name") for u in report.get("unpinned", []) if u.get("ecosystem") == "python"}
            keep = [d["name"] for d in report.get("drift", []) if d.get("ecosystem") == "python"
                    and d["name"] not in left]
    cmd = ["uv", "sync", "--frozen", "--inexact"]
    for name in keep:
        cmd += ["--no-install-package", name]
    if subprocess.run(cmd).returncode != 0:
        fail("uv sync of the project failed")


def fail(message):
    # One `replay:` line the build's error names, instead of a traceback.
    print(f"replay: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


def main(argv):
    if argv[:1] == ["pin"] and len(argv) == 5:
        pin(*argv[1:])
    elif argv[:1] == ["pip"] and len(argv) > 1:
        if not pip_cached(argv[1:]):
            fail("pip install of the requirements failed")
    elif argv[:1] == ["uv-sync"] and len(argv) == 2:
        uv_sync(argv[1])
    else:
        print(f"py-deps.py: bad arguments {argv}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
