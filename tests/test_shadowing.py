"""An unpinned path cannot stand in for a pinned module: real repositories, real Python."""

from __future__ import annotations

import importlib.util
import os
import py_compile
import subprocess
import sys
from collections.abc import Callable
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

from failgate_hooks.core.events import Verification
from failgate_hooks.core.gates import VerifierOutcome
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify.installed import installed_names
from failgate_hooks.verify.pins import Pin, resolve_pins
from failgate_hooks.verify.shadowing import module_stem, shadowing
from tests.conftest import Repo, make_repo
from tests.test_verify import PY, runs, verify

# Passes only when the lenient stand-in is imported: the pinned helper always fails.
CHECK = """\
import sys
import helper
with open(sys.argv[1], "a") as marker:
    marker.write("ran\\n")
sys.exit(0 if helper.LENIENT else 1)
"""
LENIENT = "LENIENT = True\n"


@pytest.fixture
def world(tmp_path: Path) -> Repo:
    """A verifier that imports its pinned helper, both committed."""
    repo = make_repo(tmp_path / "repo")
    repo.write("checks/check.py", CHECK)
    repo.write("checks/helper.py", "LENIENT = False\n")
    repo.commit("a verifier and its helper")
    return repo


def verification(marker: Path, *files: str) -> Verification:
    pinned = files or ("checks/check.py", "checks/helper.py")
    return Verification(command=(PY, "checks/check.py", str(marker)), files=pinned)


def shadowed(
    world: Repo,
    marker: Path,
    path: str,
    *,
    check: Verification | None = None,
    marker_runs: list[str] | None = None,
    pinned_from: str | None = None,
) -> None:
    """The commit's `path` refuses the run before anything runs, and names itself."""
    result = verify(world, check or verification(marker), pinned_from=pinned_from)
    assert result.outcome is VerifierOutcome.NO_VERDICT, result
    assert result.detail.startswith(f"{path} is not pinned"), result.detail
    assert "pin it too" in result.detail
    assert runs(marker) == (marker_runs or [])


