"""The server gate: a real pre-receive hook on a bare remote, pushed to with --no-verify."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from failgate_hooks.app.accepted_tips import AcceptedTips
from tests.conftest import Repo, git
from tests.worlds import (
    KEY,
    broken_again,
    budget_repo,
    fix_budget,
    new_history,
    record_failure,
    remote_ref,
    with_blob_first,
    with_raw_mode,
    with_remote,
    with_slash_name,
)

RELAXERS = 'relaxers = ["alice"]\nidentity_env = "REMOTE_USER"\n'


def install_pre_receive(remote: Path, *args: str) -> None:
    hook = remote / "hooks" / "pre-receive"
    call = "from failgate_hooks.commands.cli import pre_receive_main; pre_receive_main()"
    hook.write_text(f"#!/bin/sh\nexec {sys.executable} -c '{call}' {' '.join(args)}\n")
    hook.chmod(0o755)


def push(repo: Repo, *args: str, user: str = "bob") -> subprocess.CompletedProcess[str]:
    """`git push --no-verify`: the client hook is skipped, as anyone can."""
    return subprocess.run(
        ["git", "push", "--no-verify", "origin", *args], cwd=repo.path, capture_output=True,
        text=True, check=False, env={**os.environ, "REMOTE_USER": user}, timeout=300,
    )  # fmt: skip


def server(tmp_path: Path, *hook_args: str, record: Sequence[str] = ()) -> tuple[Repo, Path]:
    """A remote whose main has the config and the recorded failure (`record`: more
    arguments for it); the hook installed."""
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", RELAXERS)
    repo.commit("who may relax gates")
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push", *record)
    assert push(repo, "main").returncode == 0  # no server hook yet
    install_pre_receive(remote, *hook_args)
    return repo, remote


def test_with_exec_a_gated_push_is_refused_and_the_fix_accepted(tmp_path: Path) -> None:
    repo, remote = server(tmp_path, "--exec")
    repo.write("notes.txt", "more work on the broken budget\n")
    repo.commit("more work")
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert "remote: BLOCKED" in refused.stderr
    assert "budget 50M < required 120M" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before
    fixed = fix_budget(repo)
    accepted = push(repo, "main")
    assert accepted.returncode == 0, accepted.stderr
    assert remote_ref(remote, "refs/heads/main") == fixed


def test_without_exec_an_open_gate_only_warns(tmp_path: Path) -> None:
    repo, remote = server(tmp_path)
    repo.write("notes.txt", "more work\n")
    head = repo.commit("more work")
    accepted = push(repo, "main")
    assert accepted.returncode == 0, accepted.stderr
    assert "WARN" in accepted.stderr
    assert remote_ref(remote, "refs/heads/main") == head


def test_without_exec_an_event_edited_in_place_is_refused(tmp_path: Path) -> None:
    repo, remote = server(tmp_path)
    event = next((repo.path / "ledger").rglob("*.toml"))
    event.write_text(event.read_text().replace('"observed"', '"verified"'))
    repo.commit("quietly mark it verified")
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, "main")
    assert refused.returncode != 0, refused.stderr
    assert str(event.relative_to(repo.path)) in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before


def test_an_expire_by_someone_not_a_relaxer_is_pending_and_refused(tmp_path: Path) -> None:
    repo, remote = server(tmp_path)
    assert repo.failgate("expire", KEY, "--note", "we stopped deploying modules").code == 0
    repo.commit("expire the gas budget gate")
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, "main", user="bob")
    assert refused.returncode != 0, refused.stderr
    assert "PENDING" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before
    accepted = push(repo, "main", user="alice")
    assert accepted.returncode == 0, accepted.stderr
    assert remote_ref(remote, "refs/heads/main") == repo.head()


def test_a_pending_relaxation_s_advice_fits_where_it_was_pushed(tmp_path: Path) -> None:
    """Pushed straight to the default branch, "merge it into the default branch" is no
    advice: the push already goes there."""
    repo, _ = server(tmp_path)
    assert repo.failgate("expire", KEY, "--note", "we stopped deploying modules").code == 0
    repo.commit("expire the gas budget gate")
    to_default = push(repo, "main", user="bob")
    assert to_default.returncode != 0, to_default.stderr
    assert (
        "This push goes straight to the default branch: push it to another branch and "
        "merge it through review, or have a relaxer push it"
    ) in to_default.stderr
    assert "Merge it into the default branch" not in to_default.stderr
    to_release = push(repo, "main:refs/heads/release/1", user="bob")
    assert to_release.returncode != 0, to_release.stderr
    assert "Merge it into the default branch through review, or have a relaxer push it" in (
        to_release.stderr
    )
    assert "straight to the default branch" not in to_release.stderr


def test_a_deletion_is_allowed_and_a_branch_push_warns(tmp_path: Path) -> None:
    repo, remote = server(tmp_path)
    assert push(repo, "main:refs/heads/topic").returncode == 0
    deleted = push(repo, "--delete", "topic")
    assert deleted.returncode == 0, deleted.stderr
    assert remote_ref(remote, "refs/heads/topic") is None


def test_the_server_hook_works_inside_the_quarantine(tmp_path: Path) -> None:
    """New objects exist only in git's quarantine while pre-receive runs."""
    repo, remote = server(tmp_path, "--exec")
    fixed = fix_budget(repo)
    accepted = push(repo, "main")
    assert accepted.returncode == 0, accepted.stderr
    assert "CLEARED" in accepted.stderr
    assert git(remote, "cat-file", "-t", fixed) == "commit"


