"""A ref's old tip is reviewed only if the server accepted it while enforcing there.

Each test pushes with `--no-verify` to a real bare remote with the real
pre-receive hook and asserts on the remote's refs: events pushed to a ref while
only warnings applied (before main protected it, or in the same push as the
configuration that protects it) never count as reviewed later.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from failgate_hooks.app import demo
from failgate_hooks.app.accepted_tips import AcceptedTips
from tests.conftest import Repo, git
from tests.e2e.test_pre_receive import RELAXERS, install_pre_receive, push
from tests.worlds import KEY, budget_repo, fix_budget, record_failure, remote_ref, with_remote

ONLY_MAIN = RELAXERS + 'protected_refs = ["refs/heads/main"]\n'
BOTH = RELAXERS + 'protected_refs = ["refs/heads/main", "refs/heads/staging"]\n'
RELEASES = RELAXERS + 'protected_refs = ["refs/heads/main", "refs/heads/release/*"]\n'


def gated_server(tmp_path: Path, *hook: str, config: str = ONLY_MAIN) -> tuple[Repo, Path]:
    """The recorded failure on main, the hook installed; `config` says what is protected."""
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", config)
    repo.commit("what is protected")
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push")
    assert push(repo, "main").returncode == 0
    install_pre_receive(remote, *hook)
    return repo, remote


def expire_on_staging(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "staging")
    assert repo.failgate("expire", KEY, "--note", "no longer needed").code == 0
    repo.commit("expire the gas budget gate on staging")
    repo.git("checkout", "-q", "main")


def protect_staging_on_main(repo: Repo) -> None:
    repo.write("failgate.toml", BOTH)
    repo.commit("staging ships too")


def push_staging_again(repo: Repo, remote: Path, user: str = "bob") -> tuple[bool, str]:
    """Staging with main merged (main's rules, the budget still broken): whether the
    remote's staging moved, and what the hook said."""
    repo.git("checkout", "-q", "staging")
    repo.git("merge", "-q", "--no-edit", "main")
    before = remote_ref(remote, "refs/heads/staging")
    pushed = push(repo, "staging", user=user)
    moved = remote_ref(remote, "refs/heads/staging") != before
    assert moved == (pushed.returncode == 0), pushed.stderr
    return moved, pushed.stderr


def test_an_expiry_pushed_before_main_protected_the_ref_stays_pending(tmp_path: Path) -> None:
    repo, remote = gated_server(tmp_path)
    expire_on_staging(repo)
    assert push(repo, "staging").returncode == 0  # not protected: only a warning
    protect_staging_on_main(repo)
    assert push(repo, "main").returncode == 0  # protecting a ref tightens: no relaxer needed

    moved, said = push_staging_again(repo, remote)
    assert not moved and "PENDING" in said and "status expired" in said, said
    assert "was not accepted by this server while it enforced there" in said  # and why
    moved, said = push_staging_again(repo, remote, user="alice")
    assert moved, said  # a relaxer reviews it, and from then on it stands
    repo.write("notes.txt", "more\n")
    repo.commit("more on staging")
    assert push(repo, "staging").returncode == 0


def test_an_expiry_pushed_with_the_config_that_protects_the_ref_stays_pending(
    tmp_path: Path,
) -> None:
    """In one push, staging is judged by the configuration in force, where it is not
    protected: its tip was never judged as a protected ref's."""
    repo, remote = gated_server(tmp_path)
    expire_on_staging(repo)
    protect_staging_on_main(repo)
    both = push(repo, "main", "staging")
    assert both.returncode == 0, both.stderr
    moved, said = push_staging_again(repo, remote)
    assert not moved and "PENDING" in said, said


def test_a_verifier_gutted_before_main_protected_the_ref_is_not_the_one_run(
    tmp_path: Path,
) -> None:
    repo, remote = gated_server(tmp_path, "--exec")
    repo.git("checkout", "-q", "-b", "staging")
    repo.write(demo.CHECK_PATH, "import sys\nsys.exit(0)\n")
    repo.commit("gut the verifier on staging")
    assert push(repo, "staging").returncode == 0  # not protected: only a warning
    repo.git("checkout", "-q", "main")
    fix_budget(repo)
    protect_staging_on_main(repo)
    assert push(repo, "main").returncode == 0
    repo.git("checkout", "-q", "staging")
    repo.write("failgate.toml", BOTH)
    repo.commit("main's rules on staging, its budget still broken")
    before = remote_ref(remote, "refs/heads/staging")
    pushed = push(repo, "staging")
    assert pushed.returncode != 0, pushed.stderr
    assert "budget 50M < required 120M" in pushed.stderr  # the reviewed copy ran
    assert remote_ref(remote, "refs/heads/staging") == before


def test_a_tip_accepted_while_enforced_is_remembered_and_a_refused_one_is_not(
    tmp_path: Path,
) -> None:
    repo, remote = gated_server(tmp_path)
    repo.write("notes.txt", "one\n")
    accepted = repo.commit("an ordinary change")
    assert push(repo, "main").returncode == 0
    assert repo.failgate("expire", KEY, "--note", "no longer needed").code == 0
    refused = repo.commit("expire the gate")
    assert push(repo, "main").returncode != 0  # bob is no relaxer
    tips = AcceptedTips(str(remote))
    assert tips.holds("refs/heads/main", accepted)
    assert not tips.holds("refs/heads/main", refused)
    expire_on_staging(repo)
    assert push(repo, "staging").returncode == 0
    staged = remote_ref(remote, "refs/heads/staging")
    assert staged is not None and not tips.holds("refs/heads/staging", staged)


def merge_release_dropping_its_event(repo: Repo, onto: str) -> None:
    """release/1 records a failure (accepted where it is protected), and `onto` merges
    it with a resolution that drops that event."""
    repo.git("checkout", "-q", "-b", "release/1", "main")
    crash = repo.record("rel:crash", "--status", "observed", "--title", "Release crash",
                        "--trigger", "deploy", "--no-probe")  # fmt: skip
    repo.commit("the release's failure record")
    assert push(repo, "release/1").returncode == 0
    repo.git("checkout", "-q", "-B", onto, "main")
    repo.git("merge", "-q", "--no-ff", "--no-commit", "release/1")
    repo.git("rm", "-q", "-f", crash)
    repo.commit("merge release/1, dropping its event")


def test_a_merge_first_pushed_where_only_warnings_apply_is_still_walked_for_main(
    tmp_path: Path,
) -> None:
    """A merge that drops a protected release branch's event only warns on a branch
    nothing protects: being on the server since then does not make it checked."""
    repo, remote = gated_server(tmp_path, config=RELEASES)
    merge_release_dropping_its_event(repo, "scratch")
    warned = push(repo, "scratch")
    assert warned.returncode == 0 and "deletes event" in warned.stderr, warned.stderr

    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, "scratch:main")
    assert refused.returncode != 0 and "deletes event" in refused.stderr, refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before


