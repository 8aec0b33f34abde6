"""A real `git push` through the installed plain hook to a real bare remote."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Repo, git
from tests.worlds import (
    KEY,
    broken_again,
    budget_repo,
    fix_budget,
    new_history,
    record_failure,
    remote_ref,
    single_branch_clone,
    with_remote,
)


class Push:
    def __init__(self, proc: subprocess.CompletedProcess[str]) -> None:
        self.code = proc.returncode
        self.output = proc.stdout + proc.stderr

    def __repr__(self) -> str:
        return f"<push exit {self.code}\n{self.output}>"


def push(repo: Repo, *args: str, remote: str = "origin") -> Push:
    proc = subprocess.run(
        ["git", "push", remote, *args], cwd=repo.path, capture_output=True, text=True,
        check=False, timeout=300,
    )  # fmt: skip
    return Push(proc)


def gated(tmp_path: Path, object_format: str = "sha1") -> tuple[Repo, Path]:
    """The remote has the broken config; locally the failure is recorded; the hook is in."""
    repo = budget_repo(tmp_path / "work", object_format)
    remote = with_remote(repo, tmp_path / "remote.git")
    record_failure(repo, "push")
    installed = repo.failgate("install")
    assert installed.code == 0, installed
    return repo, remote


def test_a_held_gate_refuses_the_push_and_the_fix_allows_it(tmp_path: Path) -> None:
    repo, remote = gated(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, "main")
    assert refused.code != 0, refused
    assert "BLOCKED" in refused.output
    assert "budget 50M < required 120M" in refused.output
    assert remote_ref(remote, "refs/heads/main") == before
    fixed = fix_budget(repo)
    allowed = push(repo, "main")
    assert allowed.code == 0, allowed
    assert "CLEARED deploy:mainnet:gas-budget" in allowed.output
    assert remote_ref(remote, "refs/heads/main") == fixed


def test_the_verdict_is_the_last_thing_the_pusher_reads(tmp_path: Path) -> None:
    repo, _ = gated(tmp_path)
    refused = push(repo, "main")
    ours = [line for line in refused.output.splitlines() if line.startswith(("BLOCKED", "OK"))]
    assert ours and ours[-1].startswith("BLOCKED")
    assert "running verifier for deploy:mainnet:gas-budget" in refused.output


def test_one_held_protected_ref_refuses_the_whole_push(tmp_path: Path) -> None:
    repo, remote = gated(tmp_path)
    repo.git("branch", "topic")
    refused = push(repo, "main", "topic")
    assert refused.code != 0, refused
    # both refs point at one commit: its verifier ran once, each ref got its own decision
    assert refused.output.count("running verifier for") == 1, refused
    assert "BLOCKED" in refused.output and "WARN" in refused.output
    assert remote_ref(remote, "refs/heads/topic") is None
    assert remote_ref(remote, "refs/heads/main") != repo.head()


def test_a_new_unprotected_branch_of_a_gated_commit_is_pushed_with_a_warning(
    tmp_path: Path,
) -> None:
    repo, remote = gated(tmp_path)
    allowed = push(repo, "main:refs/heads/wip/budget")
    assert allowed.code == 0, allowed
    assert "WARN" in allowed.output
    assert remote_ref(remote, "refs/heads/wip/budget") == repo.head()


def test_a_release_branch_and_an_annotated_tag_of_a_gated_commit_are_refused(
    tmp_path: Path,
) -> None:
    repo, remote = gated(tmp_path)
    assert push(repo, "main:refs/heads/release/1.0").code != 0
    assert remote_ref(remote, "refs/heads/release/1.0") is None
    repo.git("tag", "-a", "v1.0", "-m", "release 1.0")
    refused = push(repo, "v1.0")
    assert refused.code != 0, refused
    assert remote_ref(remote, "refs/tags/v1.0") is None


def test_a_deletion_is_allowed(tmp_path: Path) -> None:
    repo, remote = gated(tmp_path)
    repo.git("push", "-q", "--no-verify", "origin", "main:refs/heads/old")
    assert remote_ref(remote, "refs/heads/old") is not None
    deleted = push(repo, "--delete", "old")
    assert deleted.code == 0, deleted
    assert remote_ref(remote, "refs/heads/old") is None


def test_deleting_a_ref_stricter_than_main_is_listed_as_relaxed(tmp_path: Path) -> None:
    """The client accepts the relaxation, as it does every other, and says what it sheds."""
    repo, remote = gated(tmp_path)
    repo.git("push", "-q", "--no-verify", "origin", "origin/main:refs/heads/release/0")
    repo.git("checkout", "-q", "-b", "release/1", "origin/main")  # no event main lacks
    repo.write("failgate.toml", "require_evidence = true\n")
    repo.commit("release/1 requires signed evidence")
    repo.git("push", "-q", "--no-verify", "origin", "release/1")
    repo.git("checkout", "-q", "main")
    deleted = push(repo, "--delete", "release/1")
    assert deleted.code == 0, deleted
    assert "RELAXED deletion of refs/heads/release/1" in deleted.output, deleted
    assert "require_evidence true -> false" in deleted.output, deleted
    assert "event file(s)" not in deleted.output, deleted
    assert remote_ref(remote, "refs/heads/release/1") is None
    routine = push(repo, "--delete", "release/0")  # main's configuration: nothing shed
    assert routine.code == 0, routine
    assert "RELAXED" not in routine.output, routine


def test_an_event_edited_in_place_is_refused_with_its_path(tmp_path: Path) -> None:
    repo, remote = gated(tmp_path)
    fix_budget(repo)
    assert push(repo, "main").code == 0
    event = next((repo.path / "ledger").rglob("*.toml"))
    event.write_text(event.read_text().replace("six modules", "seven modules"))
    repo.commit("reword the note in place")
    refused = push(repo, "main")
    assert refused.code != 0, refused
    assert str(event.relative_to(repo.path)) in refused.output
    assert remote_ref(remote, "refs/heads/main") != repo.head()


def test_a_force_push_that_drops_an_event_is_refused_even_when_gates_would_clear(
    tmp_path: Path,
) -> None:
    repo, remote = gated(tmp_path)
    fix_budget(repo)
    assert push(repo, "main").code == 0
    published = remote_ref(remote, "refs/heads/main")
    repo.git("rebase", "-q", "--onto", "HEAD~2", "HEAD~1")  # drop the event commit
    refused = push(repo, "--force", "main")
    assert refused.code != 0, refused
    assert "missing from the new tip" in refused.output
    assert remote_ref(remote, "refs/heads/main") == published


def test_an_old_branch_is_gated_by_an_event_only_upstream_has(tmp_path: Path) -> None:
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    repo.git("branch", "old")
    record_failure(repo, "push")
    fix_budget(repo)
    assert repo.failgate("install").code == 0
    assert push(repo, "main").code == 0
    repo.git("checkout", "-q", "old")
    repo.write("notes.txt", "unrelated work\n")
    repo.commit("work on the old branch")
    refused = push(repo, "old:refs/heads/release/1.0")
    assert refused.code != 0, refused
    assert "deploy:mainnet:gas-budget" in refused.output
    assert remote_ref(remote, "refs/heads/release/1.0") is None


def test_sha256_refuses_allows_and_deletes(tmp_path: Path) -> None:
    repo, remote = gated(tmp_path, "sha256")
    assert len(repo.head()) == 64
    assert push(repo, "main").code != 0
    fixed = fix_budget(repo)
    assert push(repo, "main").code == 0
    assert remote_ref(remote, "refs/heads/main") == fixed
    repo.git("push", "-q", "--no-verify", "origin", "main:refs/heads/old")
    assert push(repo, "--delete", "old").code == 0
    assert remote_ref(remote, "refs/heads/old") is None


FOREIGN_HOOK = '#!/bin/sh\ncat > "$(dirname "$0")/../foreign-saw"\nexit 0\n'


@pytest.fixture
def foreign(tmp_path: Path) -> Repo:
    repo, _ = gated(tmp_path)
    assert repo.failgate("uninstall").code == 0
    hook = repo.path / ".git" / "hooks" / "pre-push"
    hook.write_text(FOREIGN_HOOK)
    hook.chmod(0o755)
    return repo


def test_install_refuses_a_foreign_hook(foreign: Repo) -> None:
    refused = foreign.failgate("install")
    assert refused.code == 2, refused
    assert "not written by failgate" in refused.err
    assert (foreign.path / ".git/hooks/pre-push").read_text() == FOREIGN_HOOK


def test_the_refusal_names_pre_commit_s_hook_id_only_when_its_config_lacks_it(
    foreign: Repo,
) -> None:
    refused = foreign.failgate("install")
    assert "add failgate's hook id to .pre-commit-config.yaml" in refused.err, refused
    foreign.write(
        ".pre-commit-config.yaml", "repos:\n  - repo: local\n    hooks:\n      - id: failgate\n"
    )
    refused = foreign.failgate("install")
    assert refused.code == 2, refused
    assert "failgate install --chain" in refused.err, refused
    assert "add failgate's hook id" not in refused.err, refused


def test_chain_runs_the_foreign_hook_first_with_the_same_stdin(foreign: Repo) -> None:
    assert foreign.failgate("install", "--chain").code == 0
    refused = push(foreign, "main")
    assert refused.code != 0, refused
    saw = (foreign.path / ".git" / "foreign-saw").read_text()
    assert "refs/heads/main" in saw
    assert "BLOCKED" in refused.output


def test_uninstall_restores_the_chained_hook(foreign: Repo) -> None:
    assert foreign.failgate("install", "--chain").code == 0
    assert foreign.failgate("uninstall").code == 0
    assert (foreign.path / ".git/hooks/pre-push").read_text() == FOREIGN_HOOK
    assert not (foreign.path / ".git/hooks/pre-push.before-failgate").exists()


def test_the_hook_fails_closed_when_failgate_is_gone(tmp_path: Path) -> None:
    repo, remote = gated(tmp_path)
    hook = repo.path / ".git" / "hooks" / "pre-push"
    text = hook.read_text()
    hook.write_text(text.replace("FAILGATE_PYTHON=", "FAILGATE_PYTHON=/nonexistent/python #"))
    fix_budget(repo)
    refused = push(repo, "main")
    assert refused.code != 0, refused
    assert "push refused" in refused.output
    assert remote_ref(remote, "refs/heads/main") != repo.head()


def test_install_honours_core_hooks_path(tmp_path: Path) -> None:
    repo, _ = gated(tmp_path)
    assert repo.failgate("uninstall").code == 0
    repo.git("config", "core.hooksPath", "githooks")
    assert repo.failgate("install").code == 0
    assert (repo.path / "githooks" / "pre-push").exists()
    assert push(repo, "main").code != 0


def test_install_into_a_hooks_path_in_the_work_tree_warns_not_to_commit_it(
    tmp_path: Path,
) -> None:
    """Teams commit .githooks/: the hook names this machine's Python, so every teammate's
    push would be refused. A hooks folder outside the work tree, or git's own, is no
    one else's and draws no warning."""
    repo, _ = gated(tmp_path)
    assert "warning" not in repo.failgate("install").err
    repo.git("config", "core.hooksPath", ".githooks")
    installed = repo.failgate("install")
    assert installed.code == 0, installed
    assert "warning: .githooks/pre-push is in the work tree (core.hooksPath)" in installed.err
    assert "do not commit it" in installed.err and "failgate install" in installed.err
    repo.git("config", "core.hooksPath", str(tmp_path / "hooks-elsewhere"))
    elsewhere = repo.failgate("install")
    assert elsewhere.code == 0, elsewhere
    assert "warning" not in elsewhere.err, elsewhere


