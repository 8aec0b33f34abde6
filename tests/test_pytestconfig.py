"""A pytest verifier runs under the reviewed pytest configuration: real repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from failgate_hooks.core.events import Verification
from failgate_hooks.core.gates import VerifierOutcome
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify.pins import resolve_pins
from failgate_hooks.verify.process import verifier_env
from failgate_hooks.verify.shadowing import shadowing
from tests.conftest import Repo, make_repo
from tests.test_verify import PY, verify

TEST = "def test_budget():\n    assert False\n"
PYTEST = (PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_deploy.py")
PINNED = ("tests/test_deploy.py",)
PYPROJECT = """\
[project]
name = "deploy"
dependencies = ["requests"]

[tool.pytest.ini_options]
addopts = "-ra"
"""


def reviewed_world(tmp_path: Path, *files: tuple[str, str]) -> tuple[Repo, str]:
    """A pinned failing test, with `files` beside it, committed: the reviewed revision."""
    repo = make_repo(tmp_path / "repo")
    repo.write("tests/test_deploy.py", TEST)
    for path, text in files:
        repo.write(path, text)
    return repo, repo.commit("a pinned test that fails")


def judged(
    repo: Repo,
    reviewed: str,
    command: tuple[str, ...] = PYTEST,
    files: tuple[str, ...] = PINNED,
) -> str | None:
    """What shadowing says of HEAD, pinned from `reviewed`."""
    with GitRepo.open(repo.path) as grepo:
        pins = resolve_pins(grepo, reviewed, files)
        return shadowing(grepo, repo.head(), pins, command, reviewed)


def refused_for(why: str | None, path: str) -> None:
    assert why is not None and why.startswith(f"{path} is not pinned, and "), why
    assert "pin it too in the verifier's files" in why, why


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("pytest.ini", "[pytest]\naddopts = -p evil_plugin\n"),
        (".pytest.ini", "[pytest]\naddopts = --deselect tests/test_deploy.py::test_budget\n"),
        ("pytest.toml", '[pytest]\naddopts = ["-k", "not budget"]\n'),
        (".pytest.toml", '[pytest]\npython_files = ["check_*.py"]\n'),
        ("pyproject.toml", '[tool.pytest.ini_options]\naddopts = "-p evil_plugin"\n'),
        ("pyproject.toml", '[tool.pytest]\naddopts = ["-p", "evil_plugin"]\n'),
        ("tox.ini", "[tox]\nenvlist = py3\n\n[pytest]\naddopts = -p no:python\n"),
        ("setup.cfg", "[metadata]\nname = deploy\n\n[tool:pytest]\ntestpaths = docs\n"),
        ("tests/pytest.ini", "[pytest]\naddopts = -p evil_plugin\n"),
        ("tests/tox.ini", "[pytest]\nconfcutdir = tests\n"),
    ],
)
def test_pytest_settings_the_reviewed_revision_lacked_are_refused(
    tmp_path: Path, path: str, text: str
) -> None:
    repo, reviewed = reviewed_world(tmp_path)
    assert judged(repo, reviewed) is None
    repo.write(path, text)
    repo.commit("pytest settings of the commit's own")
    why = judged(repo, reviewed)
    refused_for(why, path)
    assert "pytest settings where" in str(why)


@pytest.mark.parametrize(
    ("path", "reviewed_text", "pushed_text"),
    [
        ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra -p evil_plugin\n"),
        ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\nAddopts = -ra\n"),
        ("pyproject.toml", PYPROJECT, PYPROJECT.replace('"-ra"', '"-k nothing"')),
        ("tox.ini", "[pytest]\nlog_cli = true\n", "[pytest]\nlog_cli = false\n"),
        ("setup.cfg", "[tool:pytest]\nlog_cli = true\n", "[tool:pytest]\n"),
        ("pytest.toml", "[pytest]\nminversion = '9'\n", "[pytest]\nrequired_plugins = []\n"),
    ],
)
def test_changed_pytest_settings_are_refused(
    tmp_path: Path, path: str, reviewed_text: str, pushed_text: str
) -> None:
    repo, reviewed = reviewed_world(tmp_path, (path, reviewed_text))
    repo.write(path, pushed_text)
    repo.commit("other pytest settings")
    why = judged(repo, reviewed)
    refused_for(why, path)
    assert "differ from the reviewed" in str(why), why


@pytest.mark.parametrize(
    ("path", "reviewed_text", "pushed_text"),
    [
        ("pyproject.toml", PYPROJECT, PYPROJECT.replace('["requests"]', '["requests", "rich"]')),
        ("tox.ini", "[tox]\nenvlist = py3\n[pytest]\naddopts = -ra\n",
         "[tox]\nenvlist = py3,py4\n[pytest]\naddopts = -ra\n"),
        ("setup.cfg", "[metadata]\nname = a\n[tool:pytest]\naddopts = -ra\n",
         "[metadata]\nname = b\n\n[tool:pytest]\naddopts = -ra\n"),
        ("tox.ini", "[tox]\nenvlist = py3\n", "[tox]\nenvlist = py3,py4\n"),
        ("pytest.ini", "[pytest]\naddopts = -ra\n", "# a comment\n[pytest]\naddopts = -ra\n"),
    ],
)  # fmt: skip
def test_a_file_changed_outside_its_pytest_settings_is_allowed(
    tmp_path: Path, path: str, reviewed_text: str, pushed_text: str
) -> None:
    repo, reviewed = reviewed_world(tmp_path, (path, reviewed_text))
    repo.write(path, pushed_text)
    repo.commit("the project's own settings")
    assert judged(repo, reviewed) is None


def test_a_new_pytest_ini_above_a_reviewed_pyproject_section_is_refused(tmp_path: Path) -> None:
    """pytest takes the first file it finds: a pytest.ini in the same folder wins over
    pyproject.toml's section, even an empty one, and pyproject.toml is never read."""
    repo, reviewed = reviewed_world(tmp_path, ("pyproject.toml", PYPROJECT))
    repo.write("pytest.ini", "")
    repo.commit("an empty pytest.ini")
    refused_for(judged(repo, reviewed), "pytest.ini")