def test_the_pinned_helper_is_what_runs(world: Repo, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    result = verify(world, verification(marker))
    assert result.outcome is VerifierOutcome.FAILED, result
    assert runs(marker) == ["ran"]


def test_a_package_folder_shadows_a_pinned_module(world: Repo, tmp_path: Path) -> None:
    world.write("checks/helper/__init__.py", LENIENT)
    world.commit("a package beside the module")
    shadowed(world, tmp_path / "marker", "checks/helper/__init__.py")


def test_a_namespace_folder_with_any_file_shadows_it_too(world: Repo, tmp_path: Path) -> None:
    world.write("checks/helper/data.txt", "not code, but a folder Python would consider\n")
    world.commit("a folder named like the module")
    shadowed(world, tmp_path / "marker", "checks/helper/data.txt")


@pytest.mark.parametrize("suffix", [*EXTENSION_SUFFIXES, ".pyc"])
def test_an_extension_module_or_a_compiled_file_shadows_a_pinned_module(
    world: Repo, tmp_path: Path, suffix: str
) -> None:
    world.write(f"checks/helper{suffix}", "not really a shared object\n")
    world.commit(f"a helper{suffix}")
    shadowed(world, tmp_path / "marker", f"checks/helper{suffix}")


def test_a_committed_unchecked_pyc_shadows_a_pinned_module(world: Repo, tmp_path: Path) -> None:
    source = tmp_path / "lenient.py"
    source.write_text(LENIENT)
    cached = importlib.util.cache_from_source("checks/helper.py")
    (world.path / cached).parent.mkdir()
    py_compile.compile(
        str(source), cfile=str(world.path / cached), doraise=True,
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )  # fmt: skip
    world.commit("a compiled helper")
    shadowed(world, tmp_path / "marker", cached)


def test_a_link_named_like_the_module_or_its_cache_shadows_it(world: Repo, tmp_path: Path) -> None:
    (world.path / "elsewhere").mkdir()
    world.write("elsewhere/__init__.py", LENIENT)
    os.symlink("../elsewhere", world.path / "checks/helper")
    world.commit("a link to a package")
    shadowed(world, tmp_path / "marker", "checks/helper")
    os.unlink(world.path / "checks/helper")
    os.symlink("../elsewhere", world.path / "checks/__pycache__")
    world.commit("a link for the cache folder")
    shadowed(world, tmp_path / "marker", "checks/__pycache__")


def test_a_pinned_package_is_shadowed_by_an_extension_init(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.write("checks/check.py", CHECK)
    repo.write("checks/helper/__init__.py", "LENIENT = False\n")
    repo.write("checks/helper/__init__.abi3.so", "not really a shared object\n")
    repo.commit("a pinned package and an unpinned extension init")
    files = ("checks/check.py", "checks/helper/__init__.py")
    marker = tmp_path / "marker"
    shadowed(repo, marker, "checks/helper/__init__.abi3.so", check=verification(marker, *files))


def test_a_root_module_is_judged_in_the_root_folder(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.write("check.py", CHECK)
    repo.write("helper.py", "LENIENT = False\n")
    repo.write("helper/__init__.py", LENIENT)
    repo.commit("a verifier at the root")
    marker = tmp_path / "marker"
    check = Verification(command=(PY, "check.py", str(marker)), files=("check.py", "helper.py"))
    result = verify(repo, check)
    assert result.outcome is VerifierOutcome.NO_VERDICT
    assert "pin the checkout's root folder whole" in result.detail


def test_the_shadow_pinned_too_or_the_folder_pinned_whole_runs(world: Repo, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    world.write("checks/helper/__init__.py", "LENIENT = False\n")
    world.commit("a reviewed package beside the module")
    files = ("checks/check.py", "checks/helper.py", "checks/helper/__init__.py")
    assert verify(world, verification(marker, *files)).outcome is VerifierOutcome.FAILED
    assert verify(world, verification(marker, "checks")).outcome is VerifierOutcome.FAILED
    assert runs(marker) == ["ran", "ran"]


def test_a_shadow_added_after_review_is_removed_when_the_folder_is_pinned_whole(
    world: Repo, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    reviewed = world.head()
    world.write("checks/helper/__init__.py", LENIENT)
    pushed = world.commit("a lenient package in the pinned folder")
    result = verify(world, verification(marker, "checks"), pushed, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.FAILED, result
    assert runs(marker) == ["ran"]


def test_unrelated_neighbours_are_no_shadow(world: Repo, tmp_path: Path) -> None:
    for path in (
        "checks/helpers.py",
        "checks/helper.txt",
        "checks/helper_test.py",
        "checks/__pycache__/other.cpython-311.pyc",
        "helper/__init__.py",  # another folder: not where Python looks first
    ):
        world.write(path, "x = 1\n")
    world.commit("neighbours")
    marker = tmp_path / "marker"
    assert verify(world, verification(marker)).outcome is VerifierOutcome.FAILED
    assert runs(marker) == ["ran"]


@pytest.mark.parametrize("path", ["checks/json.py", "checks/json/__init__.py", "checks/re.pyc"])
def test_a_standard_library_name_beside_a_pinned_script_shadows_it(
    world: Repo, tmp_path: Path, path: str
) -> None:
    """Python looks in the script's folder before the standard library."""
    reviewed = world.head()
    world.write(path, LENIENT)
    world.commit("a module named as the standard library's")
    shadowed(world, tmp_path / "marker", path, pinned_from=reviewed)


def test_a_standard_library_name_pinned_or_without_init_is_no_shadow(
    world: Repo, tmp_path: Path
) -> None:
    world.write("checks/json.py", "from json import *\n")
    world.write("checks/email/fixture.txt", "a folder of data, not a package\n")
    world.commit("a pinned json and a data folder")
    marker = tmp_path / "marker"
    pinned = verification(marker, "checks/check.py", "checks/helper.py", "checks/json.py")
    assert verify(world, pinned).outcome is VerifierOutcome.FAILED
    assert runs(marker) == ["ran"]


@pytest.mark.parametrize("path", ["checks/simplejson.py", "checks/yaml/__init__.py"])
def test_a_module_the_reviewed_folder_did_not_offer_shadows_whatever_its_name(
    world: Repo, tmp_path: Path, path: str
) -> None:
    """The script's folder is first for every import, also of a module installed or
    missing: a name the reviewed revision did not offer there takes that import."""
    reviewed = world.head()
    world.write(path, LENIENT)
    pushed = world.commit("a module beside the check")
    marker = tmp_path / "marker"
    result = verify(world, verification(marker), pushed, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.NO_VERDICT, result
    assert result.detail.startswith(f"{path} is not pinned, and "), result.detail
    assert runs(marker) == []


def test_a_module_the_reviewed_folder_offered_is_the_commits_to_change(
    world: Repo, tmp_path: Path
) -> None:
    """A neighbour the reviewed script could already import is unpinned code like any
    other the commit brings; pinning it is the team's choice. Without a reviewed
    revision (nothing protected) the commit's folder is the one offered."""
    world.write("checks/other_check.py", "x = 1\n")
    reviewed = world.commit("another gate's script beside this one")
    world.write("checks/other_check.py", "x = 2\n")
    world.write("checks/notes.txt", "not a module\n")
    pushed = world.commit("the other script changes")
    marker = tmp_path / "marker"
    result = verify(world, verification(marker), pushed, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.FAILED, result
    world.write("checks/simplejson.py", LENIENT)
    unreviewed = world.commit("a new module, and nothing protected")
    assert verify(world, verification(marker), unreviewed).outcome is VerifierOutcome.FAILED
    assert runs(marker) == ["ran", "ran"]


def test_module_stem_knows_every_suffix_python_loads() -> None:
    assert module_stem("helper.py") == "helper"
    assert module_stem("helper.pyc") == "helper"
    assert module_stem("helper.abi3.so") == "helper"
    for suffix in EXTENSION_SUFFIXES:
        assert module_stem(f"helper{suffix}") == "helper"
    assert module_stem("helper.txt") is None
    assert module_stem(".py") is None
    # the verifier's Python need not be failgate's: every interpreter's names count
    assert module_stem("helper.cpython-312-x86_64-linux-gnu.so") == "helper"
    assert module_stem("helper.cpython-39-darwin.so") == "helper"
    assert module_stem("helper.pypy310-pp73-x86_64-linux-gnu.so") == "helper"
    assert module_stem("helper.cp312-win_amd64.pyd") == "helper"
    assert module_stem("helper.pyd") == "helper"


def test_a_namespace_folder_the_reviewed_revision_lacked_is_judged(
    world: Repo, tmp_path: Path
) -> None:
    """A folder without `__init__` beside the script is a namespace portion: it extends
    an installed namespace package of its name (`google.protobuf` from
    checks/google/protobuf/), and is imported where none is installed."""
    reviewed = world.head()
    world.write("checks/google/protobuf/__init__.py", LENIENT)
    world.write("checks/fixtures/budget.json", "{}\n")  # data, no module: no portion
    pushed = world.commit("a portion of a namespace package, and data")
    marker = tmp_path / "marker"
    result = verify(world, verification(marker), pushed, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.NO_VERDICT, result
    assert result.detail.startswith("checks/google is not pinned, and "), result.detail


@pytest.mark.parametrize(
    "command",
    [
        ("coverage", "run", "-m", "checks.gate"),
        ("uv", "run", "-m", "checks.gate"),
        ("coverage", "run", "--module", "checks.gate"),
        ("uv", "run", "--module", "checks.gate"),
        ("ash", "-c", "python3 -m checks.gate"),
        ("fish", "-c", "python3 -m checks.gate"),
    ],
)
def test_another_launcher_of_python_m_is_judged_too(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    """`coverage run -m`, `uv run --module`, and a `python3 -m` inside any shell's `-c`
    (busybox `ash`, `fish`) import as `python -m` does: checks/__init__.py first."""
    repo = make_repo(tmp_path / "repo")
    repo.write("checks/gate.py", GATE)
    reviewed = repo.commit("a verifier run as a module")
    repo.write("checks/__init__.py", "import os\nos._exit(0)\n")
    pushed = repo.commit("code that runs before the pinned module")
    with GitRepo.open(repo.path) as grepo:
        pins = resolve_pins(grepo, reviewed, ("checks/gate.py",))
        why = shadowing(grepo, pushed, pins, command, reviewed)
    assert why is not None and why.startswith("checks/__init__.py is not pinned"), why


def test_a_pass_cached_for_the_same_inputs_answers_as_a_run_would(
    world: Repo, tmp_path: Path
) -> None:
    """With `inputs`, a commit that adds a shadow has the same cache key as one that
    does not: the cached answer must still be the one a run would give."""
    marker = tmp_path / "marker"
    world.write("checks/helper.py", "LENIENT = True\n")
    world.commit("a helper that passes")
    check = Verification(
        command=(PY, "checks/check.py", str(marker)),
        files=("checks/check.py", "checks/helper.py"),
        inputs=("budget.txt",),
    )
    assert verify(world, check).outcome is VerifierOutcome.PASSED
    world.write("checks/helper/__init__.py", LENIENT)
    world.commit("a package beside the module")
    shadowed(world, marker, "checks/helper/__init__.py", check=check, marker_runs=["ran"])


# Passes only when the commit's json.py stands in for the standard library's.
GATE = """\
import json
import sys
with open(sys.argv[1], "a") as marker:
    marker.write("ran\\n")
sys.exit(0 if json.loads('{"ok": false}')["ok"] else 1)
"""


def _gate_as_code(marker: Path) -> str:
    """`python -c` code that runs checks.gate with `marker` as its argument."""
    run = "import runpy; runpy.run_module('checks.gate', run_name='__main__')"
    return f"import sys; sys.argv[1:] = [{str(marker)!r}]; {run}"


# Each runs Python so that the checkout's root comes first on sys.path: `-m` and `-c`,
# alone or among other short options (`-Bm` is `-B -m`), or started by another program.
ROOT_FIRST = {
    "-m": lambda marker: (PY, "-m", "checks.gate", str(marker)),
    "-c": lambda marker: (PY, "-c", _gate_as_code(marker)),
    "-Bm": lambda marker: (PY, "-Bm", "checks.gate", str(marker)),
    "-u -Em": lambda marker: (PY, "-u", "-Em", "checks.gate", str(marker)),
    "-qm": lambda marker: (PY, "-qm", "checks.gate", str(marker)),
    "-mchecks.gate": lambda marker: (PY, "-mchecks.gate", str(marker)),
    "env": lambda marker: ("env", "LC_ALL=C", PY, "-m", "checks.gate", str(marker)),
}


@pytest.mark.parametrize("how", sorted(ROOT_FIRST))
def test_a_standard_library_name_at_the_root_shadows_it_when_python_looks_there_first(
    tmp_path: Path, how: str
) -> None:
    """`python -m`, `python -c` (and the same among other options, or under `env`) put
    the checkout's root first on sys.path: a json.py there is what the pinned module
    imports."""
    repo = make_repo(tmp_path / "repo")
    repo.write("checks/gate.py", GATE)
    reviewed = repo.commit("a verifier run as a module")
    repo.write("json.py", "def loads(_text):\n    return {'ok': True}\n")
    repo.commit("a json of the commit's own, at the root")
    marker = tmp_path / "marker"
    command = ROOT_FIRST[how](marker)
    check = Verification(command=command, files=("checks/gate.py",))
    result = verify(repo, check, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.NO_VERDICT, (result, runs(marker))
    assert result.detail.startswith("json.py is not pinned, and "), result.detail
    assert "the checkout's root folder" in result.detail
    assert runs(marker) == []


def test_a_verifier_that_pins_nothing_is_not_refused_for_a_root_package_of_a_standard_name(
    tmp_path: Path,
) -> None:
    """The project's own email/ package (or types.py, …) at the root is the commit's, as
    everything is for a verifier that pins no file: there is no pinned module for it to
    stand in for, and `python3 -c` (or `-m pytest`) must still give its verdict."""
    repo = make_repo(tmp_path / "repo")
    repo.write("email/__init__.py", "")
    repo.write("email/send.py", "def send():\n    pass\n")
    repo.commit("the project's own email package")
    marker = tmp_path / "marker"
    code = f"open({str(marker)!r}, 'a').write('ran\\n')"
    result = verify(repo, Verification(command=(PY, "-c", code), files=()))
    assert result.outcome is VerifierOutcome.PASSED, result
    assert runs(marker) == ["ran"]


@pytest.mark.parametrize("how", ["-m", "-mchecks.gate", "env"])
@pytest.mark.parametrize("path", ["checks/__init__.py", "checks.py"])
def test_the_package_python_m_imports_before_the_pinned_module_is_judged(
    tmp_path: Path, path: str, how: str
) -> None:
    """`python -m checks.gate` imports `checks` before the pinned checks/gate.py: a
    checks/__init__.py the reviewed revision did not have (checks/ was a namespace
    folder), or a checks.py at the root, is unpinned code that runs first and may end
    the process with 0. Neither is judged: `__init__` is taken for the folder's own
    marker, and at the root only standard library names count."""
    repo = make_repo(tmp_path / "repo")
    repo.write("checks/gate.py", GATE)
    reviewed = repo.commit("a verifier run as a module")
    repo.write(path, "import os\nos._exit(0)\n")
    pushed = repo.commit("code that runs before the pinned module")
    marker = tmp_path / "marker"
    check = Verification(command=ROOT_FIRST[how](marker), files=("checks/gate.py",))
    result = verify(repo, check, pushed, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.NO_VERDICT, result
    assert result.detail.startswith(f"{path} is not pinned"), result.detail


@pytest.mark.parametrize("path", ["conftest.py", "checks/conftest.py"])
def test_an_unpinned_conftest_above_a_pinned_test_file_cannot_decide_its_verdict(
    tmp_path: Path, path: str
) -> None:
    """`python -m pytest checks/test_budget.py` with the test file pinned: pytest loads
    every conftest.py from the root down to the test's folder, and one the commit adds
    can set the session's exit status to 0 over a failing pinned test. checks/ is
    judged (a name its reviewed folder lacked); the root is not, for `conftest` is no
    standard library name."""
    repo = make_repo(tmp_path / "repo")
    repo.write("checks/test_budget.py", "def test_budget():\n    assert False\n")
    reviewed = repo.commit("a pinned test that fails")
    repo.write(
        path,
        "import pytest\n\n\n@pytest.hookimpl(trylast=True)\n"
        "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n",
    )
    pushed = repo.commit("a conftest")
    command = (PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "checks/test_budget.py")
    check = Verification(command=command, files=("checks/test_budget.py",))
    result = verify(repo, check, pushed, pinned_from=reviewed)
    assert result.outcome is not VerifierOutcome.PASSED, result
    assert verify(repo, check, reviewed).outcome is VerifierOutcome.FAILED


MAIN = """\
import sys
with open(sys.argv[1], "a") as marker:
    marker.write("ran\\n")
sys.exit(1)
"""


@pytest.mark.parametrize(
    ("module", "main", "path"),
    [
        ("checks", "checks/__main__.py", "checks/__init__.py"),
        ("checks", "checks/__main__.py", "checks.py"),
        ("checks.gate", "checks/gate/__main__.py", "checks/gate/__init__.py"),
    ],
)
def test_python_m_of_a_package_judges_the_package_it_runs_too(
    tmp_path: Path, module: str, main: str, path: str
) -> None:
    """`python -m checks` runs the package checks: Python imports checks/__init__.py
    (or, checks/ being a namespace folder, a root checks.py in its place) before the
    pinned checks/__main__.py. The rule takes the last part of the -m name for a module
    and judges only the packages before it, so a new checks/__init__.py (or checks.py,
    or checks/gate/__init__.py for `-m checks.gate`) that ends the process with 0 is
    never judged, and the pass stands over the pinned __main__ that fails."""
    repo = make_repo(tmp_path / "repo")
    repo.write(main, MAIN)
    reviewed = repo.commit("a verifier run as a package's __main__")
    marker = tmp_path / "marker"
    check = Verification(command=(PY, "-m", module, str(marker)), files=(main,))
    assert verify(repo, check, reviewed).outcome is VerifierOutcome.FAILED
    repo.write(path, "import os\nos._exit(0)\n")
    pushed = repo.commit("code that runs before the pinned __main__")
    result = verify(repo, check, pushed, pinned_from=reviewed)
    assert result.outcome is not VerifierOutcome.PASSED, (result, runs(marker))


def a_new_init_cannot_decide(tmp_path: Path, command: Callable[[Path], tuple[str, ...]]) -> None:
    """checks/gate.py, pinned, fails under `command`; a checks/__init__.py the commit adds
    that ends the process with 0 first must not turn that into a pass."""
    repo = make_repo(tmp_path / "repo")
    repo.write("checks/gate.py", GATE)
    reviewed = repo.commit("a verifier run as a module")
    marker = tmp_path / "marker"
    check = Verification(command=command(marker), files=("checks/gate.py",))
    assert verify(repo, check, reviewed).outcome is VerifierOutcome.FAILED
    repo.write("checks/__init__.py", "import os\nos._exit(0)\n")
    pushed = repo.commit("code that runs before the pinned module")
    result = verify(repo, check, pushed, pinned_from=reviewed)
    assert result.outcome is not VerifierOutcome.PASSED, (result, runs(marker))


@pytest.mark.parametrize(
    "command",
    [
        lambda marker: ("sh", "-c", f"{PY} -m checks.gate {marker} && echo passed"),
        lambda marker: ("env", "-S", f"{PY} -m checks.gate {marker}"),
        lambda marker: (PY, "-m", "runpy", "checks.gate", str(marker)),
    ],
    ids=["sh -c", "env -S", "-m runpy"],
)
def test_python_m_inside_a_shell_string_judges_the_package_it_imports_first(
    tmp_path: Path, command: object
) -> None:
    """`record` asks for `sh -c '…'` when a command needs a shell operator. Inside that
    string `python -m checks.gate` imports checks/__init__.py before the pinned module,
    but the rule reads `-c` as `python -c` (the root, standard library names only) and
    never sees the -m module, so a new checks/__init__.py that exits 0 decides the
    verdict. The same for `env -S`, whose one argument is the whole command, and for
    `python -m runpy checks.gate` (as `python -m coverage run -m checks.gate`): only
    the first -m is read, and it names a module with no package on its way."""
    assert callable(command)
    a_new_init_cannot_decide(tmp_path, command)


def test_an_unpinned_package_init_above_a_pinned_test_file_cannot_decide_its_verdict(
    tmp_path: Path,
) -> None:
    """`python -m pytest checks/test_budget.py` with the test file pinned: with a
    checks/__init__.py, pytest imports the test as `checks.test_budget`, running that
    __init__ first. One the reviewed revision lacked (checks/ was a plain folder) can
    end the process with 0 during collection: conftest is judged on the way, the
    package's own __init__ is not."""
    repo = make_repo(tmp_path / "repo")
    repo.write("checks/test_budget.py", "def test_budget():\n    assert False\n")
    reviewed = repo.commit("a pinned test that fails")
    command = (PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "checks/test_budget.py")
    check = Verification(command=command, files=("checks/test_budget.py",))
    assert verify(repo, check, reviewed).outcome is VerifierOutcome.FAILED
    repo.write("checks/__init__.py", "import os\nos._exit(0)\n")
    pushed = repo.commit("the checks folder becomes a package")
    result = verify(repo, check, pushed, pinned_from=reviewed)
    assert result.outcome is not VerifierOutcome.PASSED, result


# --------------------------------------------------------------------------- review 3


@pytest.mark.parametrize(
    "command",
    [
        lambda marker: ("bash", "-o", "pipefail", "-c", f"{PY} -m checks.gate {marker}"),
        lambda marker: ("sh", "-e", "-c", f"{PY} -m checks.gate {marker}"),
        lambda marker: ("bash", "--norc", "-c", f"{PY} -m checks.gate {marker}"),
        lambda marker: ("sh", "-c", "--", f"{PY} -m checks.gate {marker}"),
        lambda marker: ("env", f"--split-string={PY} -m checks.gate {marker}"),
        lambda marker: ("env", "-i", "-S", f"{PY} -m checks.gate {marker}"),
    ],
    ids=["bash -o pipefail -c", "sh -e -c", "bash --norc -c", "sh -c --", "env --split-string=",
         "env -i -S"],
)  # fmt: skip
def test_python_m_in_a_shell_string_after_another_option_judges_its_package(
    tmp_path: Path, command: object
) -> None:
    """`_tokens` reads a shell's command string only when the word just before `-c` is
    the shell itself, and env's only for `-S` right after `env`. `bash -o pipefail -c
    '…'`, `sh -e -c '…'`, `bash --norc -c '…'`, `sh -c -- '…'`, `env -i -S '…'` and
    `env --split-string=…` are as ordinary (the first is what strict CI scripts use),
    and run the same `python -m checks.gate`: its new checks/__init__.py ends the run
    with 0 before the pinned module is imported, and nothing judges it."""
    assert callable(command)
    a_new_init_cannot_decide(tmp_path, command)


@pytest.mark.parametrize(
    ("command", "path"),
    [
        (lambda marker: ("env", "PYTHONPATH=.", PY, "checks/gate.py", str(marker)), "json.py"),
        (lambda marker: ("sh", "-c", f"PYTHONPATH=. {PY} checks/gate.py {marker}"), "json.py"),
        (
            lambda marker: ("env", "PYTHONPATH=.", PY, "checks/gate.py", str(marker)),
            "sitecustomize.py",
        ),
    ],
    ids=["env PYTHONPATH=. json.py", "sh -c PYTHONPATH=. json.py", "sitecustomize.py"],
)
def test_pythonpath_in_the_command_puts_the_root_before_the_standard_library(
    tmp_path: Path, command: object, path: str
) -> None:
    """`PYTHONPATH=. python3 checks/gate.py` (to import the project's own code) puts the
    checkout's root on sys.path before the standard library, and Python imports a root
    sitecustomize.py at start-up from it. The root is judged only under `-m` and `-c`,
    so a json.py (or sitecustomize.py) the commit adds there decides the verdict of the
    pinned gate.py."""
    repo = make_repo(tmp_path / "repo")
    repo.write("checks/gate.py", GATE)
    reviewed = repo.commit("a verifier that can import the project")
    marker = tmp_path / "marker"
    assert callable(command)
    check = Verification(command=command(marker), files=("checks/gate.py",))
    assert verify(repo, check, reviewed).outcome is VerifierOutcome.FAILED
    lenient = (
        "import os\nos._exit(0)\n"
        if path == "sitecustomize.py"
        else "def loads(_text):\n    return {'ok': True}\n"
    )
    repo.write(path, lenient)
    pushed = repo.commit("a module of the commit's own, at the root")
    result = verify(repo, check, pushed, pinned_from=reviewed)
    assert result.outcome is not VerifierOutcome.PASSED, (result, runs(marker))


def test_a_shell_script_named_in_the_command_makes_its_folder_no_python_folder(
    tmp_path: Path,
) -> None:
    """`sh checks/check.sh`, the shell script pinned: no Python runs, yet a pinned file
    the command names is taken for a script Python runs, its folder for one Python looks
    in first, and every new name there counts. The team's new checks/plot.py, which the
    check never runs, gives the reviewed shell check no verdict."""
    repo = make_repo(tmp_path / "repo")
    marker = tmp_path / "marker"
    repo.write("checks/check.sh", 'echo ran >> "$1"\nexit 1\n')
    reviewed = repo.commit("a shell check")
    repo.write("checks/plot.py", "print('a chart of the budget')\n")
    pushed = repo.commit("a chart script beside the check")
    check = Verification(command=("sh", "checks/check.sh", str(marker)), files=("checks/check.sh",))
    result = verify(repo, check, pushed, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.FAILED, result
    assert runs(marker) == ["ran"]


@pytest.mark.parametrize("path", ["checks/fixtures/eu/budget.json", "checks/.cases/eu/a.json"])
def test_a_data_folder_with_subfolders_beside_a_pinned_script_is_no_module(
    world: Repo, tmp_path: Path, path: str
) -> None:
    """checks/fixtures/budget.json is data, no portion (as the namespace test says), but
    once the team sorts its fixtures into checks/fixtures/eu/ the folder holds a folder
    and is taken for a namespace portion of a new name: no verdict, and on a push a
    pinned-files relaxation. No module lies anywhere beneath it; `.cases` cannot even
    be named by an import."""
    reviewed = world.head()
    world.write(path, "{}\n")
    pushed = world.commit("fixtures sorted by region")
    marker = tmp_path / "marker"
    result = verify(world, verification(marker), pushed, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.FAILED, result
    assert runs(marker) == ["ran"]


def test_a_conftest_added_inside_a_folder_pinned_whole_is_not_what_runs(tmp_path: Path) -> None:
    """`python -m pytest checks` with checks/ pinned whole: the checkout's checks/ is the
    reviewed revision's, so a checks/conftest.py the commit adds there is removed
    before pytest starts. The first-folder rule does not know pinned folders (the
    rival rule does) and refuses the run for a file that is not there."""
    repo = make_repo(tmp_path / "repo")
    repo.write("checks/test_budget.py", "def test_budget():\n    assert False\n")
    reviewed = repo.commit("a pinned test folder")
    repo.write("checks/conftest.py", "import os\nos._exit(0)\n")
    pushed = repo.commit("a conftest in the pinned folder")
    command = (PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "checks")
    check = Verification(command=command, files=("checks",))
    assert verify(repo, check, reviewed).outcome is VerifierOutcome.FAILED
    result = verify(repo, check, pushed, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.FAILED, result


@pytest.mark.parametrize(
    ("wrapper", "command"),
    [
        ("Makefile", ("make", "-s", "check")),
        ("checks/run.sh", ("sh", "checks/run.sh")),
    ],
    ids=["make check", "sh checks/run.sh"],
)
def test_python_m_in_a_pinned_wrapper_judges_the_package_it_imports_first(
    tmp_path: Path, wrapper: str, command: tuple[str, ...]
) -> None:
    """`make check`, its Makefile pinned with the module, runs `python -m checks.gate`
    from its recipe; a pinned checks/run.sh the same. The rule reads the command and
    never the pinned file that starts Python, so checks/ is judged as a script's folder,
    where `__init__` is no import, and a new checks/__init__.py that exits 0 decides."""
    repo = make_repo(tmp_path / "repo")
    repo.write("checks/gate.py", GATE)
    marker = tmp_path / "marker"
    line = f"{PY} -m checks.gate {marker}"
    repo.write(wrapper, f"check:\n\t{line}\n" if wrapper == "Makefile" else f"{line}\n")
    reviewed = repo.commit("a verifier run as a module by a wrapper")
    check = Verification(command=command, files=(wrapper, "checks/gate.py"))
    assert verify(repo, check, reviewed).outcome is VerifierOutcome.FAILED
    repo.write("checks/__init__.py", "import os\nos._exit(0)\n")
    pushed = repo.commit("code that runs before the pinned module")
    result = verify(repo, check, pushed, pinned_from=reviewed)
    assert result.outcome is not VerifierOutcome.PASSED, (result, runs(marker))


# --------------------------------------------------------------------------- review 6


def _why(
    repo: Repo, reviewed: str, pushed: str, files: tuple[str, ...], command: tuple[str, ...]
) -> str | None:
    with GitRepo.open(repo.path) as grepo:
        pins = resolve_pins(grepo, reviewed, files)
        return shadowing(grepo, pushed, pins, command, reviewed)


@pytest.mark.parametrize("path", ["types/__init__.py", "code/__init__.py", "secrets.py"])
def test_a_root_module_of_a_standard_name_is_no_shadow_for_a_script_run_by_path(
    world: Repo, tmp_path: Path, path: str
) -> None:
    """`python3 checks/check.py` puts checks/ first on sys.path, never the checkout's
    root: a root types/ package (the project's type stubs), a code/ package or a
    secrets.py the commit adds cannot be imported by the pinned script under that name.
    The root is judged for the standard library's names whenever the command starts
    Python at all, not only under `-m`/`-c`, so the honest push gets no verdict (and a
    pinned-files relaxation on a server)."""
    reviewed = world.head()
    world.write(path, "x = 1\n")
    pushed = world.commit("a root module of the project's own")
    marker = tmp_path / "marker"
    result = verify(world, verification(marker), pushed, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.FAILED, result
    assert runs(marker) == ["ran"]


def test_a_new_module_beside_a_pinned_module_run_with_m_is_judged_as_a_scripts_neighbour(
    tmp_path: Path,
) -> None:
    """`python -m checks.gate`, checks/ a package: this command puts the root first, not
    checks/, but a wrapper may as well run checks/gate.py by a path no reading of the
    command recognises, and then checks/ is first for every import. The folder of every
    pinned Python file is judged for any name, whatever the command: a new
    checks/other_gate.py must be pinned too, or checks/ pinned whole."""
    repo = make_repo(tmp_path / "repo")
    repo.write("checks/__init__.py", "")
    repo.write("checks/gate.py", GATE)
    reviewed = repo.commit("a verifier package run as a module")
    repo.write("checks/other_gate.py", "x = 1\n")
    pushed = repo.commit("another gate's script in the package")
    marker = tmp_path / "marker"
    files = ("checks/__init__.py", "checks/gate.py")
    check = Verification(command=(PY, "-m", "checks.gate", str(marker)), files=files)
    result = verify(repo, check, pushed, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.NO_VERDICT, result
    assert "checks/other_gate.py is not pinned" in result.detail
    assert runs(marker) == []
    whole = Verification(command=(PY, "-m", "checks.gate", str(marker)), files=("checks",))
    result = verify(repo, whole, pushed, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.FAILED, result  # the folder pinned whole
    assert runs(marker) == ["ran"]


@pytest.mark.parametrize(
    "command",
    [
        ("sh", "-c", "cd checks && exec python3 check.py"),
        ("sh", "-c", 'python3 "$PWD/checks/check.py"'),
        ("sh", "checks/run.sh"),
        ("coverage", "run", "checks/check.py"),
        ("uv", "run", "checks/check.py"),
    ],
)
def test_a_module_beside_a_pinned_script_is_judged_however_the_command_starts_it(
    world: Repo, command: tuple[str, ...]
) -> None:
    """Python puts a script's folder first on sys.path however a wrapper names it; the
    command's form is not read for it."""
    world.write("checks/run.sh", 'python3 "$(dirname "$0")/check.py"\n')
    reviewed = world.commit("a wrapper")
    world.write("checks/json.py", LENIENT)
    pushed = world.commit("a json beside the check")
    why = _why(world, reviewed, pushed, ("checks/check.py", "checks/run.sh"), command)
    assert why is not None and "checks/json.py is not pinned, and " in why, why


@pytest.mark.parametrize("package", [True, False], ids=["tests package", "plain tests folder"])
def test_a_new_test_module_beside_a_pinned_test_file_is_no_shadow(
    tmp_path: Path, package: bool
) -> None:
    """`python -m pytest tests/test_budget.py`, that file pinned: the team adds
    tests/test_api.py, which pytest never collects (it was given one file) and no
    pinned test imports. With tests/ a package, tests/ is not even on sys.path (pytest
    puts the root there); as a plain folder it is, but a new test_*.py module is what
    every push of a tested project brings. Each is refused as a first-folder shadow."""
    repo = make_repo(tmp_path / "repo")
    if package:
        repo.write("tests/__init__.py", "")
    repo.write("tests/test_budget.py", "def test_budget():\n    assert True\n")
    reviewed = repo.commit("a pinned test")
    repo.write("tests/test_api.py", "def test_api():\n    assert True\n")
    pushed = repo.commit("a new test of the api")
    command = (PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_budget.py")
    files = ("tests/__init__.py", "tests/test_budget.py") if package else ("tests/test_budget.py",)
    check = Verification(command=command, files=files)
    result = verify(repo, check, pushed, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.PASSED, result


@pytest.mark.parametrize(
    ("command", "path"),
    [
        (("env", "PYTHONPATH=src", PY, "checks/check.py"), "src/reports.py"),
        (("env", "PYTHONPATH=.", PY, "checks/check.py"), "noxfile.py"),
        (("env", "PYTHONPATH=src:tests", PY, "checks/check.py"), "tests/test_api.py"),
    ],
    ids=["src/reports.py", "noxfile.py", "tests/test_api.py"],
)
def test_a_new_module_of_the_project_under_test_on_pythonpath_is_no_shadow(
    world: Repo, command: tuple[str, ...], path: str
) -> None:
    """`PYTHONPATH=src python3 checks/check.py` is how a check imports the project under
    test, which is the commit's by design (as the root is under `-m`, judged for the
    standard library's names only). Every PYTHONPATH folder is judged for any name, so
    every new module of the project (src/reports.py, a new root noxfile.py under
    `PYTHONPATH=.`, a new test module under `PYTHONPATH=src:tests`) refuses the run. The
    rule blocks the ordinary growth of a src layout."""
    world.write("src/budget/__init__.py", "")
    world.write("tests/test_budget.py", "def test_budget():\n    pass\n")
    reviewed = world.commit("a src layout")
    world.write(path, "x = 1\n")
    pushed = world.commit("the project grows")
    why = _why(world, reviewed, pushed, ("checks/check.py", "checks/helper.py"), command)
    assert why is None, why


def test_an_empty_pythonpath_puts_no_folder_on_sys_path(world: Repo) -> None:
    """`PYTHONPATH= python3 checks/check.py` clears an inherited PYTHONPATH; Python ignores
    an empty one (no folder is added). `_pythonpath` reads the empty value as `.` and
    judges the root for any name: a new root module refuses the run."""
    reviewed = world.head()
    world.write("setup.py", "x = 1\n")
    pushed = world.commit("a setup.py at the root")
    command = ("env", "PYTHONPATH=", PY, "checks/check.py")
    why = _why(world, reviewed, pushed, ("checks/check.py", "checks/helper.py"), command)
    assert why is None, why


@pytest.mark.parametrize(
    "path", ["checks/__init__.py", "tools/__init__.py", "tools/ci/__init__.py"]
)
def test_a_package_init_on_the_way_to_a_script_run_by_path_is_no_shadow(
    tmp_path: Path, path: str
) -> None:
    """`python3 tools/ci/check.py` (or checks/check.py) runs the pinned file as a script:
    Python imports no package on its way, so a tools/__init__.py the team adds (to let
    its unit tests import `tools.ci.check`) never runs in the gate. The packages on the
    way are judged for every pinned Python file, however Python reaches it, and
    `__init__` counts as a new name in the script's own folder."""
    repo = make_repo(tmp_path / "repo")
    script = "checks/check.py" if path.startswith("checks/") else "tools/ci/check.py"
    repo.write(script, "import sys\nopen(sys.argv[1], 'a').write('ran\\n')\nsys.exit(1)\n")
    reviewed = repo.commit("a pinned script")
    repo.write(path, "")
    pushed = repo.commit("the folder becomes a package for the unit tests")
    marker = tmp_path / "marker"
    check = Verification(command=(PY, script, str(marker)), files=(script,))
    result = verify(repo, check, pushed, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.FAILED, result
    assert runs(marker) == ["ran"]


def test_a_pinned_path_no_revision_holds_is_judged_without_reading_its_blob(
    tmp_path: Path,
) -> None:
    """The pinned-file relaxation asks about a pinned path neither the protected revision
    nor the commit holds (main lost it): there is no blob to read a `#!` line from, and a
    command naming the path directly must not make the question fail."""
    repo = make_repo(tmp_path / "repo")
    reviewed = repo.commit("the check is gone")
    repo.write("checks/json.py", LENIENT)
    pushed = repo.commit("a module where the check was")
    lost = Pin("checks/check.py", "100644", "")
    with GitRepo.open(repo.path) as grepo:
        why = shadowing(grepo, pushed, [lost], ("checks/check.py",), reviewed)
    assert why is None or why.startswith("checks/json.py is not pinned"), why


def test_a_bytecode_cache_folder_beside_a_pinned_script_is_no_module(
    world: Repo, tmp_path: Path
) -> None:
    """`__pycache__` holds compiled files Python finds through their sources, never a
    package or namespace of that name: a cached file of an unpinned neighbour is no
    new module (one for a pinned module is a rival, judged above)."""
    reviewed = world.head()
    world.write("checks/__pycache__/other.cpython-311.pyc", "not really bytecode\n")
    pushed = world.commit("a committed bytecode cache")
    marker = tmp_path / "marker"
    result = verify(world, verification(marker), pushed, pinned_from=reviewed)
    assert result.outcome is VerifierOutcome.FAILED, result
    assert runs(marker) == ["ran"]


def _venv_with(path: Path, module: str) -> Path:
    """A virtualenv at `path` with `module` (a file name) in its site folder; its python."""
    subprocess.run([PY, "-m", "venv", "--without-pip", str(path)], check=True)
    (site,) = path.glob("lib/python*/site-packages")
    (site / module).write_text("x = 1\n")
    return path / "bin" / "python"


@pytest.mark.parametrize("how", ["by its path", "on PATH"])
def test_a_root_module_named_like_a_package_of_the_verifier_s_python_shadows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """The verifier's Python is not failgate's: budgetlib is installed in its virtualenv
    only. Under `-m` the root comes first, so a root budgetlib.py is what it imports;
    the virtualenv's site folder is read for its names, found as the command names it
    or on PATH."""
    python = _venv_with(tmp_path / "venv", "budgetlib.py")
    repo = make_repo(tmp_path / "repo")
    repo.write("checks/gate.py", GATE)
    reviewed = repo.commit("a verifier run as a module")
    repo.write("budgetlib.py", "x = 2\n")
    pushed = repo.commit("a budgetlib of the commit's own")
    program = str(python)
    if how == "on PATH":
        monkeypatch.setenv("PATH", f"{python.parent}{os.pathsep}{os.environ['PATH']}")
        program = "python"
    why = _why(repo, reviewed, pushed, ("checks/gate.py",), (program, "-m", "checks.gate"))
    assert why is not None and why.startswith("budgetlib.py is not pinned, and "), why
    assert "no module `budgetlib` in the checkout's root folder" in why


def test_the_checkout_s_own_python_is_never_read_for_installed_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`tools/venv/bin/python` names the checkout's file: what it has installed is the
    commit's to say, never read (its root budgetlib.py is the project's own), not even
    as the work tree failgate runs in has it."""
    repo = make_repo(tmp_path / "repo")
    monkeypatch.chdir(repo.path)
    _venv_with(repo.path / "tools" / "venv", "budgetlib.py")
    repo.write(".gitignore", "tools/venv/\n")
    repo.write("checks/gate.py", GATE)
    reviewed = repo.commit("a verifier run as a module")
    repo.write("budgetlib.py", "x = 2\n")
    pushed = repo.commit("a budgetlib of the commit's own")
    command = ("tools/venv/bin/python", "-m", "checks.gate")
    assert _why(repo, reviewed, pushed, ("checks/gate.py",), command) is None


@pytest.mark.parametrize(
    "path", ["evil.dist-info/entry_points.txt", "Evil.egg-info/entry_points.txt", "evil.egg-link"]
)
def test_package_metadata_the_reviewed_root_lacked_is_refused_where_python_looks_first(
    tmp_path: Path, path: str
) -> None:
    """importlib.metadata reads a `*.dist-info` or `*.egg-info` in every sys.path folder
    (pkg_resources an `.egg-link` too): at the root under `-m` its entry points are
    read as the installed ones are. One the reviewed revision held there, or one in a
    folder Python never looks in, is no shadow."""
    repo = make_repo(tmp_path / "repo")
    repo.write("checks/gate.py", GATE)
    repo.write("docs/kept.dist-info/entry_points.txt", "")
    repo.write("kept.dist-info/entry_points.txt", "")
    reviewed = repo.commit("a verifier run as a module")
    command = (PY, "-m", "checks.gate")
    repo.write("docs/evil.dist-info/entry_points.txt", "[pytest11]\nevil = evil\n")
    repo.write("checks/gate.py", GATE + "\n")  # a commit must change something
    assert (
        _why(repo, reviewed, repo.commit("reviewed and elsewhere"), ("checks/gate.py",), command)
        is None
    )
    repo.write(path, "[pytest11]\nevil = evil\n")
    why = _why(repo, reviewed, repo.commit("metadata at the root"), ("checks/gate.py",), command)
    assert why is not None and why.startswith(f"{path.split('/')[0]} is not pinned"), why
    assert "in the checkout's root folder: importlib.metadata reads it" in why


@pytest.mark.parametrize(
    "path", ["proj.egg-info/entry_points.txt", "proj.egg-info/PKG-INFO", "Proj.egg-info"]
)
def test_package_metadata_the_reviewed_root_held_is_refused_when_the_commit_changes_it(
    tmp_path: Path, path: str
) -> None:
    """A name the reviewed revision held is no licence: an entry_points.txt added to its
    proj.egg-info registers a pytest11 plugin (a root proj_helper.py that passes every
    test) all the same. The reviewed folder unchanged, or a changed file of it pinned,
    is no shadow."""
    repo = make_repo(tmp_path / "repo")
    repo.write("checks/test_a.py", "def test_a():\n    assert False\n")
    repo.write("proj.egg-info/PKG-INFO", "Metadata-Version: 2.1\nName: proj\n")
    reviewed = repo.commit("a pinned test and the project's egg-info")
    command = (PY, "-m", "pytest", "--noconftest", "checks/test_a.py")
    repo.write("proj_helper.py", "x = 1\n")
    pushed = repo.commit("the egg-info as reviewed")
    assert _why(repo, reviewed, pushed, ("checks/test_a.py",), command) is None
    if path == "Proj.egg-info":  # a file where the reviewed folder was
        (repo.path / "proj.egg-info" / "PKG-INFO").unlink()
        (repo.path / "proj.egg-info").rmdir()
    repo.write(path, "[pytest11]\nhelper = proj_helper\n")
    pushed = repo.commit("metadata the reviewed revision held, changed")
    why = _why(repo, reviewed, pushed, ("checks/test_a.py",), command)
    assert why is not None and why.startswith(f"{path} is not pinned, and "), why
    assert "held other content there in the checkout's root folder" in why
    if path == "proj.egg-info/PKG-INFO":
        pinned = ("checks/test_a.py", "proj.egg-info/PKG-INFO")
        assert _why(repo, reviewed, pushed, pinned, command) is None


def test_pytest_s_own_imports_are_judged_when_no_python_shows_them_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Python that runs `python3 -m pytest` may be one failgate finds no file of (a
    container's, a PATH the server's differs from): failgate's own has no pytest either.
    pytest imports pluggy all the same, so a root pluggy.py is still judged."""
    bare = _venv_with(tmp_path / "bare", "unrelated.py")
    repo = make_repo(tmp_path / "repo")
    repo.write("tests/test_deploy.py", "def test_deploy():\n    assert False\n")
    reviewed = repo.commit("a pinned test")
    repo.write("pluggy.py", "import os\nos._exit(0)\n")
    pushed = repo.commit("a pluggy of the commit's own")
    command = ("python-nowhere", "-m", "pytest", "tests/test_deploy.py")
    with GitRepo.open(repo.path) as grepo:
        pins = resolve_pins(grepo, reviewed, ("tests/test_deploy.py",))
        monkeypatch.setattr(sys, "executable", str(bare))
        monkeypatch.setattr(sys, "path", [p for p in sys.path if "-packages" not in p])
        why = shadowing(grepo, pushed, pins, command, reviewed)
    assert why is not None and why.startswith("pluggy.py is not pinned, and "), why


def test_the_site_folders_are_read_only_for_a_folder_where_the_project_comes_first(
    world: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding what is installed globs and reads every site folder: a script run by its
    path judges its own folder for any name and needs none of it, so none is read. Under
    `-m`, the root is judged for the installed packages' names, and a click.py there is
    still refused."""
    from failgate_hooks.verify import shadowing as module

    reads: list[object] = []

    def counted(*args: object, **kwargs: object) -> object:
        reads.append(args)
        return installed_names(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(module, "installed_names", counted)
    world.write("checks/__init__.py", "")
    reviewed = world.commit("the verifier's folder a package")
    world.write("click.py", "x = 1\n")
    pushed = world.commit("a click of the commit's own, at the root")
    files = ("checks/check.py", "checks/helper.py", "checks/__init__.py")
    assert _why(world, reviewed, pushed, files, (PY, "checks/check.py")) is None
    assert reads == []
    why = _why(world, reviewed, pushed, files, (PY, "-m", "checks.check"))
    assert why is not None and why.startswith("click.py is not pinned, and "), why
    assert len(reads) == 1
