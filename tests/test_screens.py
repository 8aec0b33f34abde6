"""The main screens, as a user reads them, against golden files (tests/golden/, see screens.py).

Each is produced for real: the failgate command in a fresh interpreter, or a real
`git push` through the installed hook or a bare remote's pre-receive hook.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import Repo
from tests.e2e.test_pre_receive import install_pre_receive, server
from tests.e2e.test_pre_receive import push as push_no_verify
from tests.screens import assert_screen
from tests.worlds import KEY, budget_repo, fix_budget, record_failure, with_remote

CHECK = ("check", "--ref", "refs/heads/main")


def held(tmp_path: Path) -> Repo:
    """The budget repository with a remote, and the failure recorded for push."""
    repo = budget_repo(tmp_path / "work")
    with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push")
    return repo


def screen(repo: Repo, *args: str, code: int) -> str:
    """What the terminal shows for `failgate ARGS`: its progress and warnings, then stdout."""
    result = repo.failgate(*args)
    assert result.code == code, result
    return result.err + result.out


def ours(output: str) -> str:
    """A push's output without git's own lines (they change with git's version)."""
    git_lines = ("To ", " ! [", "error: failed to push", "remote: error: failed", "hint: ")
    return "\n".join(line for line in output.splitlines() if not line.startswith(git_lines))


def test_check_held(tmp_path: Path) -> None:
    assert_screen("check_held", screen(held(tmp_path), *CHECK, code=1))


def test_check_cleared(tmp_path: Path) -> None:
    repo = held(tmp_path)
    fix_budget(repo)
    assert_screen("check_cleared", screen(repo, *CHECK, code=0))


def test_check_pending_names_the_pusher_seen_relaxers_and_identity_env(tmp_path: Path) -> None:
    repo = held(tmp_path)
    repo.write("failgate.toml", 'relaxers = ["alice"]\nidentity_env = "REMOTE_USER"\n')
    repo.commit("who may relax gates")
    repo.git("push", "-q", "--no-verify", "origin", "main")
    repo.failgate("expire", KEY, "--note", "we stopped deploying modules")
    repo.commit("expire the gas budget gate")
    args = (*CHECK, "--authority", "protected", "--ledger-rev", "origin/main")
    assert_screen("check_pending", screen(repo, *args, code=1))


def with_invalid_file(tmp_path: Path) -> Repo:
    """The held repository, and an entity whose only event file is not TOML."""
    repo = held(tmp_path)
    folder = repo.path / "ledger" / "svc" / "x"
    folder.mkdir(parents=True)
    (folder / "20261130T010000Z-00000001.toml").write_text(
        'id = "20261130T010000Z-00000001"\nentity_key = "svc:x"\nstatus = "observed\n'
    )
    repo.commit("an event file that is not TOML")
    return repo


def test_check_invalid_names_the_broken_file_and_nothing_it_implies(tmp_path: Path) -> None:
    text = screen(with_invalid_file(tmp_path), *CHECK, code=4)
    assert "no remaining event sets" not in text  # the broken file may be the one that does
    assert_screen("check_invalid", text)


def test_check_and_fsck_give_one_retract_advice_word_for_word(tmp_path: Path) -> None:
    repo = with_invalid_file(tmp_path)
    fsck = screen(repo, "fsck", code=4)
    (advice,) = [line.removeprefix("hint: ") for line in fsck.splitlines() if "hint: " in line]
    assert advice.startswith("svc:x: ") and "--retracts 20261130T010000Z-00000001" in advice
    assert f"  next: {advice}\n" in screen(repo, *CHECK, code=4)


def test_check_conflict_names_both_heads_and_how_to_settle(tmp_path: Path) -> None:
    repo = held(tmp_path)
    repo.git("checkout", "-q", "-b", "other")
    diagnosed = repo.record(KEY, "--status", "diagnosed", "--note", "the budget is per module")
    # Heads are listed by id: two events of the same second would swap places at random
    # (an id ends in random hex), so this one's is made the smaller.
    _lowest_in_its_second(repo.path / diagnosed)
    repo.commit("diagnosed on a branch")
    repo.git("checkout", "-q", "main")
    repo.failgate("expire", KEY, "--note", "we stopped deploying modules")
    repo.commit("expired on main")
    repo.git("merge", "-q", "--no-edit", "other")
    assert_screen("check_conflict", screen(repo, *CHECK, code=3))


def _lowest_in_its_second(event_file: Path) -> None:
    """Give an event (nothing follows yet) the smallest id of the second it was made in."""
    old_id = event_file.stem
    new_id = old_id.rsplit("-", 1)[0] + "-00000000"
    text = event_file.read_text(encoding="utf-8").replace(f'"{old_id}"', f'"{new_id}"')
    event_file.unlink()
    event_file.with_name(f"{new_id}.toml").write_text(text, encoding="utf-8")


def test_gates_says_not_run_and_exits_as_check_would(tmp_path: Path) -> None:
    assert_screen(
        "gates_not_run", screen(held(tmp_path), "gates", "--ref", "refs/heads/main", code=1)
    )


def test_export_markdown(tmp_path: Path) -> None:
    assert_screen("export", screen(held(tmp_path), "export", code=0))


def test_pre_push_refusal(tmp_path: Path) -> None:
    repo = held(tmp_path)
    assert repo.failgate("install").code == 0
    pushed = subprocess.run(
        ["git", "push", "origin", "main"], cwd=repo.path, capture_output=True, text=True,
        check=False, timeout=300,
    )  # fmt: skip
    assert pushed.returncode != 0, pushed.stderr
    assert_screen("pre_push_refusal", ours(pushed.stdout + pushed.stderr), tmp=tmp_path)


def test_pre_receive_refusal_of_a_pending_expire(tmp_path: Path) -> None:
    repo, _ = server(tmp_path)
    assert repo.failgate("expire", KEY, "--note", "we stopped deploying modules").code == 0
    repo.commit("expire the gas budget gate")
    refused = push_no_verify(repo, "main", user="bob")
    assert refused.returncode != 0, refused.stderr
    assert "the pusher seen is bob (identity_env = REMOTE_USER)" in refused.stderr
    assert_screen("pre_receive_pending", ours(refused.stderr), tmp=tmp_path)


def test_pre_receive_refusal_of_a_held_gate(tmp_path: Path) -> None:
    repo, remote = server(tmp_path)
    install_pre_receive(remote, "--exec", "--no-sandbox")
    repo.write("notes.txt", "more work on the broken budget\n")
    repo.commit("more work")
    refused = push_no_verify(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert_screen("pre_receive_held", ours(refused.stderr), tmp=tmp_path)
