"""Collecting capsules from folders, list files and capsules (all three formats)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runner.errors import UsageError
from runner.farm.collect import collect
from runner.farm.ids import content_id
from tests.examples import NOVA, TWIN

from tests.unit.farm.builders import write_instance


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "caps"
    (root / "team" / "twin").mkdir(parents=True)
    shutil.copy(TWIN, root / "team" / "twin" / "ny.json")
    shutil.copytree(NOVA, root / "nova" / "run-1")
    write_instance(root / "ci" / "hello.json", ["python3", "-c", "print(1)"], "1\n")
    (root / "ci" / "package.json").write_text('{"name": "not-a-capsule"}')
    (root / "ci" / "broken.json").write_text('{"twin": 1, "command": ')  # claims twin, cut short
    (root / ".git").mkdir()
    shutil.copy(TWIN, root / ".git" / "hidden.json")
    (root / "nova" / "run-1" / "inputs" / "extra.json").write_text('{"twin": 1}')  # inside a capsule: its own file
    return root


def test_a_folder_is_searched_recursively_for_all_three_formats(folder: Path) -> None:
    entries = collect([folder]).entries
    got = sorted((Path(e.path).relative_to(folder).as_posix(), e.format) for e in entries)
    assert got == [("ci/broken.json", "twin"), ("ci/hello.json", "codeinstances"), ("nova/run-1", "novafabric"),
                   ("team/twin/ny.json", "twin")]


def test_the_same_capsule_twice_is_collected_once_under_its_content_hash(tmp_path: Path, folder: Path) -> None:
    shutil.copytree(folder / "nova" / "run-1", tmp_path / "renamed-copy")
    entries = collect([folder / "nova" / "run-1", tmp_path / "renamed-copy", folder / "nova" / "run-1"]).entries
    assert len(entries) == 1
    assert entries[0].also_at == (str(tmp_path / "renamed-copy"),)
    assert entries[0].capsule_id == content_id(tmp_path / "renamed-copy")


def test_a_changed_capsule_has_another_id(tmp_path: Path) -> None:
    a = write_instance(tmp_path / "a.json", ["python3", "-c", "print(1)"], "1\n")
    before = content_id(a)
    write_instance(a, ["python3", "-c", "print(1)"], "2\n")
    assert content_id(a) != before


def test_a_list_file_names_capsules_and_folders_relative_to_itself(tmp_path: Path, folder: Path) -> None:
    listing = tmp_path / "nightly.txt"
    listing.write_text(f"# the nightly set\n{folder.name}/ci/hello.json\n\n{folder / 'nova'}\nmissing.json\n")
    got = [Path(e.path).name for e in collect([listing]).entries]
    assert got == ["hello.json", "run-1", "missing.json"]  # a missing entry is listed (judged broken), not fatal


def test_a_missing_source_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file or directory"):
        collect([tmp_path / "nope"])
    with pytest.raises(UsageError, match="at least one SOURCE"):
        collect([])


def test_a_list_naming_a_fifo_or_a_device_neither_blocks_nor_reads_forever(tmp_path: Path) -> None:
    """A list file (perhaps from the capsules' repository) naming a FIFO, /dev/zero or a link to it:
    each is collected as a capsule path, to be judged broken, without reading it."""
    import os
    import subprocess
    import sys

    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    (tmp_path / "zero").symlink_to("/dev/zero")
    listing = tmp_path / "nightly.txt"
    listing.write_text("fifo.json\nzero.json\nzero\n/dev/zero\n")
    # its own process, with memory capped and a timeout: a regression must fail, not hang or eat the machine
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30));"
            "from pathlib import Path; from runner.farm.collect import collect;"
            "print([(Path(e.path).name, e.format) for e in collect([Path(sys.argv[1])]).entries])")
    proc = subprocess.run([sys.executable, "-c", code, str(listing)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == str([("fifo.json", "unknown"), ("zero.json", "unknown"), ("zero", "unknown"),
                                       ("zero", "unknown")])


def test_a_list_entry_no_file_can_have_is_broken_and_the_others_go_on(tmp_path: Path) -> None:
    """A name over 255 bytes or a symlink loop in a list ends nothing: each is listed, as broken."""
    from runner.errors import PathError
    from tests.examples import TZ_CAPSULE

    (tmp_path / "loop").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop")
    listing = tmp_path / "tonight.txt"
    listing.write_text(f"{'n' * 300}\nloop\n{TZ_CAPSULE}\n")
    got = collect([listing])
    assert [Path(e.path).name[:3] for e in got.entries] == ["nnn", "loo", TZ_CAPSULE.name[:3]]
    problems = [got.opened[e.capsule_id] for e in got.entries]
    assert isinstance(problems[0], PathError) and "longer than the file system allows" in problems[0].line()
    assert isinstance(problems[1], PathError) and "symlink loop" in problems[1].line()
    assert not isinstance(problems[2], Exception)
