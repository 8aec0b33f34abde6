"""What a verifier's Pythons load from the work tree: real repositories, real interpreters."""

from __future__ import annotations

import importlib.util
import marshal
import os
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest

from failgate_hooks.app.replay import replay
from failgate_hooks.core.errors import GitError
from failgate_hooks.core.events import Verification, Workdir
from failgate_hooks.core.gates import VerifierOutcome
from failgate_hooks.core.replay import StepState
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify.worktree_loads import Load, _import_root, leak_detail, work_trees
from tests.conftest import Repo, make_repo
from tests.test_verify import ENTITY, script, verify
from tests.venvs import install_editable_pth, make_venv, site_packages

PY = sys.executable
INIT = "src/budgetlib/__init__.py"
IMPORTS_IT = "import sys, budgetlib\nsys.exit(0 if budgetlib.BUDGET >= 120 else 1)\n"
FROM_THE_CHECKOUT = 'import sys\nsys.path.insert(0, "src")\n' + IMPORTS_IT


@pytest.fixture
def world(tmp_path: Path) -> Repo:
    """budgetlib with its budget too small, committed; the fix only in the work tree."""
    repo = make_repo(tmp_path / "repo")
    repo.write(INIT, "BUDGET = 50\n")
    repo.write(".gitignore", ".venv/\ntmp/\n")
    repo.commit("budgetlib")
    return repo


def fix_in_work_tree(repo: Repo) -> None:
    repo.write(INIT, "BUDGET = 120\n")


