"""What git hands a push hook, read into ref updates.

`pre-push` gets `<local ref> <local oid> <remote ref> <remote oid>` lines (or,
under pre-commit, `PRE_COMMIT_*` variables), `pre-receive` gets `<old> <new>
<ref>` lines: both become the same `RefUpdate`, which `app/push.py` decides.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from failgate_hooks.core.errors import UsageError
from failgate_hooks.git.remotes import configured_remote, ref_commit, tracking_ref_of
from failgate_hooks.git.repo import GitRepo, is_null_id


class RefUpdate(NamedTuple):
    """One pushed ref: `new` is what it becomes, `old` what the other side has."""

    local_ref: str
    new: str
    remote_ref: str
    old: str
    # Why the other side's tip is unknown though the input names none (pre-commit's).
    unknown_tip: str = ""

    @property
    def is_delete(self) -> bool:
        return is_null_id(self.new)

    @property
    def is_create(self) -> bool:
        return is_null_id(self.old)


def parse_pre_push(text: str) -> list[RefUpdate]:
    """`<local ref> <local oid> <remote ref> <remote oid>` lines, every one of them."""
    updates = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.rsplit(maxsplit=3)
        if len(parts) != 4:
            raise UsageError(f"pre-push input line {number} is not '<ref> <oid> <ref> <oid>'")
        updates.append(RefUpdate(*parts))
    return updates


def parse_pre_receive(text: str) -> list[RefUpdate]:
    """`<old> <new> <ref>` lines, as git feeds pre-receive."""
    updates = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 3:
            raise UsageError(f"pre-receive input line {number} is not '<old> <new> <ref>'")
        old, new, ref = parts
        updates.append(RefUpdate(ref, new, ref, old))
    return updates


def from_pre_commit(env: Mapping[str, str]) -> RefUpdate | None:
    """The one ref pre-commit passes in PRE_COMMIT_* variables, or None when none is named.

    pre-commit sets no TO_REF on a first push whose history starts at a root
    commit: the local branch then names the pushed commit.
    """
    to_ref = env.get("PRE_COMMIT_TO_REF", "")
    local = env.get("PRE_COMMIT_LOCAL_BRANCH", "")
    remote_ref = env.get("PRE_COMMIT_REMOTE_BRANCH", "")
    if not to_ref and not local:
        return None
    new = to_ref or local
    old = env.get("PRE_COMMIT_FROM_REF", "") or "0" * 40
    return RefUpdate(local or to_ref, new, remote_ref or local, old)


def as_fetched(repo: GitRepo, remote: str, update: RefUpdate) -> RefUpdate:
    """pre-commit's ref update with the old tip this clone knows, never a made-up one.

    pre-commit's FROM_REF is the remote's tip only when this clone has that commit;
    otherwise (a new branch, or a tip not fetched) it is the parent of the first pushed
    commit no ref of the remote holds here: an old commit of the pusher's choosing,
    whose configuration must not decide. So it is the old tip only where this clone's
    tracking ref of that branch stands. With no tracking ref the push is read as the
    plain hook reads a creation (the default branch's configuration in force); with
    one elsewhere, the old tip pre-commit names is not the one fetched: unknown, as a
    tip this clone lacks is to the plain hook. What no variable shows is a remote tip
    pushed after the last fetch, under work built on the fetched one: pre-commit then
    names the fetched tip, as for an ordinary push (the plain hook and the server see
    the real one)."""
    created = update._replace(old="0" * 40)
    name = configured_remote(repo, remote)
    tracking = None if name is None else tracking_ref_of(update.remote_ref, name)
    if tracking is None:
        return created
    fetched = ref_commit(repo, tracking)
    if fetched is None:
        return created
    if not update.is_create and fetched == repo.try_resolve_commit(update.old):
        return update
    unknown = (
        f"{remote}'s {update.remote_ref} is not at {fetched[:12]}, where it was last fetched "
        f"({tracking}), and pre-commit does not say where it is"
    )
    return created._replace(unknown_tip=unknown)