def test_a_bare_server_has_no_work_tree_and_warns_of_nothing_uncommitted(tmp_path: Path) -> None:
    repo, _ = server(tmp_path, "--exec")
    fix_budget(repo)
    repo.record("ops:late", "--status", "observed", "--title", "t", "--trigger", "push")
    accepted = push(repo, "main")
    assert accepted.returncode == 0, accepted.stderr
    assert "not committed" not in accepted.stderr  # the client's work tree is not the server's


def test_a_server_repository_with_a_work_tree_warns_of_its_uncommitted_events(
    tmp_path: Path,
) -> None:
    repo = budget_repo(tmp_path / "work")
    checkout = tmp_path / "server"
    git(tmp_path, "clone", "-q", str(repo.path), str(checkout))
    git(checkout, "config", "receive.denyCurrentBranch", "updateInstead")
    git(checkout, "checkout", "-q", "-b", "parked")  # main is free to be pushed to
    loose = Repo(checkout).record("ops:late", "--status", "observed", "--title", "t",
                                  "--trigger", "push")  # fmt: skip
    install_pre_receive(checkout / ".git")
    repo.write("notes.txt", "more\n")
    repo.commit("more")
    repo.git("remote", "add", "origin", str(checkout))
    pushed = push(repo, "main")
    assert pushed.returncode == 0, pushed.stderr
    assert f"not read and not applied (e.g. {loose})" in pushed.stderr


def test_a_pending_deletion_names_the_pusher_seen(tmp_path: Path) -> None:
    repo, _ = server(tmp_path)
    repo.git("checkout", "-q", "-b", "release/1")
    repo.record("ops:release", "--status", "observed", "--title", "t", "--trigger", "deploy")
    repo.commit("an event only the release branch holds")
    assert push(repo, "release/1", user="alice").returncode == 0
    refused = push(repo, "--delete", "release/1", user="bob")
    assert refused.returncode != 0, refused.stderr
    assert "PENDING deletion of refs/heads/release/1" in refused.stderr
    assert "the pusher seen is bob (identity_env = REMOTE_USER); relaxers: alice" in refused.stderr


def test_a_deletion_is_pending_when_main_holds_the_event_path_with_other_bytes(
    tmp_path: Path,
) -> None:
    """A file at the same path on main is not the event the branch holds: else anyone
    could plant a harmless copy on main, then delete the branch and its gate with it."""
    repo, remote = server(tmp_path)
    repo.git("checkout", "-q", "-b", "release/1")
    path = repo.record("ops:release", "--status", "observed", "--title", "t", "--trigger", "push")
    repo.commit("an event only the release branch holds")
    assert push(repo, "release/1", user="alice").returncode == 0
    event = (repo.path / path).read_text()
    repo.git("checkout", "-q", "main")
    harmless = event.replace('"push"', '"deploy"')
    assert harmless != event
    repo.write(path, harmless)
    repo.commit("the same event file, harmless on main")
    assert push(repo, "main", user="alice").returncode == 0
    refused = push(repo, "--delete", "release/1", user="bob")
    assert refused.returncode != 0, refused.stderr
    assert "PENDING deletion of refs/heads/release/1" in refused.stderr
    assert remote_ref(remote, "refs/heads/release/1") is not None