def test_an_event_not_committed_is_named_as_not_applied(tmp_path: Path) -> None:
    repo, _ = gated(tmp_path)
    fix_budget(repo)
    loose = repo.record(
        "ops:late", "--status", "observed", "--title", "seen after the commit", "--trigger", "push"
    )
    allowed = push(repo, "main")
    assert allowed.code == 0, allowed  # the uncommitted event holds nothing: it was not read
    assert (
        "failgate: warning: 1 ledger file(s) in the work tree are not committed, so they were "
        f"not read and not applied (e.g. {loose})"
    ) in allowed.output
    lines = allowed.output.splitlines()
    warned = next(n for n, line in enumerate(lines) if "not applied" in line)
    verdict = next(n for n, line in enumerate(lines) if line.startswith("OK:"))
    assert warned < verdict  # the verdict is still what the pusher reads last


_FAKE_HOOKS = "def pre_push_main(argv):\n    raise SystemExit(0)\n"


def test_a_failgate_package_in_the_work_tree_is_not_the_hook(tmp_path: Path) -> None:
    # git runs pre-push in the work tree's root: a folder there named like failgate's
    # package, untracked, must not stand in for the installed failgate
    repo, remote = gated(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    for init in ("failgate_hooks/__init__.py", "failgate_hooks/commands/__init__.py"):
        repo.write(init, "")
    repo.write("failgate_hooks/commands/hooks.py", _FAKE_HOOKS)
    refused = push(repo, "main")
    assert refused.code != 0, refused
    assert remote_ref(remote, "refs/heads/main") == before


def test_a_pythonpath_on_the_push_is_not_the_hook(tmp_path: Path) -> None:
    repo, remote = gated(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "failgate_hooks" / "commands").mkdir(parents=True)
    (elsewhere / "failgate_hooks" / "__init__.py").write_text("")
    (elsewhere / "failgate_hooks" / "commands" / "__init__.py").write_text("")
    (elsewhere / "failgate_hooks" / "commands" / "hooks.py").write_text(_FAKE_HOOKS)
    env = {**os.environ, "PYTHONPATH": str(elsewhere)}
    proc = subprocess.run(
        ["git", "push", "origin", "main"], cwd=repo.path, capture_output=True, text=True,
        check=False, timeout=300, env=env,
    )  # fmt: skip
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert remote_ref(remote, "refs/heads/main") == before


def _stand_in(repo: Repo, broken: str) -> str:
    """A commit with the broken one's parent and the fixed tree, on no branch."""
    repo.git("checkout", "-q", "-b", "stand-in")
    fix_budget(repo)
    tree = repo.git("rev-parse", "HEAD^{tree}")
    repo.git("checkout", "-q", "main")
    return repo.git("commit-tree", tree, "-p", f"{broken}^", "-m", "a stand-in")


def test_a_replace_ref_cannot_stand_in_for_the_pushed_commit(tmp_path: Path) -> None:
    # git sends the pushed commit's own objects; a local refs/replace/ must not make
    # the hook decide on another commit's tree
    repo, remote = gated(tmp_path)
    before = remote_ref(remote, "refs/heads/main")
    broken = repo.head()
    repo.git("replace", broken, _stand_in(repo, broken))
    refused = push(repo, "main")
    assert refused.code != 0, refused
    assert remote_ref(remote, "refs/heads/main") == before


def test_a_force_push_of_new_history_cannot_escape_a_gate_s_since(tmp_path: Path) -> None:
    # the same broken tree under a root commit: it does not descend from `since`,
    # but the remote's main, which it would replace, does
    repo = budget_repo(tmp_path / "work")
    _, broke = broken_again(repo)
    record_failure(repo, "push", "--since", broke)
    remote = with_remote(repo, tmp_path / "remote.git")
    assert repo.failgate("install").code == 0
    before = remote_ref(remote, "refs/heads/main")
    refused = push(repo, "--force", f"{new_history(repo)}:main")
    assert refused.code != 0, refused
    assert "the protected revision it is judged against, does: applies" in refused.output
    assert "budget 50M < required 120M" in refused.output
    assert remote_ref(remote, "refs/heads/main") == before


def test_a_graft_cannot_cut_a_gate_s_since_out_of_the_pushed_commit_s_history(
    tmp_path: Path,
) -> None:
    # .git/info/grafts (deprecated, still honoured by git 2.39) rewrites the parents git
    # walks: grafting out the commit a gate applies from would make the push look
    # unrelated to it, while it stays a fast-forward of the remote's tip
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    pushed_before = repo.head()
    since = repo.commit("the commit the failure began with")
    # the remote has it already (on another branch): nothing git must send is missing
    assert push(repo, f"{since}:refs/heads/wip").code == 0
    after = repo.commit("a commit after it")
    record_failure(repo, "push", "--since", since)
    assert repo.failgate("install").code == 0
    (repo.path / ".git" / "info").mkdir(exist_ok=True)
    (repo.path / ".git" / "info" / "grafts").write_text(f"{after} {pushed_before}\n")
    assert since not in repo.git("rev-list", "HEAD")  # git itself believes the graft
    refused = push(repo, "main")
    assert refused.code != 0, refused
    assert KEY in refused.output
    assert remote_ref(remote, "refs/heads/main") == pushed_before


def test_a_push_by_url_is_judged_by_the_remote_s_configuration_not_the_pushed_one(
    tmp_path: Path,
) -> None:
    """git names a URL, not a remote, to the hook: the remote configured with that URL is
    read, and for a URL none has, the default remote's default branch, said in a NOTE."""
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    remote = with_remote(repo, tmp_path / "remote.git")
    mirror = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(remote), str(mirror)], check=True)
    assert repo.failgate("install").code == 0
    repo.git("switch", "-q", "-c", "lax")
    repo.write("failgate.toml", 'mode = "warn"\n')
    repo.commit("only warnings")
    unread = "is the URL of no remote configured here"
    for url, ref in ((remote, "release/x"), (mirror, "release/y")):
        proc = subprocess.run(
            ["git", "push", str(url), f"HEAD:refs/heads/{ref}"], cwd=repo.path,
            capture_output=True, text=True, check=False, timeout=300,
        )  # fmt: skip
        pushed = Push(proc)
        assert pushed.code != 0, pushed
        assert "RELAXED config change" in pushed.output and '"enforce" -> "warn"' in pushed.output
        assert (unread in pushed.output) == (url == mirror), pushed
        assert url != mirror or "refs/remotes/origin/main is read in its place" in pushed.output


