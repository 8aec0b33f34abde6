"""The remotes failgate reads: which one, its default branch, and where a plain push goes."""

from __future__ import annotations

from collections.abc import Sequence
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
    `prefix`main, else of `prefix`master: the first of them that is a ref naming a commit.

    One `for-each-ref` answers for all three when `head` is a ref (a remote's HEAD: it
    names its target); a repository's own HEAD is not one, and `symbolic-ref` reads it."""
    candidates = [f"{prefix}main", f"{prefix}master"]
    if head.startswith("refs/"):
        refs = _refs(repo, [head, *candidates])
        target = next((r.symref for r in refs if r.name == head and r.symref), None)
    else:
        target = repo.symbolic_ref(head)
        refs = _refs(repo, [target, *candidates] if target else candidates)
    tips = {r.name: r.commit for r in refs}
    if target is not None and head in tips:  # a ref's line names its target's commit
        tips.setdefault(target, tips[head])
    order = [target, *candidates] if target else candidates
    return next(((ref, tips[ref]) for ref in order if ref in tips), None)


def remote_ref_of(tracking_ref: str, remote: str) -> str:
    """`refs/remotes/origin/trunk` -> `refs/heads/trunk`: the remote's own ref it tracks."""
    return "refs/heads/" + tracking_ref.removeprefix(f"refs/remotes/{remote}/")


def tracking_ref_of(remote_ref: str, remote: str) -> str | None:
    """`refs/heads/trunk` -> `refs/remotes/origin/trunk`, where a fetch of `remote` keeps
    it; None when `remote_ref` is no branch."""
    if not remote_ref.startswith("refs/heads/"):
        return None
    return f"refs/remotes/{remote}/{remote_ref.removeprefix('refs/heads/')}"


def fetches(repo: GitRepo, remote: str, remote_ref: str) -> bool:
    """Whether `git fetch REMOTE` brings `remote_ref`: some `remote.<name>.fetch` refspec's
    source matches it, and no negative one does. A single-branch clone's
    (`+refs/heads/feature:refs/remotes/origin/feature`) brings no other branch."""
    try:
        out = repo.run("config", "-z", "--get-all", f"remote.{remote}.fetch", strip=False)
    except GitError:  # exit 1: none is set, and a fetch brings only the remote's HEAD
        out = ""
    specs = out.split("\0")[:-1]
    sources = [spec.removeprefix("+").partition(":")[0] for spec in specs]
    if any(_matches(src[1:], remote_ref) for src in sources if src.startswith("^")):
        return False
    return any(_matches(src, remote_ref) for src in sources if not src.startswith("^"))


def _matches(source: str, ref: str) -> bool:
    """A refspec's source against a full ref name: equal, or its one `*` standing for
    anything."""
    if "*" not in source:
        return source == ref
    before, _, after = source.partition("*")
    return len(ref) >= len(before) + len(after) and ref.startswith(before) and ref.endswith(after)


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


def tracked_branch(repo: GitRepo, remote: str) -> Branch | None:
    """`remote`'s default branch as this repository tracks it: None when no ref here
    tracks it (the remote never fetched, or a single-branch clone of another branch)."""
    found = remote_default_branch(repo, remote)
    return None if found is None else Branch(found[0], found[1], remote_ref_of(found[0], remote))


def inspected_branch(repo: GitRepo) -> Branch | None:
    """The default remote's default branch, which commands that inspect or write read
    as protected: None when there is no remote, or it has no such branch here."""
    remote = default_remote(repo)
    return None if remote is None else tracked_branch(repo, remote)


def tracking_ref(repo: GitRepo, remote_ref: str) -> str | None:
    """The ref that tracks the default remote's `refs/heads/<branch>` here, whether or not
    it was fetched; None when there is no remote, or `remote_ref` is no branch."""
    remote = default_remote(repo)
    return None if remote is None else tracking_ref_of(remote_ref, remote)


def default_remote(repo: GitRepo) -> str | None:
    """`origin` when it exists, else the only remote, else None."""
    remotes = repo.remotes()
    if "origin" in remotes:
        return "origin"
    return remotes[0] if len(remotes) == 1 else None


def ref_commit(repo: GitRepo, ref: str) -> str | None:
    """The commit the ref named `ref` in full names (a tag peeled), or None: no such ref,
    or it names something else. Looked up by its exact name, never as a revision."""
    return dict(ref_tips(repo, [ref])).get(ref)


def ref_tips(repo: GitRepo, names: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """Every ref (or each of `names`, full ref names, that is one) and the commit it names,
    tags peeled; refs to anything else left out."""
    return [(ref.name, ref.commit) for ref in _refs(repo, names)]


class _Ref(NamedTuple):
    name: str
    symref: str  # the ref a symbolic ref names; "" for any other
    commit: str  # the commit it names, tags peeled


def _refs(repo: GitRepo, names: Sequence[str] | None) -> list[_Ref]:
    """Every ref, or each of `names` that is one, that names a commit, in one `for-each-ref`.

    A name is looked up as the ref it spells, never as a revision: git's rules for
    revisions read a missing `refs/heads/master` as `refs/refs/heads/master` or
    `refs/tags/refs/heads/master`, refs anyone who may push can create."""
    wanted = [n for n in dict.fromkeys(names or ()) if n.startswith("refs/") and "\n" not in n]
    if names is not None and not wanted:
        return []
    listed = repo.run(
        "for-each-ref", "--format=%(objecttype) %(objectname) %(*objecttype) %(*objectname) "
        "%(symref) %(refname)", *wanted,
    )  # fmt: skip
    out = []
    for line in listed.splitlines():
        kind, oid, peeled_kind, peeled, symref, ref = line.split(" ", 5)
        if names is not None and ref not in wanted:
            continue  # a pattern also lists the refs below it: `refs/heads/main/x`
        if kind == "commit":
            out.append(_Ref(ref, symref, oid))
        elif kind == "tag":  # a tag of a tag: `*` peels once, git peels the rest
            commit = peeled if peeled_kind == "commit" else repo.try_resolve_commit(oid)
            if commit is not None:
                out.append(_Ref(ref, symref, commit))
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
