"""inplace_refusal: the work tree stands for C only when each file on disk is its blob,
of the kind and executable bit its mode says."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from failgate_hooks.core.events import Verification, Workdir
from failgate_hooks.core.gates import VerifierOutcome
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify.inplace import index_entries, inplace_refusal, unlike_its_blob
from tests.conftest import Repo, make_repo
from tests.test_verify import PY, runs, verify

ODD_NAMES = ('"quoted', "new\nline", "tab\there", "back\\slash", "é.txt", " lead")


def refusal(repo: Repo) -> str | None:
    with GitRepo.open(repo.path) as grepo:
        return inplace_refusal(grepo, repo.head(), ())


def test_files_with_any_name_are_hashed_as_they_are(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    for name in ODD_NAMES:
        repo.write(name, f"{name}\n")
    (repo.path / "link").symlink_to("README")
    repo.commit("odd names")
    assert refusal(repo) is None


def test_an_odd_name_that_is_converted_is_named_safely(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.write("new\nline", "$Id$\n")
    repo.write(".gitattributes", '"new\\nline" ident\n')
    repo.commit("an expanded $Id$")
    (repo.path / "new\nline").unlink()
    repo.git("checkout", "--", "new\nline")
    assert repo.git("status", "--porcelain") == ""
    why = refusal(repo)
    assert why is not None
    assert why.startswith("new line is converted by ident in the attributes: "), why
    assert "the work tree is not the commit's bytes; use the default workdir" in why


def test_a_submodule_keeps_the_work_tree_from_standing_for_the_commit(tmp_path: Path) -> None:
    # A checked-out submodule holds files no blob of C has, and status does not list
    # those it ignores: a failgate checkout holds the folder empty.
    inner = make_repo(tmp_path / "inner")
    inner.write(".gitignore", "build/\n")
    inner.commit("inner")
    repo = make_repo(tmp_path / "repo")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner.path), "sub")
    repo.commit("a submodule")
    (repo.path / "sub" / "build").mkdir()
    (repo.path / "sub" / "build" / "x.py").write_text("raise SystemExit(0)\n")
    assert (
        refusal(repo)
        == "sub is a submodule: its files are not the commit's, and a checkout holds it empty"
    )


# ------------------------------------------------------------ kinds and executable bits

# Fails on each commit below and would pass on the work tree each test makes: a verifier
# run in place would clear a broken commit. Writes where it ran first.
MODE_CHECK = """\
import os, sys
with open(sys.argv[1], "a") as marker:
    marker.write(os.getcwd() + "\\n")
rule, path = sys.argv[2], sys.argv[3]
if rule == "exec":
    ok = os.access(path, os.X_OK)
elif rule == "noexec":
    ok = not os.access(path, os.X_OK)
elif rule == "points":
    ok = os.path.islink(path) and os.readlink(path) == sys.argv[4]
else:
    ok = not os.path.islink(path)
