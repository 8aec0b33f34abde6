"""inplace_refusal: the work tree stands for C only when each file on disk is its blob."""

from __future__ import annotations

from pathlib import Path

from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify.inplace import inplace_refusal
from tests.conftest import Repo, make_repo

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