def test_under_block_on_all_deleting_any_branch_with_its_own_events_is_pending(
    tmp_path: Path,
) -> None:
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", RELAXERS + 'block_on = "all"\n')
    repo.commit("every branch enforces")
    remote = with_remote(repo, tmp_path / "remote.git")
    install_pre_receive(remote)
    repo.git("checkout", "-q", "-b", "team/feat")
    repo.record("feat:risk", "--status", "observed", "--title", "t", "--trigger", "deploy")
    repo.commit("an event only the team branch holds")
    assert push(repo, "team/feat").returncode == 0
    refused = push(repo, "--delete", "team/feat", user="bob")
    assert refused.returncode != 0, refused.stderr
    assert "PENDING deletion of refs/heads/team/feat" in refused.stderr
    assert remote_ref(remote, "refs/heads/team/feat") is not None
    assert push(repo, "--delete", "team/feat", user="alice").returncode == 0


def test_a_ref_name_that_is_not_utf8_is_judged_without_a_traceback(tmp_path: Path) -> None:
    repo, remote = server(tmp_path, "--exec")
    fix_budget(repo)
    name = b"refs/heads/release/r\xff".decode("utf-8", "surrogateescape")
    repo.git("update-ref", name, "HEAD")

    def push_it() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", "push", "--no-verify", "origin", name], cwd=repo.path, capture_output=True,
            text=True, errors="replace", check=False, timeout=300,
        )  # fmt: skip

    pushed = push_it()
    assert "Traceback" not in pushed.stderr, pushed.stderr
    assert pushed.returncode == 0, pushed.stderr
    assert "CLEARED" in pushed.stderr
    assert AcceptedTips(str(remote)).holds(name, repo.head())  # its next push's old tip


def test_a_ref_that_looks_like_main_is_never_printed_as_main(tmp_path: Path) -> None:
    """A bidi override or a zero-width space in a ref is shown escaped, not removed:
    removed, the report would say a gate warns on refs/heads/main, not a protected ref."""
    repo, remote = server(tmp_path)
    repo.write("notes.txt", "more work\n")
    head = repo.commit("more work")
    for name, shown in [
        ("refs/heads/\u202emain", "$'refs/heads/\\u202emain'"),
        ("refs/heads/ma\u200bin", "$'refs/heads/ma\\u200bin'"),
    ]:
        pushed = push(repo, f"HEAD:{name}")
        assert pushed.returncode == 0, pushed.stderr  # not a protected ref: it warns
        assert remote_ref(remote, name) == head
        assert f"-> {shown}: 1 open" in pushed.stderr, pushed.stderr
        assert f"not blocking on {shown} (not a protected ref)" in pushed.stderr
        assert "refs/heads/main" not in pushed.stderr.replace("\u202e", "").replace("\u200b", "")
        deleted = push(repo, f":{name}")
        assert deleted.returncode == 0, deleted.stderr
        assert f"DELETE {shown}: allowed" in deleted.stderr, deleted.stderr


def test_a_push_into_a_git_namespace_is_refused_before_anything_is_judged(tmp_path: Path) -> None:
    """In a namespace git names the refs inside it to the hook, while every git command the
    hook runs reads the whole repository's: failgate would judge the wrong tips."""
    repo, remote = server(tmp_path)
    fix_budget(repo)
    pushed = subprocess.run(
        ["git", "push", "--no-verify", "--receive-pack=GIT_NAMESPACE=team git-receive-pack",
         "origin", "main"], cwd=repo.path, capture_output=True, text=True, check=False,
        timeout=300,
    )  # fmt: skip
    assert pushed.returncode != 0, pushed.stderr
    assert "git namespaces are not supported (GIT_NAMESPACE=team)" in pushed.stderr
    assert "Traceback" not in pushed.stderr
    assert remote_ref(remote, "refs/namespaces/team/refs/heads/main") is None