def test_a_new_config_file_in_the_tests_folder_is_refused(tmp_path: Path) -> None:
    """One nearer the tests is found first: tests/setup.cfg over the root's pyproject."""
    repo, reviewed = reviewed_world(tmp_path, ("pyproject.toml", PYPROJECT))
    repo.write("tests/setup.cfg", "[tool:pytest]\naddopts = -ra\n")
    repo.commit("settings nearer the tests")
    refused_for(judged(repo, reviewed), "tests/setup.cfg")


def test_removed_pytest_settings_are_refused(tmp_path: Path) -> None:
    repo, reviewed = reviewed_world(tmp_path, ("setup.cfg", "[tool:pytest]\nlog_cli = 1\n"))
    repo.git("rm", "-q", "setup.cfg")
    repo.commit("no more setup.cfg")
    why = judged(repo, reviewed)
    refused_for(why, "setup.cfg")
    assert "are gone" in str(why)


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("pyproject.toml", '[tool.pytest.ini_options\naddopts = "-ra"\n'),
        ("setup.cfg", "addopts = -p evil_plugin\n[tool:pytest]\n"),
        ("tox.ini", "[pytest]\naddopts = -ra\naddopts = -p evil_plugin\n"),
    ],
)
def test_a_config_file_that_does_not_parse_is_refused(tmp_path: Path, path: str, text: str) -> None:
    repo, reviewed = reviewed_world(tmp_path, (path, "[x]\n" if path != "pyproject.toml" else ""))
    repo.write(path, text)
    repo.commit("a file pytest might read otherwise")
    why = judged(repo, reviewed)
    refused_for(why, path)
    assert "cannot be read as" in str(why), why