def test_history_pushed_to_a_ref_before_it_was_protected_is_walked_there_later(
    tmp_path: Path,
) -> None:
    """Its old tip was never judged where a problem blocks: accepting a commit on top
    of it would make that history count as checked for every later push."""
    repo, remote = gated_server(tmp_path, config=RELEASES)
    merge_release_dropping_its_event(repo, "staging")
    assert push(repo, "staging").returncode == 0  # not protected: only a warning
    repo.git("checkout", "-q", "main")
    repo.write("failgate.toml", RELEASES.replace('"refs/heads/main"', '"refs/heads/main", '
                                                 '"refs/heads/staging"'))  # fmt: skip
    repo.commit("staging ships too")
    assert push(repo, "main").returncode == 0
    repo.git("checkout", "-q", "staging")
    repo.git("merge", "-q", "--no-edit", "main")
    before = remote_ref(remote, "refs/heads/staging")
    refused = push(repo, "staging")
    assert refused.returncode != 0 and "deletes event" in refused.stderr, refused.stderr
    assert remote_ref(remote, "refs/heads/staging") == before


def test_a_server_that_cannot_remember_says_so_and_still_decides(tmp_path: Path) -> None:
    repo, remote = gated_server(tmp_path)
    (remote / "failgate").mkdir(exist_ok=True)
    (remote / "failgate" / "accepted").write_text("not a folder")
    repo.write("notes.txt", "one\n")
    repo.commit("an ordinary change")
    pushed = push(repo, "main")
    assert pushed.returncode == 0, pushed.stderr
    assert "could not be remembered" in pushed.stderr


def test_deleting_the_servers_default_branch_is_pending_whatever_it_holds(
    tmp_path: Path,
) -> None:
    """Without it, another branch as it stands (pushed while unprotected, perhaps with
    its own configuration) would become the default that decides every ref."""
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", ONLY_MAIN)
    repo.commit("only main is protected; no event yet")
    remote = with_remote(repo, tmp_path / "remote.git")
    git(remote, "config", "receive.denyDeleteCurrent", "ignore")  # git's own guard off
    install_pre_receive(remote)
    repo.write("failgate.toml", RELAXERS + 'mode = "warn"\n')
    repo.commit("a laxer configuration, on a branch nothing protects")
    assert push(repo, "HEAD:refs/heads/master").returncode == 0
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, ":main")
    assert refused.returncode != 0, refused.stderr
    assert "the server's default branch" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before
    relaxed = push(repo, ":main", user="alice")
    assert relaxed.returncode == 0, relaxed.stderr  # a relaxer may


def test_an_administrator_vouches_once_for_the_tips_as_they_stand_after_an_upgrade(
    tmp_path: Path,
) -> None:
    repo, remote = gated_server(tmp_path, config=BOTH)
    expire_on_staging(repo)
    assert push(repo, "staging", user="alice").returncode == 0  # reviewed by a relaxer
    assert push(repo, "main:refs/heads/scratch").returncode == 0  # nothing enforces there
    shutil.rmtree(remote / "failgate" / "accepted")  # as after an upgrade: nothing remembered

    repo.git("checkout", "-q", "staging")
    repo.write("notes.txt", "more\n")
    repo.commit("more on staging")
    refused = push(repo, "staging")
    assert refused.returncode != 0 and "was not accepted" in refused.stderr, refused.stderr

    call = "from failgate_hooks.commands.cli import pre_receive_main; pre_receive_main()"
    vouched = subprocess.run(
        [sys.executable, "-c", call, "--accept-current-tips"], cwd=remote,
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert vouched.returncode == 0, vouched.stderr
    assert "accepted refs/heads/staging at" in vouched.stdout
    assert "accepted refs/heads/main at" in vouched.stdout
    assert "scratch" not in vouched.stdout
    pushed = push(repo, "staging")
    assert pushed.returncode == 0, pushed.stderr


def test_a_shared_server_repository_keeps_its_memory_group_writable(tmp_path: Path) -> None:
    repo, remote = gated_server(tmp_path)
    git(remote, "config", "core.sharedRepository", "group")
    repo.write("notes.txt", "one\n")
    repo.commit("an ordinary change")
    assert push(repo, "main").returncode == 0
    folder = remote / "failgate" / "accepted"
    assert folder.stat().st_mode & 0o2070 == 0o2070
    assert all(p.stat().st_mode & 0o060 == 0o060 for p in folder.glob("*.json"))