def test_a_push_to_a_remote_never_fetched_is_judged_as_a_push_to_its_url(
    tmp_path: Path,
) -> None:
    """`git remote add prod URL`, then `git push prod`: no ref here tracks prod's
    branches, so the default remote's default branch stands in, as it does for a URL no
    remote has, and a NOTE says so; never the pushed commit's own configuration."""
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    with_remote(repo, tmp_path / "remote.git")
    prod = tmp_path / "prod.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(prod))
    repo.git("remote", "add", "prod", str(prod))
    assert repo.failgate("install").code == 0
    repo.git("switch", "-q", "-c", "lax")
    repo.write("failgate.toml", 'mode = "warn"\n')
    repo.commit("only warnings")
    refused = push(repo, "HEAD:refs/heads/main", remote="prod")
    assert refused.code != 0, refused
    assert "RELAXED config change" in refused.output, refused
    assert '"enforce" -> "warn"' in refused.output, refused
    assert "BLOCKED" in refused.output and KEY in refused.output, refused
    assert "no ref here tracks prod's default branch" in refused.output, refused
    assert "refs/remotes/origin/main is read in its place" in refused.output, refused
    assert remote_ref(prod, "refs/heads/main") is None


def test_a_push_to_a_server_s_alias_of_main_is_judged_here_by_the_alias_s_name(
    tmp_path: Path,
) -> None:
    """A limit, said in docs/security.md: the server keeps refs/heads/trunk as a
    symbolic ref to main, and git tells a client of no symbolic ref but HEAD, nor
    fetches one. The client hook judges trunk, a ref failgate does not protect: it
    warns, and the push moves main. The server hook judges the branch a push moves
    (test_pre_receive.py), and is what refuses it."""
    repo, remote = gated(tmp_path)
    git(remote, "symbolic-ref", "refs/heads/trunk", "refs/heads/main")
    warned = push(repo, "HEAD:refs/heads/trunk")
    assert warned.code == 0, warned
    assert "-> refs/heads/trunk" in warned.output and "WARN" in warned.output, warned
    assert "not a protected ref" in warned.output, warned
    assert remote_ref(remote, "refs/heads/main") == repo.head()
    # named in protected_refs, the alias is refused here too
    repo.write("failgate.toml", 'protected_refs = ["refs/heads/main", "refs/heads/trunk"]\n')
    repo.commit("trunk is main's alias on the server")
    repo.git("push", "-q", "--no-verify", "origin", "main")
    repo.write("notes.txt", "more work on the broken budget\n")
    repo.commit("more work")
    refused = push(repo, "HEAD:refs/heads/trunk")
    assert refused.code != 0, refused
    assert "BLOCKED" in refused.output, refused
    assert remote_ref(remote, "refs/heads/main") != repo.head()


