"""Which folders of a Python the sandbox shows again: read from its files, never asked of it.

A pushed commit chooses the interpreter (a `#!` line names any path), so every
case here is one it could set up: the sandbox must show a Python's folders and
nothing else, and nothing in a folder the commit could have written.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from failgate_hooks.verify.pins import read_only_paths
from failgate_hooks.verify.sandbox import (
    SandboxError,
    commit_writable,
    python_folders,
    read_only_in,
)


def a_python(prefix: Path) -> Path:
    """A base Python's folder: its interpreter and a standard library."""
    (prefix / "lib" / "python3.12").mkdir(parents=True)
    (prefix / "lib" / "python3.12" / "os.py").write_text("")
    (prefix / "bin").mkdir()
    (prefix / "bin" / "python3.12").write_text("")
    return prefix / "bin" / "python3.12"


def a_venv(folder: Path, home: Path) -> Path:
    (folder / "bin").mkdir(parents=True)
    (folder / "pyvenv.cfg").write_text(f"home = {home}\ninclude-system-site-packages = false\n")
    (folder / "bin" / "python").write_text("")
    return folder / "bin" / "python"


def folders(python: Path, home: Path, *writable: Path) -> list[str]:
    hidden = [str(home), *map(str, writable)]
    return python_folders(str(python), hidden, [str(folder) for folder in writable])


def test_a_venv_in_the_home_folder_and_its_base_python_are_shown(tmp_path: Path) -> None:
    home = tmp_path / "home"
    base = a_python(home / ".pyenv" / "versions" / "3.12")
    python = a_venv(home / ".venvs" / "project", base.parent)
    assert folders(python, home) == [str(home / ".venvs" / "project"), str(base.parent.parent)]


def test_a_base_python_is_found_where_its_path_resolves(tmp_path: Path) -> None:
    home = tmp_path / "home"
    base = a_python(home / ".local" / "python")
    (home / "bin").mkdir()
    (home / "bin" / "python3").symlink_to(base)
    assert folders(home / "bin" / "python3", home) == [str(base.parent.parent)]


def test_a_venv_home_that_holds_no_python_is_not_shown(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh" / "bin").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("a private key\n")
    python = a_venv(home / ".venvs" / "project", home / ".ssh" / "bin")
    assert folders(python, home) == [str(home / ".venvs" / "project")]


def test_a_path_into_a_secret_folder_is_not_a_python(tmp_path: Path) -> None:
    """A `#!` line may name a file that is not there: its folders are no Python's."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    assert folders(home / ".ssh" / "bin" / "python3", home) == []


def test_nothing_is_shown_for_a_python_where_a_commit_could_have_written(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    work = home / "project"  # a work tree inside the home folder
    base = a_python(home / ".pyenv" / "versions" / "3.12")
    python = a_venv(work / "tools", base.parent)
    assert folders(python, home, work) == []


def test_a_folder_that_holds_a_hidden_one_is_never_shown(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "pyvenv.cfg").write_text(f"home = {home / 'bin'}\n")
    (home / "bin").mkdir()
    (home / "lib" / "python3.12").mkdir(parents=True)
    (home / "lib" / "python3.12" / "os.py").write_text("")
    assert folders(home / "bin" / "python3", home) == []


def test_a_venv_in_the_temporary_folder_is_the_user_s_but_not_in_a_checkout_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CI job's virtualenv in /tmp runs in the sandbox; one in a temporary checkout of
    failgate's (`failgate-*` in TMPDIR), which a pushed commit wrote, never does."""
    temporary, home, repo = tmp_path / "tmp", tmp_path / "home", tmp_path / "repo"
    for folder in (temporary, home, repo):
        folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    base = a_python(tmp_path / "usr")
    users = a_venv(temporary / "ci" / ".venv", base.parent)
    planted = a_venv(temporary / "failgate-a1b2" / "tree" / "tools", base.parent)
    hidden = [str(temporary), str(home), str(repo)]
    writable = commit_writable(hidden, {"HOME": str(home)})
    assert str(repo) in writable and str(temporary / "failgate-a1b2") in writable
    assert str(temporary) not in writable and str(home) not in writable
    shown = python_folders(str(users), hidden, writable)
    assert shown == [str(temporary / "ci" / ".venv"), str(base.parent.parent)]
    assert python_folders(str(planted), hidden, writable) == []


def test_read_only_are_the_pins_their_folders_and_each_python_file_s_folder() -> None:
    files = ["check.py", "checks/judge.py", "checks/data.txt", "tools/lint/run.sh"]
    assert read_only_paths(files, ["tools/lint"]) == [*files, "tools/lint", "checks"]


def test_read_only_binds_folders_before_what_they_hold_and_skips_what_is_gone(
    tmp_path: Path,
) -> None:
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "v.py").write_text("")
    found = read_only_in(str(tmp_path), ["checks/v.py", "gone.py", "checks"])
    assert found == [str(tmp_path / "checks"), str(tmp_path / "checks" / "v.py")]


def test_a_pinned_path_reached_through_a_link_is_refused_never_bound(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "v.py").write_text("")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "checks").symlink_to(outside)
    with pytest.raises(SandboxError, match="it is a link"):
        read_only_in(str(checkout), ["checks/v.py"])
