"""What failgate wrote into the checkout, real bwrap: the code under test cannot change it.

The checkout is writable in the sandbox, and the code under test runs in it before the
verifier judges it. Each verifier here fails, and passes only when its child changes
what the verifier reads next: a pinned file it runs, a module planted in its pinned
script's folder (first on sys.path), a `.pyc` planted in the bytecode cache. Through the
real `failgate check` each stays held; the controls run the same files through
run_command without the fix, where the attack works.
"""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from failgate_hooks.verify import sandbox as sandbox_module
from failgate_hooks.verify.process import run_command
from failgate_hooks.verify.sandbox import PYCACHE_PREFIX, Sandbox
from tests.conftest import Repo, make_repo
from tests.e2e.test_sandbox import KEY, outcome

# The verifier runs the tests (the child), then the pinned judge, which fails.
REWRITES_THE_PINNED_JUDGE = {
    "checks/v.py": """\
        import subprocess, sys
        subprocess.run([sys.executable, "-c", "open('checks/judge.py', 'w').write('')"])
        sys.exit(subprocess.run([sys.executable, "checks/judge.py"]).returncode)
        """,
    "checks/judge.py": "raise SystemExit(1)\n",
}
# The child plants json.py beside the pinned script; the verifier imports json after it.
PLANTS_JSON_BESIDE_THE_VERIFIER = {
    "checks/v.py": """\
        import subprocess, sys
        plant = "open('checks/json.py', 'w').write('raise SystemExit(0)')"
        subprocess.run([sys.executable, "-c", plant])
        import json
        sys.exit(1)
        """,
}
# The child plants an unchecked-hash `.pyc` of a forged helper where the verifier's Python
# looks for the pinned helper's bytecode.
PLANT = r"""
import os, py_compile, sys
source = os.path.abspath("checks/helper.py")
cache = os.path.join(
    sys.pycache_prefix, os.path.dirname(source).lstrip("/"),
    f"helper.{sys.implementation.cache_tag}.pyc",
)
os.makedirs(os.path.dirname(cache), exist_ok=True)
with open("forged.py", "w") as forged:
    forged.write("def verdict():\n    return 0\n")
py_compile.compile(
    "forged.py", cfile=cache, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    doraise=True,
)
print("planted", cache, flush=True)
"""
PLANTS_A_PYC_FOR_THE_PINNED_HELPER = {
    "checks/v.py": f"""\
import subprocess, sys
subprocess.run([sys.executable, "-c", {PLANT!r}])
import helper
sys.exit(helper.verdict())
""",
    "checks/helper.py": "def verdict():\n    return 1\n",
}
# A verifier as docs/writing-verifiers.md has it: pytest in a child, which writes its cache
# in the rootdir, and a report the verifier writes in the checkout root.
RUNS_PYTEST = {
    "checks/check.py": """\
        import subprocess, sys
        ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "tests"])
        with open("report.txt", "w") as report:
            report.write(str(ran.returncode))
        sys.exit(0 if ran.returncode == 0 and __import__("os").path.isdir(".pytest_cache") else 1)
        """,
}


def gated_by(path: Path, files: dict[str, str], *, pinned: tuple[str, ...]) -> Repo:
    """A repository whose push gate runs checks/v.py (or checks/check.py), with `pinned`."""
    repo = make_repo(path)
    repo.write(".gitignore", ".venv/\n")
    for name, text in files.items():
        repo.write(name, textwrap.dedent(text))
    repo.write("tests/test_it.py", "def test_it():\n    assert True\n")
    repo.commit("the verifier")
    script = next(name for name in files if name.endswith(("v.py", "check.py")))
    pins = [arg for path in pinned for arg in ("--verify-file", path)]
    repo.record(
        KEY, "--status", "observed", "--title", "what the code under test may change",
        "--trigger", "push", "--verify", f"{sys.executable} {script}", *pins, "--no-probe",
    )  # fmt: skip
    repo.commit("record the gate")
    return repo


def held(repo: Repo) -> str:
    code, text = outcome(repo, "--sandbox")
    assert code != 0, text
    assert "CLEARED" not in text, text
    return text


def test_a_child_that_rewrites_the_pinned_judge_leaves_the_gate_held(tmp_path: Path) -> None:
    pinned = ("checks/v.py", "checks/judge.py")
    text = held(gated_by(tmp_path / "repo", REWRITES_THE_PINNED_JUDGE, pinned=pinned))
    assert "Read-only file system" in text, text


def test_a_child_that_rewrites_a_folder_pinned_whole_leaves_the_gate_held(
    tmp_path: Path,
) -> None:
    text = held(gated_by(tmp_path / "repo", REWRITES_THE_PINNED_JUDGE, pinned=("checks",)))
    assert "Read-only file system" in text, text


def test_a_json_py_planted_beside_the_pinned_verifier_leaves_the_gate_held(
    tmp_path: Path,
) -> None:
    text = held(
        gated_by(tmp_path / "repo", PLANTS_JSON_BESIDE_THE_VERIFIER, pinned=("checks/v.py",))
    )
    assert "Read-only file system" in text, text


def test_a_pyc_planted_in_the_bytecode_cache_leaves_the_gate_held(tmp_path: Path) -> None:
    pinned = ("checks/v.py", "checks/helper.py")
    text = held(gated_by(tmp_path / "repo", PLANTS_A_PYC_FOR_THE_PINNED_HELPER, pinned=pinned))
    assert "Read-only file system" in text, text
    assert "planted" not in text, text


def test_a_pytest_verifier_with_its_folder_pinned_whole_still_passes(tmp_path: Path) -> None:
    repo = gated_by(tmp_path / "repo", RUNS_PYTEST, pinned=("checks",))
    code, text = outcome(repo, "--sandbox")
    assert code == 0, text
    assert "CLEARED" in text, text


def in_the_sandbox(
    tmp_path: Path, files: dict[str, str], read_only: tuple[str, ...]
) -> tuple[int | None, str]:
    """checks/v.py of `files` run by run_command in the sandbox, `read_only` kept so."""
    checkout = tmp_path / "checkout"
    for name, text in files.items():
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        (checkout / name).write_text(textwrap.dedent(text))
    run = run_command(
        [sys.executable, "checks/v.py"],
        cwd=str(checkout),
        env={"PATH": os.environ["PATH"]},
        timeout_s=60,
        sandbox=Sandbox(network=False, hidden=[], asked_by="the test"),
        read_only=read_only,
    )
    assert run.start_error is None, run
    return run.exit_code, run.output_tail


@pytest.mark.parametrize("files", [REWRITES_THE_PINNED_JUDGE, PLANTS_JSON_BESIDE_THE_VERIFIER])
def test_the_control_with_nothing_kept_read_only_the_child_makes_it_pass(
    tmp_path: Path, files: dict[str, str]
) -> None:
    assert in_the_sandbox(tmp_path / "fixed", files, ("checks/v.py", "checks"))[0] == 1
    code, said = in_the_sandbox(tmp_path / "control", files, ())
    assert code == 0, said


def test_the_control_with_a_writable_bytecode_cache_the_planted_pyc_is_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox_module, "_PYCACHE_MOUNT", ("--dir", PYCACHE_PREFIX))
    code, said = in_the_sandbox(tmp_path, PLANTS_A_PYC_FOR_THE_PINNED_HELPER, ())
    assert code == 0, said
    assert "planted" in said, said