def feature_clone(tmp_path: Path) -> Repo:
    """A single-branch clone of feature, from a remote whose main holds a held gate; the
    hook installed."""
    repo = budget_repo(tmp_path / "work")
    record_failure(repo, "push")
    remote = with_remote(repo, tmp_path / "remote.git")
    repo.git("push", "-q", "--no-verify", "origin", "main:refs/heads/feature")
    clone = single_branch_clone(remote, tmp_path / "clone", "feature")
    assert clone.failgate("install").code == 0
    return clone


@pytest.mark.parametrize(
    ("setting", "loosened"),
    [
        ('mode = "warn"', '"enforce" -> "warn"'),
        ('protected_refs = ["refs/heads/nothing"]', "no longer protects refs/heads/main"),
    ],
)
def test_with_no_protected_revision_the_pushed_configuration_only_tightens_the_defaults(
    tmp_path: Path, setting: str, loosened: str
) -> None:
    """A single-branch clone tracks no default branch, and a new branch has no old tip:
    nothing reviewed is read. The pushed configuration is then held to the built-in
    defaults; what it loosens is listed, and does not loosen."""
    clone = feature_clone(tmp_path)
    clone.write("failgate.toml", f"{setting}\n")
    clone.commit("loosen the configuration")
    refused = push(clone, "HEAD:refs/heads/release/1")
    assert refused.code != 0, refused
    assert "BLOCKED" in refused.output and KEY in refused.output, refused
    assert "RELAXED config change" in refused.output and loosened in refused.output, refused
    assert "no ref here tracks origin's default branch" in refused.output, refused
    assert remote_ref(tmp_path / "remote.git", "refs/heads/release/1") is None