sys.exit(0 if ok else 1)
"""


@pytest.fixture
def modes(any_repo: Repo) -> Repo:
    """A commit whose tool.sh lacks its executable bit, whose data.sh has one it must not,
    whose `current` links to v1 where v2 is wanted, and its check."""
    any_repo.write("checks/check.py", MODE_CHECK)
    any_repo.write("tool.sh", "#!/bin/sh\n")
    any_repo.write("data.sh", "#!/bin/sh\n").chmod(0o755)
    any_repo.write("v1", "one\n")
    any_repo.write("v2", "two\n")
    (any_repo.path / "current").symlink_to("v1")
    any_repo.commit("modes")
    assert any_repo.git("ls-files", "-s", "data.sh", "current").split()[::4] == [
        "120000",
        "100755",
    ]
    return any_repo


def mode_check(marker: Path, *rule: str) -> Verification:
    return Verification(
        command=(PY, "checks/check.py", str(marker), *rule),
        files=("checks/check.py",),
        workdir=Workdir.INPLACE,
    )


def assert_ran_in_a_checkout(repo: Repo, marker: Path, *rule: str) -> str:
    """The verifier, run for HEAD, failed on the commit in a checkout: the reason."""
    assert repo.git("status", "--porcelain", "--ignored") == ""  # status calls it clean
    result = verify(repo, mode_check(marker, *rule))
    assert result.outcome is VerifierOutcome.FAILED, result
    assert runs(marker) and str(repo.path) not in runs(marker)
    assert "workdir inplace not used (" in result.detail, result.detail
    return result.detail


def kept_timestamps(repo: Repo, path: str, retarget: Callable[[Path], None]) -> None:
    """`retarget` the link at `path` with its timestamps as the index has them, under a
    configuration that trusts those alone (no ctime, no inode)."""
    repo.git("config", "core.trustctime", "false")
    repo.git("config", "core.checkStat", "minimal")
    link = repo.path / path
    os.utime(link, (1_000_000_000, 1_000_000_000), follow_symlinks=False)
    repo.git("update-index", "-q", "--refresh")  # older than the index: not racy
    retarget(link)
    os.utime(link, (1_000_000_000, 1_000_000_000), follow_symlinks=False)


def test_an_executable_bit_added_under_filemode_false_keeps_the_checkout(
    modes: Repo, tmp_path: Path
) -> None:
    modes.git("config", "core.fileMode", "false")
    (modes.path / "tool.sh").chmod(0o755)
    why = assert_ran_in_a_checkout(modes, tmp_path / "marker", "exec", "tool.sh")
    assert (
        "(tool.sh is executable in the work tree and not in the commit (git status does not "
        "look at the bit under core.fileMode=false): the work tree is not the commit; use the "
        "default workdir, or chmod -x it)"
    ) in why


def test_an_executable_bit_removed_under_filemode_false_keeps_the_checkout(
    modes: Repo, tmp_path: Path
) -> None:
    modes.git("config", "core.fileMode", "false")
    (modes.path / "data.sh").chmod(0o644)
    why = assert_ran_in_a_checkout(modes, tmp_path / "marker", "noexec", "data.sh")
    assert "(data.sh is not executable in the work tree and is in the commit (" in why
    assert "or chmod +x it)" in why


def test_a_link_retargeted_with_its_timestamps_kept_keeps_the_checkout(
    modes: Repo, tmp_path: Path
) -> None:
    def retarget(link: Path) -> None:
        link.unlink()
        link.symlink_to("v2")  # as long as v1: the size is the index's too

    kept_timestamps(modes, "current", retarget)
    why = assert_ran_in_a_checkout(modes, tmp_path / "marker", "points", "current", "v2")
    assert (
        "(current is a symbolic link to another target than the commit's, though git status "
        "calls it clean"
    ) in why
    assert "or remove it and check it out again)" in why


def test_a_link_replaced_by_a_file_of_its_target_keeps_the_checkout(
    modes: Repo, tmp_path: Path
) -> None:
    # Under core.symlinks=false git takes a file holding a link's target for the link.
    modes.git("config", "core.symlinks", "false")
    (modes.path / "current").unlink()
    (modes.path / "current").write_bytes(b"v1")
    why = assert_ran_in_a_checkout(modes, tmp_path / "marker", "nolink", "current")
    assert (
        "(current is a symbolic link in the commit and a regular file in the work tree "
        "(core.symlinks=false in the git config checks links out as files): "
    ) in why


def test_a_file_replaced_by_a_link_to_its_bytes_is_never_hashed_through_it(modes: Repo) -> None:
    # Status says typechange here, so inplace_refusal stops before: the proof of the
    # bytes must not rest on that, since hash-object follows a link to the same bytes.
    (modes.path / "v1").rename(modes.path / "v1.real")
    (modes.path / "v1").symlink_to("v1.real")
    with GitRepo.open(modes.path) as grepo:
        entries = index_entries(grepo.run("ls-files", "-s", "-v", "-z", strip=False))
        why = unlike_its_blob(grepo, entries)
    assert why == (
        "v1 is a regular file in the commit and a symbolic link in the work tree: the work "
        "tree is not the commit; use the default workdir, or remove it and check it out again"
    )


def test_a_clean_tree_of_links_and_executables_still_runs_in_place(
    modes: Repo, tmp_path: Path
) -> None:
    # The control: the same commit, untouched, under both settings of the bit and links.
    marker = tmp_path / "marker"
    for file_mode in ("true", "false"):
        modes.git("config", "core.fileMode", file_mode)
        for rule in (("exec", "data.sh"), ("noexec", "tool.sh"), ("points", "current", "v1")):
            result = verify(modes, mode_check(marker, *rule), no_cache=True)
            assert result.outcome is VerifierOutcome.PASSED, (rule, result)
            assert result.detail == "", result.detail
            assert runs(marker)[-1] == str(modes.path)


def test_a_mode_change_of_an_odd_name_is_named_safely(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.write("new\nline", "x\n")
    repo.commit("an odd name")
    repo.git("config", "core.fileMode", "false")
    (repo.path / "new\nline").chmod(0o755)
    why = refusal(repo)
    assert why is not None
    assert why.startswith("new line is executable in the work tree and not in the commit"), why