@pytest.mark.parametrize(
    ("path", "reviewed_text", "pushed_text"),
    [
        # iniconfig splits at NEL: a [pytest] section configparser reads as envlist's value
        ("tox.ini", "[tox]\nenvlist = py3\n",
         "[tox]\nenvlist = py3\x85[pytest]\x85addopts = -p evil_plugin\n"),
        # iniconfig reads `[x] …` as more of addopts, configparser as a section x
        ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra\n[x] -p evil_plugin\n"),
        ("pytest.ini", "[pytest]\naddopts = -ra\n", "[pytest]\naddopts = -ra\n[x#] -p evil_plugin\n"),
    ],
)  # fmt: skip
def test_an_ini_file_configparser_reads_otherwise_than_pytest_is_refused(
    tmp_path: Path, path: str, reviewed_text: str, pushed_text: str
) -> None:
    """configparser alone reads these as the reviewed settings; pytest loads the plugin."""
    repo, reviewed = reviewed_world(tmp_path, (path, reviewed_text))
    repo.write(path, pushed_text)
    repo.commit("settings only pytest reads")
    refused_for(judged(repo, reviewed), path)


def test_a_setup_py_that_moves_pytest_s_rootdir_is_refused(tmp_path: Path) -> None:
    """With no settings anywhere, pytest's rootdir is the folder of the first setup.py
    up, and no conftest.py above it is loaded: a new tests/setup.py cuts the root's
    (tests/ is no folder on sys.path for tests/unit/test_deploy.py: no module rule)."""
    repo, reviewed = reviewed_world(
        tmp_path, ("setup.py", "print('reviewed')\n"), ("tests/unit/test_deploy.py", TEST)
    )
    command, files = (*PYTEST[:-1], "tests/unit/test_deploy.py"), ("tests/unit/test_deploy.py",)
    repo.write("setup.py", "print('changed: only its being there counts')\n")
    repo.commit("setup.py changed")
    assert judged(repo, reviewed, command, files) is None
    repo.write("tests/setup.py", "")
    repo.commit("a rootdir in tests/")
    why = judged(repo, reviewed, command, files)
    refused_for(why, "tests/setup.py")
    assert "rootdir" in str(why)


@pytest.mark.parametrize(
    ("files", "command"),
    [
        ((), (*PYTEST, "@ci/args.txt")),
        ((("pytest.ini", "[pytest]\naddopts = -ra @ci/args.txt\n"),), PYTEST),
        ((("pyproject.toml", '[tool.pytest]\naddopts = ["@ci/args.txt"]\n'),), PYTEST),
    ],
    ids=["in the command", "in pytest.ini's addopts", "in pyproject's addopts"],
)
def test_a_file_pytest_reads_arguments_from_is_the_reviewed_one(
    tmp_path: Path, files: tuple[tuple[str, str], ...], command: tuple[str, ...]
) -> None:
    """pytest's argparse reads more arguments from `@FILE`: `-k`, `--deselect`, a test
    of the commit's own that passes."""
    repo, reviewed = reviewed_world(tmp_path, ("ci/args.txt", "-ra\n"), *files)
    repo.write("notes.txt", "other work\n")
    repo.commit("other work")
    assert judged(repo, reviewed, command) is None
    repo.write("ci/args.txt", "--deselect\ntests/test_deploy.py::test_budget\n")
    repo.commit("other arguments")
    why = judged(repo, reviewed, command)
    refused_for(why, "ci/args.txt")
    assert "pytest reads its arguments from it" in str(why)
    assert judged(repo, reviewed, command, (*PINNED, "ci/args.txt")) is None


def test_a_file_of_arguments_an_unchanged_one_names_is_the_reviewed_one_too(
    tmp_path: Path,
) -> None:
    repo, reviewed = reviewed_world(tmp_path, ("ci/args.txt", "-ra\n@ci/more.txt\n"))
    repo.write("ci/more.txt", "--deselect\ntests/test_deploy.py::test_budget\n")
    repo.commit("more arguments")
    refused_for(judged(repo, reviewed, (*PYTEST, "@ci/args.txt")), "ci/more.txt")