def test_in_a_single_branch_clone_the_refusal_says_how_to_fetch_the_branch(
    tmp_path: Path,
) -> None:
    """A single-branch clone of feature pushes over the remote's main, which a colleague
    gated: `git fetch` there never brings main, so the hint says to add it first, and
    following the hint to the letter lets the gate be read."""
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    repo.git("push", "-q", "--no-verify", "origin", "main:refs/heads/feature")
    clone = single_branch_clone(remote, tmp_path / "clone", "feature")
    assert clone.failgate("install").code == 0
    colleague = Repo(tmp_path / "colleague")
    git(tmp_path, "clone", "-q", str(remote), str(colleague.path))
    record_failure(colleague, "push")
    colleague.git("push", "-q", "--no-verify", "origin", "main")  # after the clone was made
    gated_tip = colleague.head()
    clone.write("notes.txt", "work that never saw the gate\n")
    clone.commit("work on feature")
    refused = push(clone, "--force", "HEAD:refs/heads/main")
    assert refused.code != 0, refused
    hint = "git remote set-branches --add origin main && git fetch origin, then push again"
    assert hint in refused.output, refused
    assert "git fetch --prune" not in refused.output, refused
    assert remote_ref(remote, "refs/heads/main") == gated_tip

    clone.git("fetch", "-q", "--prune", "origin")  # the old hint: main does not come
    assert clone.git("cat-file", "-t", gated_tip, check=False) != "commit"
    subprocess.run(hint.removesuffix(", then push again"), shell=True, cwd=clone.path, check=True)
    held = push(clone, "--force", "HEAD:refs/heads/main")
    assert held.code != 0, held
    assert "BLOCKED" in held.output and KEY in held.output, held
    assert remote_ref(remote, "refs/heads/main") == gated_tip


