"""The evidence ref kept append-only: lines added, copies merged line-wise, pushes retried.

Two CI runs that attest at once both land: a push refused as not a fast
forward fetches the remote's copy, merges it line by line with the local one
(a merge commit whose tree holds every line of both) and pushes again.
"""

from __future__ import annotations

from collections.abc import Mapping

from failgate_hooks.core.errors import GitError
from failgate_hooks.core.evidence import merge_lines
from failgate_hooks.git import evidence as store
from failgate_hooks.git.repo import GitRepo

PUSH_ATTEMPTS = 8


def append_lines(repo: GitRepo, lines: Mapping[str, list[str]]) -> str:
    """Add `lines` (by evidence path) to the local evidence ref; its new commit.

    The ref is moved only from the commit that was read: a writer that moved it
    meanwhile makes this one read again, never lose its lines."""
    for _ in range(PUSH_ATTEMPTS):
        base = store.resolve(repo)
        changed = {}
        for path, added in lines.items():
            held = (store.read_file(repo, base, path) if base else None) or b""
            new = "".join(line + "\n" for line in added).encode("ascii")
            merged = merge_lines(held, new)
            if merged != held:
                changed[path] = merged
        if not changed and base is not None:
            return base
        count = sum(len(v) for v in lines.values())
        commit = store.write_commit(
            repo, [base] if base else [], changed, f"failgate: {count} statement(s)"
        )
        if store.update_ref(repo, commit, base):
            return commit
    raise GitError(f"{store.EVIDENCE_REF} kept moving while statements were added to it")


def merge_tips(repo: GitRepo, ours: str | None, theirs: str) -> str:
    """A commit holding every line of `ours` and `theirs`; `theirs` itself when it holds ours."""
    if ours is None or ours == theirs or repo.is_ancestor(ours, theirs):
        return theirs
    if repo.is_ancestor(theirs, ours):
        return ours
    our_files, their_files = store.files(repo, ours), store.files(repo, theirs)
    changed = {}
    for path, blob in our_files.items():
        if their_files.get(path) == blob:
            continue
        held = repo.read_blob(their_files[path]) if path in their_files else b""
        merged = merge_lines(held, repo.read_blob(blob))
        if merged != held:
            changed[path] = merged
    # Theirs first: the tree starts from it, and only our lines are written over it.
    return store.write_commit(repo, [theirs, ours], changed, "failgate: merge evidence")


def fetch_evidence(repo: GitRepo, remote: str) -> str | None:
    """Bring `remote`'s evidence into its tracking ref: read beside the local one."""
    return store.fetch(repo, remote)


def push_evidence(repo: GitRepo, remote: str) -> str:
    """Push the local evidence, merging the remote's copy in and retrying until it lands."""
    for _ in range(PUSH_ATTEMPTS):
        local = store.resolve(repo)
        if local is None:
            raise GitError(
                f"there is no {store.EVIDENCE_REF} here to push",
                hint="attest first: failgate attest, or failgate ci --attest",
            )
        landed, said = store.push(repo, remote)
        if landed:
            return local
        if "rejected" not in said and "fetch first" not in said:
            raise GitError(f"git push {remote} {store.EVIDENCE_REF} failed: {said.strip()[:300]}")
        theirs = store.fetch(repo, remote)
        if theirs is None:
            continue
        merged = merge_tips(repo, local, theirs)
        store.update_ref(repo, merged, local)  # moved meanwhile: the next round reads it again
    raise GitError(
        f"{store.EVIDENCE_REF} could not be pushed to {remote} in {PUSH_ATTEMPTS} attempts",
        hint="others keep pushing evidence: run failgate evidence push again",
    )