# --------------------------------------------------------------------------- raw tree modes


def test_a_folder_under_a_raw_mode_keeps_a_path_scoped_gate_in_scope(tmp_path: Path) -> None:
    """The gate applies when the commit's tree has a file matching deploy/**. Git checks
    out a `deploy` entry of mode 40755 as the folder it is, budget.json in it, but
    failgate's tree reader calls it a blob: no file matches, the gate is out of scope,
    and the broken budget lands without its verifier running."""
    repo, remote = server(tmp_path, "--exec", record=("--path", "deploy/**"))
    before = remote_ref(remote, "refs/heads/main")
    repo.write("notes.txt", "more work on the broken budget\n")
    repo.commit("more work")
    assert push(repo, "main").returncode != 0  # in scope, held
    broken = with_raw_mode(repo, "deploy", "40755")
    refused = push(repo, "main")
    assert remote_ref(remote, "refs/heads/main") == before != broken, refused.stderr
    assert refused.returncode != 0
    assert "budget 50M < required 120M" in refused.stderr


def test_a_folder_under_a_raw_mode_cannot_give_two_budgets_one_input_key(tmp_path: Path) -> None:
    """With inputs deploy/*.json the pass is keyed by the files they match. A `deploy`
    of mode 40755 is a folder to git, a blob to failgate: no file matches, whatever
    deploy/budget.json holds, so push 1 (the budget fixed) caches a pass under the key
    of no inputs, and push 2 (the budget broken again) is cleared by it."""
    repo, remote = server(tmp_path, "--exec", record=("--input", "deploy/*.json"))
    fix_budget(repo)
    fixed = with_raw_mode(repo, "deploy", "40755")
    first = push(repo, "main")
    assert first.returncode == 0, first.stderr  # the fix is real: the verifier read it
    assert remote_ref(remote, "refs/heads/main") == fixed
    repo.write("deploy/budget.json", _broken_budget())
    repo.commit("the budget for two and a half modules again")
    broken = with_raw_mode(repo, "deploy", "40755")
    second = push(repo, "main")
    assert remote_ref(remote, "refs/heads/main") == fixed != broken, second.stderr
    assert second.returncode != 0
    assert "budget 50M < required 120M" in second.stderr


def test_a_root_name_with_a_slash_keeps_a_path_scoped_gate_in_scope(tmp_path: Path) -> None:
    """The commit drops the deploy folder and holds a root entry named
    `deploy/budget.json` instead: git's read-tree checks it out at deploy/budget.json,
    the broken budget, but failgate lists deploy/ through a folder entry, finds none, so
    no file matches deploy/** and the gate does not apply."""
    repo, remote = server(tmp_path, "--exec", record=("--path", "deploy/**"))
    before = remote_ref(remote, "refs/heads/main")
    repo.git("rm", "-q", "deploy/budget.json")
    repo.commit("the budget moves")
    broken = with_slash_name(repo, "deploy/budget.json", _broken_budget().encode())
    refused = push(repo, "main")
    assert remote_ref(remote, "refs/heads/main") == before != broken, refused.stderr
    assert refused.returncode != 0
    assert "Traceback" not in refused.stderr


def test_a_root_name_with_a_slash_cannot_give_two_budgets_one_input_key(tmp_path: Path) -> None:
    """With inputs deploy/*.json, push 1 (the budget fixed) caches a pass under the key
    of deploy/'s files. Push 2 keeps that folder and adds a root entry named
    `deploy/budget.json`, the broken budget, after it: git's checkout holds the broken
    one at that path, the input key is push 1's, and its cached pass clears it."""
    repo, remote = server(tmp_path, "--exec", record=("--input", "deploy/*.json"))
    fixed = fix_budget(repo)
    first = push(repo, "main")
    assert first.returncode == 0, first.stderr
    assert remote_ref(remote, "refs/heads/main") == fixed
    repo.write("notes.txt", "more work\n")
    repo.commit("more work")
    broken = with_slash_name(repo, "deploy/budget.json", _broken_budget().encode())
    second = push(repo, "main")
    assert remote_ref(remote, "refs/heads/main") == fixed != broken, second.stderr
    assert second.returncode != 0