def test_a_release_branch_set_to_warn_is_held_to_what_main_enforces(tmp_path: Path) -> None:
    """release/1's tip carries mode = "warn", committed there by an admin long ago; main
    enforces. The server holds the old tip's configuration to no laxer than main's
    (pre_receive, strictest): so do the client and `check`, and a held gate is refused."""
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    repo.git("switch", "-q", "-c", "release/1")
    repo.write("failgate.toml", 'mode = "warn"\n')
    repo.commit("release/1 only warns")
    repo.git("push", "-q", "--no-verify", "origin", "release/1")
    before = remote_ref(remote, "refs/heads/release/1")
    record_failure(repo, "push")
    assert repo.failgate("install").code == 0
    refused = push(repo, "release/1")
    assert refused.code != 0, refused
    assert "BLOCKED" in refused.output and KEY in refused.output, refused
    assert remote_ref(remote, "refs/heads/release/1") == before
    check = repo.failgate("check", "--ref", "refs/heads/release/1")
    assert check.code == 1 and "BLOCKED" in check.out, check  # check says what the hook does


def test_a_force_push_over_a_remote_tip_this_clone_lacks_is_refused_where_failgate_enforces(
    tmp_path: Path,
) -> None:
    """A colleague's gate reached the remote's main; this clone never fetched it. Its
    ledger cannot be read, so a force push over it is refused with what to do; on a
    ref where failgate only warns, a NOTE says the same and the push goes on."""
    repo = budget_repo(tmp_path / "work")
    remote = with_remote(repo, tmp_path / "remote.git")
    colleague = Repo(tmp_path / "colleague")
    subprocess.run(["git", "clone", "-q", str(remote), str(colleague.path)], check=True)
    record_failure(colleague, "push")
    colleague.git("push", "-q", "--no-verify", "origin", "main", "main:refs/heads/wip/gas")
    gated_tip = colleague.head()
    assert repo.failgate("install").code == 0
    repo.write("notes.txt", "work that never saw the gate\n")
    repo.commit("work on a stale main")

    refused = push(repo, "--force", "main")
    assert refused.code != 0, refused
    assert "failgate-pre-push: push refused" in refused.output
    assert f"origin's refs/heads/main is at {gated_tip[:12]}, which this repository lacks" in (
        refused.output
    )
    assert "git fetch --prune origin), then push again" in refused.output
    assert remote_ref(remote, "refs/heads/main") == gated_tip

    warned = push(repo, "--force", "main:refs/heads/wip/gas")
    assert warned.code == 0, warned
    assert "NOTE origin's refs/heads/wip/gas is at" in warned.output
    assert remote_ref(remote, "refs/heads/wip/gas") == repo.head()

    repo.git("fetch", "-q", "origin", "main")  # now the gate is read, and holds
    held = push(repo, "--force", "main")
    assert held.code != 0, held
    assert "BLOCKED" in held.output and KEY in held.output
    assert remote_ref(remote, "refs/heads/main") == gated_tip
