"""The worlds tests are set in: the case file's budget repository, a bare remote."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from failgate_hooks.app import demo
from tests.conftest import Repo, git, make_repo

KEY = demo.ENTITY


def budget_repo(path: Path, object_format: str = "sha1") -> Repo:
    """Six modules on a budget for two and a half, with the verifier committed."""
    repo = make_repo(path, object_format)
    repo.write(demo.CHECK_PATH, demo.CHECK_SCRIPT)
    repo.write(demo.BUDGET_PATH, demo.budget_json(demo.BROKEN_BUDGET))
    repo.commit("six modules on a budget for two and a half")
    return repo


def record_failure(repo: Repo, trigger: str = "deploy", *extra: str) -> str:
    """The observed event with its verifier, committed; returns the event's path."""
    path = repo.record(
        KEY, "--status", "observed", "--title", demo.TITLE, "--trigger", trigger,
        "--verify", f"python3 {demo.CHECK_PATH}", "--verify-file", demo.CHECK_PATH,
        "--note", "six modules, budget sized for two and a half", "--no-probe", *extra,
    )  # fmt: skip
    repo.commit("record the gas budget failure")
    return path


def trusted_shell_gate(repo: Repo, title: str, *settings: str) -> None:
    """A push gate on KEY whose verifier is the committed `sh checks/check.sh`, pinned,
    with `settings` added to its [verification] as lines; committed and trusted here
    (each setting is part of what trust reviews)."""
    event = repo.record(
        KEY, "--status", "observed", "--title", title, "--trigger", "push",
        "--verify", "sh checks/check.sh", "--verify-file", "checks/check.sh", "--no-probe",
    )  # fmt: skip
    with open(repo.path / event, "a") as handle:
        handle.writelines(f"{line}\n" for line in settings)
    repo.commit("record the gate")
    assert repo.failgate("trust", "--yes").code == 0


def fix_budget(repo: Repo) -> str:
    repo.write(demo.BUDGET_PATH, demo.budget_json(demo.FIXED_BUDGET))
    return repo.commit("size the budget for six modules")


def broken_again(repo: Repo) -> tuple[str, str]:
    """The budget fixed, then cut again: (the fixed commit, the commit that broke it)."""
    fixed = fix_budget(repo)
    repo.write(demo.BUDGET_PATH, demo.budget_json(demo.BROKEN_BUDGET))
    return fixed, repo.commit("cut the budget back to two and a half modules")


def new_history(repo: Repo) -> str:
    """HEAD's tree under a root commit: the same files, descended from nothing."""
    return repo.git("commit-tree", "-m", "the same tree, new history", "HEAD^{tree}")


def with_remote(repo: Repo, path: Path) -> Path:
    """A bare remote `origin` holding the repository's main as it is now."""
    object_format = repo.git("rev-parse", "--show-object-format")
    git(path.parent, "init", "-q", "--bare", "-b", "main", f"--object-format={object_format}",
        str(path))  # fmt: skip
    repo.git("remote", "add", "origin", str(path))
    repo.git("push", "-q", "--no-verify", "origin", "main")
    return path


def single_branch_clone(remote: Path, path: Path, branch: str) -> Repo:
    """`git clone --single-branch -b BRANCH`: refs/remotes/origin/BRANCH is its only
    tracking ref, so no ref here tracks the remote's default branch."""
    git(path.parent, "clone", "-q", "--single-branch", "-b", branch, str(remote), str(path))
    clone = Repo(path)
    assert clone.git("for-each-ref", "--format=%(refname)", "refs/remotes/") == (
        f"refs/remotes/origin/{branch}"
    )
    return clone


def remote_ref(remote: Path, ref: str) -> str | None:
    """Where the remote's ref points, or None when it does not exist."""
    out = git(remote, "for-each-ref", "--format=%(objectname)", ref)
    return out or None


def verified_tree(path: Path, commit: str, ledger_dir: str = "ledger") -> str:
    """The tree a verifier checkout of `commit` holds: the commit's without its ledger."""
    from failgate_hooks.git.repo import GitRepo
    from failgate_hooks.verify.keys import verified_tree as tree_of

    with GitRepo.open(path) as grepo:
        return tree_of(grepo, commit, ledger_dir).tree


def with_raw_mode(repo: Repo, path: str, mode: str, message: str = "a raw tree mode") -> str:
    """A new commit on HEAD's parents: HEAD's tree with the entry at `path` written under
    the raw `mode`, and HEAD moved there. Git reads a mode it does not write as the
    canonical one it stands for ("40755" a folder, "120644" a link, "100664" a file),
    and a server takes such trees: receive.fsckObjects is off by default."""
    return _with_tree_entry(repo, path, message, lambda name, oid: mode.encode() + b" " + name)


