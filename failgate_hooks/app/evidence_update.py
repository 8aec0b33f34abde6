"""The server's rule for the evidence ref: an update may add lines, never drop one.

A statement once pushed stays, as a ledger event does: a signer's pass is
revoked in the protected signers file, never by rewriting the evidence, so
that no one who can push can make a gate look as if it had never been
attested, nor swap a statement for another under the same name. Deleting the
ref drops every line, so it is refused too.
"""

from __future__ import annotations

from failgate_hooks.core.decide import decide
from failgate_hooks.core.events import Problem
from failgate_hooks.core.gates import Context, Decision, Policy
from failgate_hooks.git import evidence as store
from failgate_hooks.git.repo import GitRepo, is_null_id


def update_problems(repo: GitRepo, old: str | None, new: str) -> list[Problem]:
    """A problem for each file of `new` too large to read, and each of `old` (None: the
    ref is created) whose lines `new` does not all hold."""
    # loaded only here: a push of anything but the evidence ref never reads a statement
    from failgate_hooks.core.evidence import MAX_FILE_BYTES, evidence_lines

    problems = []
    new_files = store.files(repo, new)
    old_files = {} if old is None else store.files(repo, old)
    read = {}
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
    for path, blob in sorted(old_files.items()):
        if new_files.get(path) == blob:
            continue
        kept = set(evidence_lines(read[path])) if path in new_files else set()
        lost = [line for line in evidence_lines(repo.read_blob(blob)) if line not in kept]
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
    return problems


def judge_evidence_update(repo: GitRepo, old: str, new: str) -> Decision:
    """The decision for a pushed update of the evidence ref: refused when a line is lost."""
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
        problems = update_problems(repo, None if is_null_id(old) else old, new)
    policy = Policy(protected_refs=(store.EVIDENCE_REF,), authority="protected")
    context = Context(trigger="push", ref=store.EVIDENCE_REF)
    commit = old if is_null_id(new) else new
    return decide([], {}, context=context, policy=policy, errors=problems, commit=commit)