def _broken_budget() -> str:
    from failgate_hooks.app import demo

    return demo.budget_json(demo.BROKEN_BUDGET)


def test_a_blob_named_like_the_folder_before_it_keeps_a_path_scoped_gate_in_scope(
    tmp_path: Path,
) -> None:
    """A root tree holding a blob `deploy` and then the folder `deploy`: git checks out
    the folder (deploy/budget.json, broken), GitRepo.tree_entry takes the first entry
    of the name, a blob, so no file matched deploy/** and the gate did not apply. Such
    a tree is refused whole: which entry git uses is git's to say, not failgate's."""
    repo, remote = server(tmp_path, "--exec", record=("--path", "deploy/**"))
    before = remote_ref(remote, "refs/heads/main")
    repo.write("notes.txt", "more work on the broken budget\n")
    repo.commit("more work")
    broken = with_blob_first(repo, "deploy")
    refused = push(repo, "main")
    assert remote_ref(remote, "refs/heads/main") == before != broken, refused.stderr
    assert refused.returncode != 0
    assert "holds two entries named 'deploy' (git fsck: duplicateEntries)" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_push_to_a_symbolic_ref_is_judged_as_the_branch_it_moves(tmp_path: Path) -> None:
    # An alias a server keeps for old clones: a push to it moves main, and git gives
    # the hook only the alias's name.
    repo, remote = server(tmp_path, "--exec")
    git(remote, "symbolic-ref", "refs/heads/trunk", "refs/heads/main")
    repo.write("notes.txt", "more work on the broken budget\n")
    repo.commit("more work")
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, "HEAD:refs/heads/trunk")
    assert refused.returncode != 0, refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before
    deleted = push(repo, ":refs/heads/trunk")  # deletes main through the alias
    assert deleted.returncode != 0, deleted.stderr
    assert remote_ref(remote, "refs/heads/main") == before


def test_a_pushed_replace_ref_never_stands_in_for_the_pushed_commit(tmp_path: Path) -> None:
    """A ref under refs/replace/ makes git show another commit's objects for a commit's
    id. Pushed first, it would have the server read the fixed commit for the broken
    one: its ledger, its tree, the checkout its verifier runs in."""
    repo, remote = server(tmp_path, "--exec")
    repo.write("notes.txt", "more work on the broken budget\n")
    broken = repo.commit("more work")
    fixed = fix_budget(repo)
    repo.git("reset", "-q", "--hard", broken)
    stand_in = push(repo, f"{fixed}:refs/replace/{broken}")
    before = remote_ref(remote, "refs/heads/main")
    pushed = push(repo, "main")
    assert remote_ref(remote, "refs/heads/main") == before, (stand_in.stderr, pushed.stderr)
    assert pushed.returncode != 0
    assert "budget 50M < required 120M" in pushed.stderr


# --------------------------------------------------------------------------- since


def since_server(tmp_path: Path) -> tuple[Repo, Path, str]:
    """A server with --exec whose main is gated since the commit that broke the budget
    again; returns the fixed commit before it too."""
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", RELAXERS)
    fixed, broke = broken_again(repo)
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push", "--since", broke)
    assert push(repo, "main").returncode == 0  # no server hook yet
    install_pre_receive(remote, "--exec")
    return repo, remote, fixed