def on_pythonpath(monkeypatch: pytest.MonkeyPatch, *folders: Path) -> Verification:
    """The verifier, with `folders` on the PYTHONPATH it is passed."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(str(folder) for folder in folders))
    return Verification(command=(PY, "checks/check.py"), env_pass=("PYTHONPATH",))


def test_a_pythonpath_into_the_work_tree_gives_no_verdict(
    world: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit = script(world, IMPORTS_IT)
    fix_in_work_tree(world)
    result = verify(world, on_pythonpath(monkeypatch, world.path / "src"), commit)
    assert result.outcome is VerifierOutcome.NO_VERDICT, result
    assert result.exit_code == 0  # it passed, on files that are not the commit
    assert f"budgetlib ({(world.path / INIT).resolve()})" in result.detail
    assert 'sys.path.insert(0, "src")' in result.detail


def test_a_python_the_verifier_starts_is_watched_too(
    world: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit = script(
        world,
        "import subprocess, sys\n"
        f"sys.exit(subprocess.run([sys.executable, '-c', {IMPORTS_IT!r}]).returncode)\n",
    )
    fix_in_work_tree(world)
    result = verify(world, on_pythonpath(monkeypatch, world.path / "src"), commit)
    assert result.outcome is VerifierOutcome.NO_VERDICT, result
    assert "budgetlib" in result.detail


def test_another_work_tree_of_the_repository_is_watched(
    world: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit = script(world, IMPORTS_IT)
    other = tmp_path / "other"
    world.git("worktree", "add", "-q", str(other))
    result = verify(world, on_pythonpath(monkeypatch, other / "src"), commit)
    assert result.outcome is VerifierOutcome.NO_VERDICT, result
    assert str((other / INIT).resolve()) in result.detail


def test_a_script_run_from_the_work_tree_gives_no_verdict(world: Repo) -> None:
    commit = script(world, "print('the work tree copy')\n")
    in_work_tree = str(world.path / "checks" / "check.py")
    result = verify(world, Verification(command=(PY, in_work_tree)), commit)
    assert result.outcome is VerifierOutcome.NO_VERDICT, result
    assert f"__main__ ({Path(in_work_tree).resolve()})" in result.detail
    assert "name the script as checks/check.py, relative to it" in result.detail


def test_the_checkout_s_own_copy_is_what_a_careful_verifier_imports(
    world: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit = script(world, FROM_THE_CHECKOUT)
    fix_in_work_tree(world)
    result = verify(world, on_pythonpath(monkeypatch, world.path / "src"), commit)
    assert result.outcome is VerifierOutcome.FAILED, result
    assert result.detail == ""


def test_a_module_a_finder_ahead_of_the_watcher_found_is_seen_at_exit(
    world: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # as pytest's assertion rewriter does: a finder put first after start-up
    first = textwrap.dedent(
        f"""\
        import importlib.util, sys
        class First:
            @staticmethod
            def find_spec(name, path=None, target=None):
                if name == "budgetlib":
                    return importlib.util.spec_from_file_location(name, {str(world.path / INIT)!r})
        sys.meta_path.insert(0, First)
        """
    )
    commit = script(world, first + IMPORTS_IT)
    fix_in_work_tree(world)
    result = verify(world, Verification(command=(PY, "checks/check.py")), commit)
    assert result.outcome is VerifierOutcome.NO_VERDICT, result
    assert "budgetlib" in result.detail


def test_a_load_that_cannot_be_recorded_is_no_verdict(
    world: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit = script(world, "import os\nos.remove(os.environ['FAILGATE_LOAD_LOG'])\n" + IMPORTS_IT)
    fix_in_work_tree(world)
    result = verify(world, on_pythonpath(monkeypatch, world.path / "src"), commit)
    assert result.outcome is VerifierOutcome.NO_VERDICT, result
    assert result.exit_code == 125
    assert "cannot be recorded" in result.output_tail
    assert "what its Python loaded cannot be read" in result.detail


def test_bytes_written_into_the_log_cannot_hide_a_load(
    world: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit = script(
        world,
        "import os\nopen(os.environ['FAILGATE_LOAD_LOG'], 'ab').write(b'x\\0')\n" + IMPORTS_IT,
    )
    fix_in_work_tree(world)
    result = verify(world, on_pythonpath(monkeypatch, world.path / "src"), commit)
    assert result.outcome is VerifierOutcome.NO_VERDICT, result
    assert f"budgetlib ({(world.path / INIT).resolve()})" in result.detail


def test_a_log_too_large_to_read_is_no_verdict(world: Repo) -> None:
    commit = script(
        world, "import os\nopen(os.environ['FAILGATE_LOAD_LOG'], 'ab').write(b'x' * (1 << 21))\n"
    )
    result = verify(world, Verification(command=(PY, "checks/check.py")), commit)
    assert result.outcome is VerifierOutcome.NO_VERDICT, result
    assert "larger than" in result.detail


def test_a_work_tree_whose_path_holds_the_path_separator_is_watched(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "odd:name")
    repo.write(INIT, "BUDGET = 50\n")
    commit = script(repo, IMPORTS_IT)
    venv = make_venv(tmp_path / "venv")
    install_editable_pth(venv, "budgetlib", repo.path / "src")
    verification = Verification(command=(str(venv / "bin" / "python"), "checks/check.py"))
    result = verify(repo, verification, commit)
    assert result.outcome is VerifierOutcome.NO_VERDICT, result


def test_the_project_s_own_sitecustomize_still_runs(
    world: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    theirs = tmp_path / "their-site"
    theirs.mkdir()
    marker = tmp_path / "their-sitecustomize-ran"
    (theirs / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    commit = script(world, "import sys\nprint(sys.path)\n")
    result = verify(world, on_pythonpath(monkeypatch, theirs), commit)
    assert result.outcome is VerifierOutcome.PASSED, result
    assert marker.exists()
    assert "failgate-python-" not in result.output_tail  # the watcher's folder left sys.path


def test_without_a_sitecustomize_of_its_own_a_python_starts_quietly(world: Repo) -> None:
    commit = script(world, "print('started')\n")
    result = verify(world, Verification(command=(PY, "checks/check.py")), commit)
    assert result.outcome is VerifierOutcome.PASSED, result
    assert result.output_tail == "started"


def test_a_venv_kept_in_the_work_tree_is_installed_code_but_its_editable_install_is_not(
    world: Repo,
) -> None:
    venv = make_venv(world.path / ".venv")
    installed = site_packages(venv) / "budgetlib"
    installed.mkdir()
    (installed / "__init__.py").write_text("BUDGET = 120\n")  # `pip install .`, a copy
    commit = script(world, IMPORTS_IT)
    verification = Verification(command=(str(venv / "bin" / "python"), "checks/check.py"))
    copied = verify(world, verification, commit)
    assert copied.outcome is VerifierOutcome.PASSED, copied

    (installed / "__init__.py").unlink()
    installed.rmdir()
    install_editable_pth(venv, "budgetlib", world.path / "src")
    editable = verify(world, verification, commit, no_cache=True)
    assert editable.outcome is VerifierOutcome.NO_VERDICT, editable
    assert str((world.path / INIT).resolve()) in editable.detail


def test_a_symlinked_install_into_the_work_tree_gives_no_verdict(
    world: Repo, tmp_path: Path
) -> None:
    venv = make_venv(tmp_path / "venv")  # `flit install --symlink`: site-packages links back
    (site_packages(venv) / "budgetlib").symlink_to(world.path / "src" / "budgetlib")
    commit = script(world, IMPORTS_IT)
    verification = Verification(command=(str(venv / "bin" / "python"), "checks/check.py"))
    result = verify(world, verification, commit)
    assert result.outcome is VerifierOutcome.NO_VERDICT, result
    assert str((world.path / INIT).resolve()) in result.detail


def test_a_checkout_inside_the_work_tree_is_not_the_work_tree(
    world: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside = world.path / "tmp"
    inside.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(inside))  # TMPDIR in the work tree
    commit = script(world, FROM_THE_CHECKOUT)
    fix_in_work_tree(world)
    result = verify(world, Verification(command=(PY, "checks/check.py")), commit)
    assert result.outcome is VerifierOutcome.FAILED, result  # C's budget, read from C
    assert result.detail == ""


def test_inplace_loads_from_the_work_tree_it_proved_equal_to_the_commit(world: Repo) -> None:
    script(world, FROM_THE_CHECKOUT)
    verification = Verification(command=(PY, "checks/check.py"), workdir=Workdir.INPLACE)
    result = verify(world, verification)
    assert result.outcome is VerifierOutcome.FAILED, result
    assert "workdir inplace not used" not in result.detail
    assert "work tree" not in result.detail


def test_the_verifier_gets_a_private_bytecode_cache(world: Repo, tmp_path: Path) -> None:
    seen = tmp_path / "prefix"
    commit = script(world, f"import sys\nopen({str(seen)!r}, 'w').write(sys.pycache_prefix)\n")
    result = verify(world, Verification(command=(PY, "checks/check.py")), commit)
    assert result.outcome is VerifierOutcome.PASSED, result
    prefix = seen.read_text()
    assert Path(prefix).name == "pycache" and Path(prefix).parent.name.startswith(
        "failgate-python-"
    )
    assert not Path(prefix).exists()  # removed with the run


def test_bytecode_committed_beside_a_source_never_stands_in_for_it(world: Repo) -> None:
    planted = compile("VALUE = 'planted bytecode'\n", "checks/helper.py", "exec")
    pyc = world.path / "checks" / "__pycache__" / f"helper.{sys.implementation.cache_tag}.pyc"
    pyc.parent.mkdir(parents=True)
    world.write("checks/helper.py", "VALUE = 'source'\n")
    flags = 0b01  # hash-based, never checked against the source
    source_hash = importlib.util.source_hash(b"VALUE = 'not this'\n")
    pyc.write_bytes(
        importlib.util.MAGIC_NUMBER + flags.to_bytes(4, "little") + source_hash
        + marshal.dumps(planted)
    )  # fmt: skip
    world.git("add", "-f", str(pyc))
    commit = script(world, "import helper\nprint(helper.VALUE)\n")
    result = verify(world, Verification(command=(PY, "checks/check.py")), commit)
    assert result.outcome is VerifierOutcome.PASSED, result
    assert result.output_tail == "source"


def test_installed_code_reads_the_bytecode_cached_beside_it(world: Repo) -> None:
    commit = script(
        world,
        "import importlib.util, json, os\n"
        "print(os.path.islink(importlib.util.cache_from_source(json.__file__)))\n",
    )
    result = verify(world, Verification(command=(PY, "checks/check.py")), commit)
    assert result.outcome is VerifierOutcome.PASSED, result
    assert result.output_tail == "True"


@pytest.mark.parametrize(
    ("module", "relative", "root"),
    [
        ("budgetlib", "src/budgetlib/__init__.py", "src"),
        ("budgetlib.limits", "src/budgetlib/limits.py", "src"),
        ("helper", "helper.py", ""),
        ("ext", "lib/ext.cpython-311-x86_64-linux-gnu.so", "lib"),
        ("renamed", "src/budgetlib/__init__.py", None),  # a finder mapped it elsewhere
    ],
)
def test_the_fix_names_the_folder_to_put_first(module: str, relative: str, root: str) -> None:
    load = Load(module, f"/work/tree/{relative}", "/work/tree")
    assert _import_root(load) == root


def test_the_detail_names_three_loads_and_counts_the_rest(tmp_path: Path) -> None:
    loads = [Load(f"m{i}", f"/w/m{i}.py", "/w") for i in range(5)]
    (tmp_path / "m0.py").write_text("")  # the checkout has its copy: sys.path is the fix
    detail = leak_detail(loads, "a" * 40, str(tmp_path))
    assert "m0 (/w/m0.py), m1 (/w/m1.py), m2 (/w/m2.py) and 2 more" in detail
    assert "sys.path.insert(0, os.getcwd())" in detail


def test_a_replay_whose_verifier_imports_the_work_tree_proves_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.write(INIT, "BUDGET = 50\n")
    parent = repo.commit("budgetlib, its budget too small")
    fix_in_work_tree(repo)
    repair = repo.commit("size the budget")
    venv = make_venv(tmp_path / "venv")
    install_editable_pth(venv, "budgetlib", repo.path / "src")
    repo.write("checks/check.py", IMPORTS_IT)
    repo.record(ENTITY, "--status", "observed", "--title", "t", "--trigger", "push",
                "--verify", f"{venv / 'bin' / 'python'} checks/check.py",
                "--verify-file", "checks/check.py", "--no-probe")  # fmt: skip
    repo.commit("record the budget failure")
    with GitRepo.open(repo.path) as opened:
        report = replay(opened, f"{parent}..{repair}", ENTITY)
    assert [step.state for step in report.steps] == [StepState.NO_VERDICT] * 2, report
    assert all("budgetlib" in step.detail for step in report.steps)


def test_a_linked_work_tree_whose_path_holds_a_newline_is_listed_as_it_is(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    linked = tmp_path / "odd\nworktree /elsewhere" / "tree"
    linked.parent.mkdir(parents=True)
    repo.git("worktree", "add", "-q", "-b", "linked", str(linked))
    with GitRepo.open(repo.path) as git_repo:
        assert work_trees(git_repo) == [str(repo.path.resolve()), str(linked.resolve())]


def test_a_git_without_worktree_list_z_still_lists_the_work_trees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo")
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "-b", "linked", str(linked))
    run = GitRepo.run

    def as_git_2_35(self: GitRepo, *args: str, **kw: Any) -> str:
        if args[:2] == ("worktree", "list") and "-z" in args:
            raise GitError("git worktree list --porcelain failed: error: unknown switch `z'")
        return run(self, *args, **kw)

    monkeypatch.setattr(GitRepo, "run", as_git_2_35)
    with GitRepo.open(repo.path) as git_repo:
        assert work_trees(git_repo) == [str(repo.path.resolve()), str(linked.resolve())]