def with_blob_first(repo: Repo, path: str, message: str = "a blob of a folder's name") -> str:
    """A new commit on HEAD's parents: HEAD's tree with a blob entry named like the
    folder at `path` just before it (a valid order: `deploy` sorts before `deploy/`),
    and HEAD moved there. Git checks out the folder, the later of the two; a lookup
    that takes the first entry of a name finds the blob."""
    blob = _git_bytes(repo, "hash-object", "-w", "--stdin", data=b"a blob\n").decode().strip()
    before = b"100644 " + path.rpartition("/")[2].encode() + b"\0" + bytes.fromhex(blob)
    return _with_tree_entry(repo, path, message, lambda name, oid: before + b"40000 " + name)


def _git_bytes(repo: Repo, *args: str, data: bytes | None = None) -> bytes:
    import subprocess

    return subprocess.run(
        ["git", *args], cwd=repo.path, input=data, capture_output=True, check=True
    ).stdout


def _with_tree_entry(
    repo: Repo,
    path: str,
    message: str,
    head: Callable[[bytes, bytes], bytes],
) -> str:
    """A commit on HEAD's parents of HEAD's tree with the entry at `path` written as
    `head(name, oid)` says up to its id (an entry before it may come first), every
    tree on the way written raw (`--literally`); HEAD moved there."""

    def rewrite(tree: str, parts: list[str]) -> str:
        raw = _git_bytes(repo, "cat-file", "tree", tree)
        width = len(tree) // 2
        out, pos, found = b"", 0, False
        while pos < len(raw):
            space = raw.index(b" ", pos)
            nul = raw.index(b"\0", space)
            entry = raw[pos:nul]
            name, oid = raw[space + 1 : nul], raw[nul + 1 : nul + 1 + width]
            pos = nul + 1 + width
            if name == parts[0].encode():
                found = True
                if len(parts) == 1:
                    entry = head(name, oid)
                else:
                    oid = bytes.fromhex(rewrite(oid.hex(), parts[1:]))
            out += entry + b"\0" + oid
        assert found, f"{parts[0]} is not in tree {tree}"
        written = _git_bytes(
            repo, "hash-object", "-w", "-t", "tree", "--literally", "--stdin", data=out
        )
        return written.decode().strip()

    tree = rewrite(repo.git("rev-parse", "HEAD^{tree}"), path.split("/"))
    parents = [a for p in repo.git("log", "-1", "--format=%P").split() for a in ("-p", p)]
    commit = repo.git("commit-tree", tree, *parents, "-m", message)
    repo.git("update-ref", "HEAD", commit)
    return commit


def with_slash_name(
    repo: Repo, name: str, data: bytes, message: str = "a name with a slash"
) -> str:
    """A new commit on HEAD's parents: HEAD's root tree with one more blob entry whose
    name holds a slash (`checks/json.py`), last, and HEAD moved there. git fsck calls
    that fullPathname, but a server takes it (receive.fsckObjects is off by default),
    and git's read-tree puts the blob at that path of the checkout, over what the
    folder of the same name holds there."""
    import subprocess

    def run(*args: str, data: bytes | None = None) -> bytes:
        return subprocess.run(
            ["git", *args], cwd=repo.path, input=data, capture_output=True, check=True
        ).stdout

    blob = bytes.fromhex(run("hash-object", "-w", "--stdin", data=data).decode().strip())
    raw = run("cat-file", "tree", repo.git("rev-parse", "HEAD^{tree}"))
    raw += b"100644 " + name.encode() + b"\0" + blob
    tree = run("hash-object", "-w", "-t", "tree", "--literally", "--stdin", data=raw)
    parents = [a for p in repo.git("log", "-1", "--format=%P").split() for a in ("-p", p)]
    commit = repo.git("commit-tree", tree.decode().strip(), *parents, "-m", message)
    repo.git("update-ref", "HEAD", commit)
    return commit


def long_file_names(path: Path) -> tuple[Repo, str]:
    """A repository of 20 files with names of 210 characters under deep/, committed: what
    many long globs are matched against (the budget for matching); and the commit."""
    repo = make_repo(path)
    for i in range(20):
        repo.write(f"deep/{'a' * 200}{i:02d}.json", "x\n")
    return repo, repo.commit("long names")
