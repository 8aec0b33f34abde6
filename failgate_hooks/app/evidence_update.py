"""The server's rule for the evidence ref: an update may add lines, never drop one.

A statement once pushed stays, as a ledger event does: a signer's pass is
revoked in the protected signers file, never by rewriting the evidence, so
that no one who can push can make a gate look as if it had never been
attested, nor swap a statement for another under the same name. Deleting the
ref drops every line, so it is refused too.

Because a line can never be taken out again, the server lets in only lines
that verify now: a signed statement whose signer every signers file in force
on the default branch accepts. A line anyone could write (a listed public key
beside a signature that does not verify) would otherwise stay for good, and
enough of them made for one gate would use up the signatures a lookup checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from failgate_hooks.core.decide import decide
from failgate_hooks.core.errors import GitError
from failgate_hooks.core.events import Problem
from failgate_hooks.core.gates import EXIT_CODES, Context, Decision, DecisionKind, Policy
from failgate_hooks.core.sanitize import shown_ref
from failgate_hooks.git import evidence as store
from failgate_hooks.git.repo import GitRepo, is_null_id
from failgate_hooks.git.trees import TreeEntry
from failgate_hooks.ledger.union import Revision

if TYPE_CHECKING:
    from failgate_hooks.app.evidence import EvidenceCheck

# Each line pushed costs an ssh-keygen process or two: a CI run attests one statement
# per gate, and a push must stay within a server's few seconds.
MAX_NEW_LINES = 128


class SignersInForce(NamedTuple):
    """Who may attest where the update lands: the lookup (None: nobody may) and the
    protected revisions its signers files are read at."""

    check: EvidenceCheck | None
    revisions: Sequence[Revision]


def update_problems(
    repo: GitRepo, old: str | None, new: str, signers: SignersInForce | None = None
) -> list[Problem]:
    """A problem for a tree of `new` that is malformed or holds what the evidence layout
    does not; else for each file of `new` too large to read, each of `old` (None: the
    ref is created) whose lines `new` does not all hold, and, with `signers`, for a
    line `new` adds that they did not sign."""
    # loaded only here: a push of anything but the evidence ref never reads a statement
    from failgate_hooks.core.evidence import MAX_FILE_BYTES, evidence_lines

    listed = _listed(repo, old, new)
    if isinstance(listed, Problem):
        return [listed]
    old_entries, new_entries = listed
    problems = _layout_problems(old_entries, new_entries, new)
    if problems:
        return problems  # nothing of a tree no lookup can read is compared
    new_files, old_files = store.files_of(new_entries), store.files_of(old_entries)
    read: dict[str, bytes] = {}
    for path, blob in sorted(new_files.items()):
        if old_files.get(path) == blob:
            continue  # unchanged: accepted before, and bounded then
        data = repo.read_blob_at_most(blob, MAX_FILE_BYTES)
        if data is None:
            problems.append(
                Problem(
                    code="evidence-too-large",
                    message=f"this evidence file is larger than {MAX_FILE_BYTES} bytes, "
                    "more than failgate reads of one",
                    path=path,
                    commit=new,
                )
            )
        read[path] = data or b""
    held = {
        path: evidence_lines(repo.read_blob(blob))
        for path, blob in old_files.items()
        if new_files.get(path) != blob
    }
    for path, lines in sorted(held.items()):
        kept = set(evidence_lines(read[path])) if path in new_files else set()
        lost = [line for line in lines if line not in kept]
        if lost:
            problems.append(
                Problem(
                    code="evidence-dropped",
                    message=f"this update drops {len(lost)} evidence line(s): evidence is "
                    "append-only (revoke a signer in the protected signers file instead)",
                    path=path,
                    commit=new,
                )
            )
    if signers is not None:
        added: list[tuple[str, str]] = []
        for path, data in sorted(read.items()):
            before = set(held.get(path, ()))
            added.extend((path, line) for line in evidence_lines(data) if line not in before)
        problems.extend(_unsigned(added, signers, new))
    return problems


Entries = dict[str, TreeEntry]


def _listed(repo: GitRepo, old: str | None, new: str) -> tuple[Entries, Entries] | Problem:
    """Every entry of `old` (None: none) and of `new`, each tree walked once; a problem
    when a tree of either is malformed (two entries of one name: every lookup would
    then fail for good)."""
    try:
        old_entries = {} if old is None else store.entries(repo, old)
    except GitError as error:
        message = (
            f"the evidence this update builds on is malformed ({error.message}): an "
            f"administrator of the server moves {store.EVIDENCE_REF} back to its last "
            "commit that is not (git update-ref), and the statements after it are pushed again"
        )
        return Problem("evidence-malformed", message, path=store.EVIDENCE_REF, commit=old)
    try:
        new_entries = store.entries(repo, new)
    except GitError as error:
        message = (
            f"this update's tree is malformed ({error.message}): push {store.EVIDENCE_REF} "
            "as failgate attest wrote it"
        )
        return Problem("evidence-malformed", message, path=store.EVIDENCE_REF, commit=new)
    return old_entries, new_entries


def _layout_problems(old_entries: Entries, new_entries: Entries, new: str) -> list[Problem]:
    """A problem when `new` holds an entry the evidence layout has no place for.

    An entry `old` holds unchanged was accepted before, so a server whose evidence
    holds one from before this rule still takes new lines."""
    from failgate_hooks.core.evidence_layout import EXAMPLE_PATH, layout_problem

    outside = []
    for path, entry in sorted(new_entries.items()):
        why = None if old_entries.get(path) == entry else layout_problem(path, entry.mode)
        if why is not None:
            outside.append((path, why))
    if not outside:
        return []
    (path, why), more = outside[0], len(outside) - 1
    message = (
        f"this update puts {why} here{f' (and {more} more entries)' if more else ''}, "
        f"where the evidence layout has none: {store.EVIDENCE_REF} holds only plain files "
        f"at the paths failgate attest writes ({EXAMPLE_PATH}): push it as attest wrote it"
    )
    return [Problem(code="evidence-layout", message=message, path=path, commit=new)]


def _unsigned(added: Sequence[tuple[str, str]], signers: SignersInForce, new: str) -> list[Problem]:
    """A problem when a line added is not a statement a signer in force made; the first
    such line is named, and no line after it is checked."""
    if len(added) > MAX_NEW_LINES:
        message = (
            f"this update adds {len(added)} evidence lines, more than the {MAX_NEW_LINES} "
            "the server checks in one push: push the statements after fewer attestations"
        )
        return [Problem(code="evidence-too-many", message=message, commit=new)]
    for path, line in added:
        if signers.check is None:
            why: str | None = "nobody may attest here: no evidence_signers is configured"
        else:
            why = signers.check.why_not_signed(signers.revisions, line)
        if why is not None:
            message = (
                f"this update adds a line no signer in force signed ({why}): evidence "
                "is append-only, so only statements that verify may land"
            )
            return [Problem(code="evidence-unsigned", message=message, path=path, commit=new)]
    return []


def judge_evidence_update(
    repo: GitRepo, old: str, new: str, signers: SignersInForce | None = None
) -> Decision:
    """The decision for a pushed update of the evidence ref: refused when a line is lost,
    and, with `signers` (the server's), when a line added does not verify for them."""
    problems: list[Problem] = []
    if is_null_id(new):
        problems.append(
            Problem(
                code="evidence-deleted",
                message=f"deleting {store.EVIDENCE_REF} drops every statement: it is append-only",
            )
        )
    elif not repo.has_commit(new):
        problems.append(
            Problem(
                code="evidence-not-a-commit",
                message=f"{store.EVIDENCE_REF} must name a commit, not {new[:12]}",
            )
        )
    else:
        problems = update_problems(repo, None if is_null_id(old) else old, new, signers)
    return _decided(store.EVIDENCE_REF, old, new, problems)


def judge_other_failgate_ref(ref: str, old: str, new: str) -> Decision:
    """A pushed update of a ref under refs/failgate/ other than the evidence ref: refused,
    unless it deletes one. Lookups read the evidence tracking refs (a mirror clone holds
    the server's), and nothing would check the lines pushed there."""
    problems = []
    if not is_null_id(new):
        problems.append(
            Problem(
                code="failgate-ref",
                message=(
                    f"{shown_ref(ref)} is failgate's: only {store.EVIDENCE_REF} may be pushed, "
                    "where each line is checked; evidence is read from every ref under "
                    f"{store.TRACKING_PREFIX}, so nothing may be pushed there"
                ),
            )
        )
    return _decided(ref, old, new, problems)


def _decided(ref: str, old: str, new: str, problems: list[Problem]) -> Decision:
    """The decision on an update of one of failgate's own refs: refused when `problems`,
    each located at least at `ref` (never "the ledger": none is read here)."""
    policy = Policy(protected_refs=(ref,), authority="protected")
    context = Context(trigger="push", ref=ref)
    commit = old if is_null_id(new) else new
    located = [p if p.path else p._replace(path=ref) for p in problems]
    decision = decide([], {}, context=context, policy=policy, errors=located, commit=commit)
    if not decision.errors:
        return decision
    refused = DecisionKind.REFUSED
    return decision._replace(decision=refused, exit_code=EXIT_CODES[refused])
