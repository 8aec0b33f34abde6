"""The remotes failgate reads: which one, its default branch, and where a plain push goes."""

from __future__ import annotations

from typing import NamedTuple

from failgate_hooks.core.errors import GitError
from failgate_hooks.git.repo import GitRepo


def remote_default_branch(repo: GitRepo, remote: str) -> tuple[str, str] | None:
    """(ref name, commit) of the remote-tracking ref of `remote`'s default branch.

    `refs/remotes/<remote>/HEAD` when git knows it, else `main`, else `master`.
    """
    return default_branch(repo, f"refs/remotes/{remote}/HEAD", f"refs/remotes/{remote}/")


def configured_remote(repo: GitRepo, remote: str) -> str | None:
    """The configured remote that `remote`, as git names it to the pre-push hook, is: the
    remote itself, or one whose url or pushurl it is (a push to a URL); None for none."""
    if remote in repo.remotes():
        return remote
    for key, url in repo.config_matching(r"^remote\..*\.(url|pushurl)$"):
        if url == remote:
            return key.removeprefix("remote.").rpartition(".")[0]
    return None


def default_branch(repo: GitRepo, head: str, prefix: str) -> tuple[str, str] | None:
    """(ref name, commit) of the branch the symbolic ref `head` names, else of
    `prefix`main, else of `prefix`master: the first of them that names a commit."""
    for ref in (repo.symbolic_ref(head), f"{prefix}main", f"{prefix}master"):
        if ref:
            commit = repo.try_resolve_commit(ref)
            if commit is not None:
                return ref, commit
    return None


def remote_ref_of(tracking_ref: str, remote: str) -> str:
    """`refs/remotes/origin/trunk` -> `refs/heads/trunk`: the remote's own ref it tracks."""
    return "refs/heads/" + tracking_ref.removeprefix(f"refs/remotes/{remote}/")


def push_destination(repo: GitRepo) -> str | None:
    """The remote ref a plain `git push` of the current branch updates (`@{push}`), if any."""
    if not repo.succeeds("rev-parse", "--verify", "--quiet", "@{push}"):
        return None
    tracking = repo.run("rev-parse", "--symbolic-full-name", "@{push}")
    parts = tracking.split("/", 3)
    if len(parts) == 4 and parts[:2] == ["refs", "remotes"]:
        return remote_ref_of(tracking, parts[2])
    return None


class Branch(NamedTuple):
    """A remote's default branch as this repository tracks it."""

    tracking_ref: str  # refs/remotes/<remote>/<branch>
    commit: str
    remote_ref: str  # refs/heads/<branch>: the remote's own ref


def inspected_branch(repo: GitRepo) -> Branch | None:
    """The default remote's default branch, which commands that inspect or write read
    as protected: None when there is no remote, or it has no such branch here."""
    remote = default_remote(repo)
    found = remote_default_branch(repo, remote) if remote else None
    if remote is None or found is None:
        return None
    return Branch(found[0], found[1], remote_ref_of(found[0], remote))


def tracking_tip(repo: GitRepo, remote_ref: str) -> tuple[str, str] | None:
    """(tracking ref, commit) of the default remote's `refs/heads/<branch>` as last
    fetched here, or None: no remote, not a branch, or not fetched."""
    remote = default_remote(repo)
    if remote is None or not remote_ref.startswith("refs/heads/"):
        return None
    tracking = f"refs/remotes/{remote}/{remote_ref.removeprefix('refs/heads/')}"
    commit = repo.try_resolve_commit(tracking)
    return None if commit is None else (tracking, commit)


def default_remote(repo: GitRepo) -> str | None:
    """`origin` when it exists, else the only remote, else None."""
    remotes = repo.remotes()
    if "origin" in remotes:
        return "origin"
    return remotes[0] if len(remotes) == 1 else None


def ref_tips(repo: GitRepo) -> list[tuple[str, str]]:
    """Every ref and the commit it names, tags peeled; refs to anything else left out."""
    listed = repo.run(
        "for-each-ref", "--format=%(objecttype) %(objectname) %(*objecttype) %(*objectname) "
        "%(refname)",
    )  # fmt: skip
    out = []
    for line in listed.splitlines():
        kind, oid, peeled_kind, peeled, ref = line.split(" ", 4)
        if kind == "commit":
            out.append((ref, oid))
        elif kind == "tag":  # a tag of a tag: `*` peels once, git peels the rest
            commit = peeled if peeled_kind == "commit" else repo.try_resolve_commit(oid)
            if commit is not None:
                out.append((ref, commit))
    return out


def ref_moved(repo: GitRepo, ref: str) -> str:
    """The ref a push to `ref` moves: git updates (and deletes) the target of a symbolic
    ref pushed to, an alias a server may keep, and tells the hook only the alias's name.
    A chain is followed as git follows it."""
    moved = ref
    for _ in range(_MAX_SYMREF_DEPTH):
        target = repo.symbolic_ref(moved)
        if target is None or target == moved:
            return moved
        moved = target
    raise GitError(
        f"{ref} is a chain of more than {_MAX_SYMREF_DEPTH} symbolic refs: "
        "failgate cannot tell which branch the push moves, so it is refused"
    )


_MAX_SYMREF_DEPTH = 5  # git's own limit (SYMREF_MAXDEPTH)