def test_a_pinned_config_file_is_the_reviewed_one(tmp_path: Path) -> None:
    repo, reviewed = reviewed_world(tmp_path, ("pytest.ini", "[pytest]\naddopts = -ra\n"))
    repo.write("pytest.ini", "[pytest]\naddopts = -p evil_plugin\n")
    repo.commit("settings the pin writes over")
    assert judged(repo, reviewed, files=(*PINNED, "pytest.ini")) is None


def test_a_folder_no_test_lies_under_is_not_judged(tmp_path: Path) -> None:
    repo, reviewed = reviewed_world(tmp_path)
    repo.write("docs/pytest.ini", "[pytest]\naddopts = -p evil_plugin\n")
    repo.commit("settings pytest never looks for")
    assert judged(repo, reviewed) is None


def test_the_file_dash_c_names_is_judged_whatever_its_name(tmp_path: Path) -> None:
    repo, reviewed = reviewed_world(tmp_path, ("ci/gate.toml", "[pytest]\naddopts = []\n"))
    repo.write("ci/gate.toml", '[pytest]\naddopts = ["-p", "evil_plugin"]\n')
    repo.commit("the named settings")
    for config in (("-c", "ci/gate.toml"), ("--config-file=ci/gate.toml",)):
        refused_for(judged(repo, reviewed, (*PYTEST, *config)), "ci/gate.toml")


def test_a_linked_config_file_is_refused(tmp_path: Path) -> None:
    repo, reviewed = reviewed_world(tmp_path)
    repo.write("ci.ini", "[pytest]\naddopts = -p evil_plugin\n")
    (repo.path / "pytest.ini").symlink_to("ci.ini")
    repo.commit("pytest.ini by a link")
    refused_for(judged(repo, reviewed), "pytest.ini")


def test_a_verifier_that_is_not_pytest_is_not_judged_for_them(tmp_path: Path) -> None:
    repo, reviewed = reviewed_world(tmp_path)
    repo.write("pytest.ini", "[pytest]\naddopts = -p evil_plugin\n")
    repo.commit("settings no verifier reads")
    assert judged(repo, reviewed, (PY, "tests/test_deploy.py")) is None


def test_a_pytest_ini_that_makes_the_failing_test_pass_is_refused_before_it_runs(
    tmp_path: Path,
) -> None:
    """The finding, run for real: `addopts = -p evil_plugin` and a root evil_plugin.py
    that sets the exit status to 0 pass the failing pinned test without the rule."""
    repo, reviewed = reviewed_world(tmp_path)
    check = Verification(command=PYTEST, files=PINNED)
    assert verify(repo, check, reviewed).outcome is VerifierOutcome.FAILED
    repo.write("pytest.ini", "[pytest]\naddopts = -p evil_plugin\n")
    repo.write(
        "evil_plugin.py",
        "import pytest\n\n\n@pytest.hookimpl(trylast=True)\n"
        "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n",
    )
    pushed = repo.commit("a plugin by the settings")
    result = verify(repo, check, pushed, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.NO_VERDICT, result
    assert result.detail.startswith("pytest.ini is not pinned"), result.detail


@pytest.mark.parametrize("name", ["PYTEST_ADDOPTS", "PYTEST_PLUGINS"])
def test_pytest_s_own_variables_reach_no_verifier_that_does_not_pass_them(name: str) -> None:
    """pytest reads these as it starts, as it reads addopts: only a verification whose
    env_pass names one gets it, and on a server only a reviewed one."""
    environ = {name: "-p evil_plugin", "PATH": "/usr/bin"}
    env, _ = verifier_env(environ, env_pass=(), commit="c", entity_key="k", environment=None)
    assert name not in env
    env, _ = verifier_env(
        environ, env_pass=(name,), commit="c", entity_key="k", environment=None, pusher_env=True
    )
    assert name not in env
