"""A verifier whose Python imports the work tree's copy of the project gives no verdict.

The project is a src layout installed editable in a venv made here, as `pip
install -e .` leaves it (a `.pth` naming src/, or setuptools' finder); its
verifier imports the package. A fix that exists only in the work tree must
never clear the commit, nor be cached as its pass.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Repo, make_repo
from tests.venvs import activated, install_editable_finder, install_editable_pth, make_venv

KEY = "budgetlib:modules:budget-too-small"
VERIFIER = "checks/check_budget.py"
CHECK = """\
import sys
{first}import budgetlib
print("budget", budgetlib.BUDGET)
sys.exit(0 if budgetlib.BUDGET >= 120 else 1)
"""
NAIVE = CHECK.format(first="")
# What the no-verdict message tells the user to do.
FIXED = CHECK.format(first='sys.path.insert(0, "src")\n')
BROKEN, REPAIRED = "BUDGET = 50\n", "BUDGET = 120\n"
INIT = "src/budgetlib/__init__.py"


def pth_install(venv: Path, work: Path) -> None:
    install_editable_pth(venv, "budgetlib", work / "src")


def finder_install(venv: Path, work: Path) -> None:
    install_editable_finder(venv, "budgetlib", work / "src" / "budgetlib")


@pytest.fixture(params=[pth_install, finder_install], ids=["pth", "finder"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Repo, dict[str, str]]:
    """The src-layout project with the bug committed, installed editable in its venv."""
    install: Callable[[Path, Path], None] = request.param
    repo = make_repo(tmp_path / "work")
    repo.write("pyproject.toml", '[project]\nname = "budgetlib"\nversion = "0.1"\n')
    repo.write(INIT, BROKEN)
    repo.write(VERIFIER, NAIVE)
    repo.commit("budgetlib with its budget check")
    repo.record(KEY, "--status", "observed", "--title", "budget too small", "--trigger", "push",
                "--verify", f"python {VERIFIER}", "--verify-file", VERIFIER, "--no-probe")  # fmt: skip
    repo.commit("record the budget failure")
    venv = make_venv(tmp_path / "venv")
    install(venv, repo.path)
    return repo, activated(venv)


def check(repo: Repo, env: dict[str, str]) -> tuple[int, dict[str, object]]:
    result = repo.failgate("check", "--trigger", "push", "--trust-ledger", "--json", env=env)
    assert "Traceback" not in result.err, result
    return result.code, json.loads(result.out)["gates"][0]


def test_a_fix_only_in_the_work_tree_gives_no_verdict_and_is_never_cached(
    project: tuple[Repo, dict[str, str]],
) -> None:
    repo, env = project
    repo.write(INIT, REPAIRED)  # the fix, edited but not committed

    for _ in range(2):  # a second run is not a cached pass either
        code, gate = check(repo, env)
        assert code == 1, gate
        assert gate["state"] == "open"
        verifier = gate["verifier"]
        assert isinstance(verifier, dict)
        assert verifier["outcome"] == "no_verdict", verifier
        assert verifier["cached"] is False
        detail = str(verifier["detail"])
        assert "budgetlib" in detail
        assert str((repo.path / INIT).resolve()) in detail
        assert 'sys.path.insert(0, "src")' in detail

    repo.git("checkout", "--", INIT)  # the work tree has the bug again: still no verdict
    code, gate = check(repo, env)
    assert code == 1 and gate["verifier"]["outcome"] == "no_verdict", gate  # type: ignore[index]


def test_a_verifier_that_imports_the_checkout_s_copy_holds_until_the_fix_is_committed(
    project: tuple[Repo, dict[str, str]],
) -> None:
    repo, env = project
    repo.write(VERIFIER, FIXED)
    repo.commit("the verifier imports the checkout's copy")
    repo.write(INIT, REPAIRED)
    code, gate = check(repo, env)
    assert code == 1, gate
    assert gate["verifier"]["outcome"] == "failed", gate  # type: ignore[index]
    assert "budget 50" in gate["verifier"]["output_tail"]  # type: ignore[index]

    repo.commit("size the budget for six modules")
    code, gate = check(repo, env)
    assert code == 0, gate
    assert gate["state"] == "cleared"
    assert gate["verifier"]["outcome"] == "passed"  # type: ignore[index]


def test_records_probe_of_a_verifier_that_imports_the_work_tree_gives_no_verdict(
    project: tuple[Repo, dict[str, str]],
) -> None:
    repo, env = project
    repo.write(INIT, REPAIRED)  # the fix only in the work tree: HEAD still has the failure
    done = repo.failgate(
        "record", "budgetlib:modules:budget-again", "--status", "observed", "--title", "again",
        "--trigger", "push", "--verify", f"python {VERIFIER}", "--verify-file", VERIFIER, env=env,
    )  # fmt: skip
    assert done.code == 0, done
    # It judged the work tree's copy: that says nothing of HEAD, neither way.
    assert "probe: the verifier gives no verdict on HEAD" in done.err, done
    assert "already passes" not in done.err, done


def test_a_module_the_commit_lacks_is_said_as_missing_not_as_a_sys_path_to_fix(
    tmp_path: Path,
) -> None:
    # The verifier puts the checkout first already; the commit has no budgetlib.limits,
    # so the editable finder, asked after sys.path, answers with the work tree's.
    repo = make_repo(tmp_path / "work")
    repo.write(INIT, BROKEN)
    repo.write(VERIFIER, CHECK.format(first='sys.path.insert(0, "src")\nimport budgetlib.limits\n'))
    repo.commit("budgetlib with its budget check")
    repo.record(KEY, "--status", "observed", "--title", "budget too small", "--trigger", "push",
                "--verify", f"python {VERIFIER}", "--verify-file", VERIFIER, "--no-probe")  # fmt: skip
    repo.commit("record the budget failure")
    repo.write("src/budgetlib/limits.py", "")  # written, not committed
    venv = make_venv(tmp_path / "venv")
    finder_install(venv, repo.path)
    code, gate = check(repo, activated(venv))
    assert code == 1, gate
    verifier = gate["verifier"]
    assert isinstance(verifier, dict) and verifier["outcome"] == "no_verdict", verifier
    detail = str(verifier["detail"])
    assert f"The checkout of {repo.head()[:12]} has no src/budgetlib/limits.py" in detail, detail
    assert "sys.path.insert" not in detail, detail  # what the verifier already does
