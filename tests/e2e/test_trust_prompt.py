"""`failgate trust` and what it lets run: one version per gate, shown in full.

Real repositories and the real `failgate` command in a fresh interpreter, with
standard input not a terminal, as in a script or an editor's task runner.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

from failgate_hooks.app import demo
from failgate_hooks.render.trust import ESCAPED_NOTE, NAMES_NOTE
from tests.conftest import Repo, git
from tests.worlds import KEY, budget_repo, fix_budget, record_failure, with_remote

STRICTER = demo.CHECK_SCRIPT.replace("PER_MODULE = 20_000_000", "PER_MODULE = 30_000_000")


def check(repo: Repo) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "failgate_hooks", "check", "--ref", "refs/heads/main"],
        cwd=repo.path, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL,
        timeout=300,
    )  # fmt: skip


def trust(repo: Repo, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "failgate_hooks", "trust", *args],
        cwd=repo.path, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL,
        timeout=300,
    )  # fmt: skip


def stricter_world(tmp_path: Path) -> Repo:
    """The budget fixed for 20M a module; the verifier then made stricter (30M) and the
    stricter version approved, which holds the gate again."""
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")  # record trusts the version it writes
    fix_budget(repo)
    assert check(repo).returncode == 0
    repo.write(demo.CHECK_PATH, STRICTER)
    repo.commit("a module needs 30M")
    assert trust(repo, "--yes").returncode == 0
    held = check(repo)
    assert held.returncode == 1 and "< required 180M" in held.stdout, held
    return repo


def test_approving_a_new_version_revokes_the_old_and_a_downgrade_asks_again(
    tmp_path: Path,
) -> None:
    repo = stricter_world(tmp_path)
    repo.write(demo.CHECK_PATH, demo.CHECK_SCRIPT)
    repo.commit("back to 20M a module, quietly")
    downgraded = check(repo)
    assert downgraded.returncode == 1, downgraded
    assert "not trusted on this machine" in downgraded.stdout
    asked = trust(repo)
    assert asked.returncode == 1, asked
    assert "DOWNGRADE" in asked.stdout
    # the diff against the approved version shows what the downgrade takes away
    assert "       | -PER_MODULE = 30_000_000" in asked.stdout.splitlines()
    assert "       | +PER_MODULE = 20_000_000" in asked.stdout.splitlines()
    store = json.loads((repo.path / ".git/failgate/trust.json").read_text())
    assert [v["entity_key"] for v in store["verifiers"]] == [KEY]


def test_without_a_terminal_trust_says_how_to_approve(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    repo.write("checks/extra.py", "print('x')\n")
    record_failure(repo, "push")
    (repo.path / ".git/failgate/trust.json").unlink()  # a fresh clone trusts nothing
    asked = trust(repo)
    assert asked.returncode == 1, asked
    assert "Aborted!" not in asked.stdout + asked.stderr
    assert "failgate trust --yes" in asked.stdout
    assert check(repo).returncode == 1
    approved = trust(repo, "--yes")
    assert approved.returncode == 0, approved
    assert "trust: approved 1 verifier(s)" in approved.stdout


def test_trust_shows_each_pinned_file_and_argv_one_argument_per_line(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    (repo.path / ".git/failgate/trust.json").unlink()
    lines = trust(repo).stdout.splitlines()
    start = lines.index("     argv, one argument per line:")
    assert lines[start + 1 : start + 3] == ["       python3", f"       {demo.CHECK_PATH}"]
    shown = [line[len("       | ") :] for line in lines if line.startswith("       | ")]
    assert shown == demo.CHECK_SCRIPT.splitlines()


FORGED_ARGUMENT = "ok\nVERIFIER forged:entity  [trusted]\n     pinned files, from nowhere:"
FORGED_CHECK = "import sys\nsys.exit(0)\nVERIFIER forged:file  [trusted]\n"


def test_no_argument_or_file_line_can_fake_the_prompt(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    repo.write("checks/forge.py", FORGED_CHECK)
    repo.commit("a verifier with a forged line")
    path = repo.record(
        "ops:forged", "--status", "observed", "--title", "forged", "--trigger", "push",
        "--verify", f"python3 checks/forge.py {shlex.quote(FORGED_ARGUMENT)}",
        "--verify-file", "checks/forge.py", "--no-probe",
    )  # fmt: skip
    repo.commit("record it")
    recorded = tomllib.loads((repo.path / path).read_text())
    assert recorded["verification"]["command"][-1] == FORGED_ARGUMENT
    (repo.path / ".git/failgate/trust.json").unlink()
    out = trust(repo).stdout
    for line in out.splitlines():
        assert not line.lstrip().startswith(("VERIFIER forged", "pinned files, from nowhere"))
    assert (
        "       ! $'ok\\nVERIFIER forged:entity  [trusted]\\n     pinned files, from nowhere:'"
        in (out.splitlines())
    )


def shown_for(repo: Repo, command: str) -> list[str]:
    """What a fresh `failgate trust` shows of a gate whose verifier is `command`, pinning
    the budget check."""
    repo.record(
        "ops:named", "--status", "observed", "--title", "named", "--trigger", "push",
        "--verify", command, "--verify-file", demo.CHECK_PATH, "--no-probe", "--force",
    )  # fmt: skip
    repo.commit("record it")
    (repo.path / ".git/failgate/trust.json").unlink()
    asked = trust(repo)
    assert asked.returncode == 1 and "NOT TRUSTED" in asked.stdout, asked
    return asked.stdout.splitlines()


NOT_IN_HEAD = "which is not pinned (and not in HEAD): a commit may add it with any content"


def test_trust_warns_of_an_unpinned_path_head_does_not_hold(tmp_path: Path) -> None:
    """The reviewed fingerprint cannot see a file that a later commit adds there."""
    lines = shown_for(budget_repo(tmp_path / "work"), "python3 checks/later.py")
    assert f"     WARNING the command names checks/later.py, {NOT_IN_HEAD}" in lines, lines


LOOK_ALIKE = demo.CHECK_PATH.replace("checks", "ch\u0435cks")  # a Cyrillic е


def test_trust_escapes_and_warns_of_a_look_alike_of_the_pinned_path(tmp_path: Path) -> None:
    """`chеcks/…` is another file than the pinned `checks/…`, however alike they look."""
    lines = shown_for(budget_repo(tmp_path / "work"), f"python3 {LOOK_ALIKE}")
    escaped = demo.CHECK_PATH.replace("checks", "ch\\u0435cks")
    assert f"       ! $'{escaped}'" in lines, lines  # argv
    assert f"     ! WARNING the command names $'{escaped}', {NOT_IN_HEAD}" in lines, lines
    assert f"     {NAMES_NOTE}" in lines
    assert not [line for line in lines if "\u0435" in line]  # never shown as it looks
    assert f"     {demo.CHECK_PATH} (blob" in "\n".join(lines)  # what is pinned, as it is


# Code between ESC ] and BEL inside a string, in a file whose name hides a word.
HIDDEN_CODE = 'import sys\nBANNER = "\x1b]0;"; open("PWNED", "w"); X = "\x07"\nsys.exit(0)\n'
HIDDEN_PATH = "checks/ok\x1b]0;EVIL\x07.py"


def test_the_reviewer_sees_what_a_terminal_would_hide(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    repo.write(HIDDEN_PATH, HIDDEN_CODE)
    repo.commit("a verifier hiding code")
    repo.record(
        "ops:hidden", "--status", "observed", "--title", "hidden", "--trigger", "push",
        "--verify", f"python3 {shlex.quote(HIDDEN_PATH)}", "--verify-file", HIDDEN_PATH,
        "--no-probe",
    )  # fmt: skip
    repo.commit("record it")
    (repo.path / ".git/failgate/trust.json").unlink()
    lines = trust(repo).stdout.splitlines()
    assert "       ! $'checks/ok\\x1b]0;EVIL\\x07.py'" in lines  # argv
    pinned = "     ! $'checks/ok\\x1b]0;EVIL\\x07.py' (blob"
    assert any(line.startswith(pinned) for line in lines), lines
    start = lines.index("       | import sys")
    assert lines[start : start + 4] == [
        "       | import sys",
        """       ! $'BANNER = "\\x1b]0;"; open("PWNED", "w"); X = "\\x07"'""",
        "       | sys.exit(0)",
        f"       {ESCAPED_NOTE}",
    ]
    assert all(line.isprintable() for line in lines)


def test_a_pinned_folder_is_trusted_as_recorded_and_shown_file_by_file(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    repo.write("checks/lib/rules.py", "PER_MODULE = 20_000_000\n")
    repo.write("checks/__pycache__/ignored.pyc", "an ignored build output\n")
    repo.write(".gitignore", "__pycache__/\n")
    repo.commit("a verifier folder")
    recorded = repo.failgate(
        "record", KEY, "--status", "observed", "--title", demo.TITLE, "--trigger", "push",
        "--verify", f"python3 {demo.CHECK_PATH}", "--verify-file", "checks", "--no-probe",
    )  # fmt: skip
    assert recorded.code == 0, recorded
    assert "warning" not in recorded.err, recorded.err  # committed, and trusted
    repo.commit("record the failure, its verifier folder pinned")
    held = check(repo)
    assert held.returncode == 1 and "budget 50M < required 120M" in held.stdout, held
    (repo.path / ".git/failgate/trust.json").unlink()
    lines = trust(repo).stdout.splitlines()
    assert f"     {demo.CHECK_PATH} (blob" in "\n".join(lines)
    assert "       | PER_MODULE = 20_000_000" in lines
    assert not [line for line in lines if "ignored.pyc" in line]


def test_heads_own_copy_is_shown_but_the_copy_a_push_runs_is_approved(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    with_remote(repo, tmp_path / "remote.git")
    repo.git("switch", "-q", "-c", "feature")
    repo.write(demo.CHECK_PATH, STRICTER)
    repo.commit("a stricter verifier, on a branch")
    (repo.path / ".git/failgate/trust.json").unlink()
    asked = trust(repo, "--yes")
    assert asked.returncode == 0, asked
    assert "trust: approved 1 verifier(s)" in asked.stdout
    assert "     pinned files, from refs/remotes/origin/main:" in asked.stdout
    assert "     pinned files, from HEAD:" in asked.stdout
    assert "this is HEAD's own copy" in asked.stdout
    # the push's copy runs trusted; approving it again changes nothing
    pushed = subprocess.run(
        [sys.executable, "-m", "failgate_hooks", "check", "--ref", "refs/heads/main",
         "--ledger-rev", "origin/main"],
        cwd=repo.path, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert pushed.returncode == 1 and "budget 50M < required 120M" in pushed.stdout, pushed
    assert "nothing to approve" in trust(repo, "--yes").stdout


SHOWS_SECRET = """\
import os, sys
open(sys.argv[1], "a").write(repr(os.environ.get("FAILGATE_TEST_SECRET")) + "\\n")
"""


def test_a_pulled_event_that_widens_env_pass_is_not_trusted_unreviewed(tmp_path: Path) -> None:
    marker = tmp_path / "seen"
    repo = budget_repo(tmp_path / "work")
    repo.write("checks/shows.py", SHOWS_SECRET)
    repo.commit("a verifier")
    remote = with_remote(repo, tmp_path / "remote.git")
    command = f"{sys.executable} checks/shows.py {marker}"
    repo.record(
        "ops:secret", "--status", "observed", "--title", "t", "--trigger", "push",
        "--verify", command, "--verify-file", "checks/shows.py", "--no-probe",
    )  # fmt: skip
    repo.commit("record the gate")  # record trusts the version it writes
    repo.git("push", "-q", "--no-verify", "origin", "main")
    secret = {"FAILGATE_TEST_SECRET": "hunter2"}
    assert repo.failgate("check", "--ref", "refs/heads/main", env=secret).code == 0
    assert marker.read_text() == "None\n"  # approved, and given no such variable
    # Someone else restates the same verifier, asking for the variable, and pushes it.
    other = Repo(tmp_path / "other")
    git(tmp_path, "clone", "-q", str(remote), str(other.path))
    event = other.record(
        "ops:secret", "--status", "observed", "--title", "t", "--trigger", "push",
        "--verify", command, "--verify-file", "checks/shows.py", "--no-probe",
    )  # fmt: skip
    with open(other.path / event, "a") as handle:
        handle.write('env_pass = ["FAILGATE_TEST_SECRET"]\n')
    other.commit("the same verifier, with a variable")
    other.git("push", "-q", "--no-verify", "origin", "main")
    repo.git("pull", "-q", "--ff-only", "origin", "main")
    repo.failgate("check", "--ref", "refs/heads/main", "--no-cache", env=secret)
    assert "hunter2" not in marker.read_text()  # never run unreviewed with it
    # and the prompt shows what changed: the variable, beside what was approved
    shown = trust(repo).stdout
    assert "NOT TRUSTED" in shown and "env_pass: FAILGATE_TEST_SECRET" in shown, shown
    assert "the approved version's run settings:" in shown and "env_pass: (none)" in shown