def test_new_history_cannot_escape_a_gate_scoped_since_a_commit(tmp_path: Path) -> None:
    # The broken tree, ledger and all, under a commit that does not descend from `since`:
    # as a new protected branch, and forced over main, the gate still holds.
    repo, remote, _ = since_server(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    rerooted = new_history(repo)
    for args in ([f"{rerooted}:refs/heads/release/1"], ["--force", f"{rerooted}:main"]):
        refused = push(repo, *args)
        assert refused.returncode != 0, refused.stderr
        assert "the protected revision it is judged against, does: applies" in refused.stderr
        assert "budget 50M < required 120M" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before
    assert remote_ref(remote, "refs/heads/release/1") is None


def test_a_branch_cut_before_since_is_judged_by_its_verifier_and_pushed_by_a_relaxer(
    tmp_path: Path,
) -> None:
    """Its verifier runs on it; and since every commit built on it would be outside the
    gate's `since` too, cutting it is a relaxation: a relaxer's push, once."""
    repo, remote, fixed = since_server(tmp_path)
    refused = push(repo, f"{fixed}:refs/heads/release/1", user="bob")
    assert refused.returncode != 0, refused.stderr
    assert f"CLEARED {KEY}" in refused.stderr
    assert "PENDING" in refused.stderr and "would leave the gate" in refused.stderr
    assert remote_ref(remote, "refs/heads/release/1") is None
    cut = push(repo, f"{fixed}:refs/heads/release/1", user="alice")
    assert cut.returncode == 0, cut.stderr
    assert remote_ref(remote, "refs/heads/release/1") == fixed
    # From then on the branch is judged against its own tip, which the gate never held
    repo.git("checkout", "-q", "-b", "release/1", fixed)
    repo.write("notes.txt", "release notes\n")
    noted = repo.commit("release notes")
    onward = push(repo, "release/1")
    assert onward.returncode == 0, onward.stderr
    assert "no gate applies" in onward.stderr
    assert remote_ref(remote, "refs/heads/release/1") == noted


def test_new_history_that_passes_once_does_not_leave_the_gate_for_good(tmp_path: Path) -> None:
    """The fixed tree under a root commit passes its verifier; accepted as main's tip, it
    would make main a ref the gate's `since` no longer holds, and the budget could be
    cut again on top of it unchecked. So it needs a relaxer, on main and on a new ref."""
    repo, remote, _ = since_server(tmp_path)
    fix_budget(repo)
    rerooted = new_history(repo)
    before = remote_ref(remote, "refs/heads/main")
    for args in (["--force", f"{rerooted}:main"], [f"{rerooted}:refs/heads/release/9"]):
        refused = push(repo, *args, user="bob")
        assert refused.returncode != 0, refused.stderr
        assert f"CLEARED {KEY}" in refused.stderr  # the verifier passed: not enough
        assert "would leave the gate" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before
    assert remote_ref(remote, "refs/heads/release/9") is None


def test_a_pushed_pyproject_whose_tool_is_not_a_table_is_refused_with_its_fault(
    tmp_path: Path,
) -> None:
    repo, remote = server(tmp_path)
    repo.git("rm", "-q", "failgate.toml")
    repo.write("pyproject.toml", "tool = 1\n")
    repo.commit("a pyproject that is not one")
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, "main")
    assert "Traceback" not in refused.stderr, refused.stderr
    assert refused.returncode != 0, refused.stderr
    assert "pyproject.toml" in refused.stderr and "tool must be a table" in refused.stderr
    assert remote_ref(remote, "refs/heads/main") == before


def test_a_release_branch_set_to_warn_is_held_to_what_main_enforces(tmp_path: Path) -> None:
    """A relaxer once set release/1 to mode = "warn", and the server accepted that tip;
    main enforces. The old tip's configuration is held to no laxer than main's, so a
    held gate pushed there is refused (the client hook does the same: test_pre_push)."""
    repo = budget_repo(tmp_path / "work")
    repo.write("failgate.toml", RELAXERS)
    repo.commit("who may relax gates")
    remote = with_remote(repo, tmp_path / "remote.git")
    install_pre_receive(remote, "--exec")
    repo.git("switch", "-q", "-c", "release/1")
    repo.write("failgate.toml", RELAXERS + 'mode = "warn"\n')
    repo.commit("release/1 only warns")
    created = push(repo, "release/1", user="alice")
    assert created.returncode == 0, created.stderr
    before = remote_ref(remote, "refs/heads/release/1")
    record_failure(repo, "push")
    refused = push(repo, "release/1")
    assert refused.returncode != 0, refused.stderr
    assert "remote: BLOCKED" in refused.stderr and KEY in refused.stderr, refused.stderr
    assert remote_ref(remote, "refs/heads/release/1") == before
