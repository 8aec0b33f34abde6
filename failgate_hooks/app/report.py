"""The one evaluation `gates`, `export`, `log` and the agent's held gates report: `check`'s,
with no verifier run.

Each of them reads the same revisions (REV, and the remote's default branch as a
protected revision) and decides through the same `Evaluator` as `check` and the
hooks. A verifier is never started: signed evidence, trust and this machine's
pass cache answer, as they answer `check`, so a gate that `check` cleared reads
as cleared, and one nothing answers for reads as "not run", never as a verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from failgate_hooks.app.evaluate import Evaluator, Request
from failgate_hooks.core.errors import GitError
from failgate_hooks.core.gates import Context, Decision, Gate
from failgate_hooks.git.remotes import inspected_branch, push_destination, ref_commit, tracking_ref
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.config import Config
from failgate_hooks.ledger.union import BUILT_IN, Ledger, Revision, config_for, config_in_force


class Report(NamedTuple):
    """The decision for REV, the ledger it was made from, the revisions read, and the
    configuration in force (the first protected revision's)."""

    decision: Decision
    ledger: Ledger
    revisions: tuple[Revision, ...]
    config: Config

    def gate(self, entity_key: str) -> Gate | None:
        return next((g for g in self.decision.gates if g.entity_key == entity_key), None)


def inspection_revisions(
    repo: GitRepo, rev: str = "HEAD", ref: str | None = None
) -> tuple[list[Revision], tuple[str, ...]]:
    """The revisions the pre-push hook would read for a push of REV to `ref`: REV; the
    remote's tip of `ref` as fetched here, when there is one; the remote default branch.
    The last two are protected, and the first of them gives the configuration. Also
    that branch as a destination ref, which is protected as the hooks protect it."""
    revisions = [Revision(rev, repo.resolve_commit(rev))]
    branch = inspected_branch(repo)
    tracking = tracking_ref(repo, ref) if ref is not None else None
    if tracking is not None and (branch is None or tracking != branch.tracking_ref):
        commit = ref_commit(repo, tracking)
        if commit is not None:
            revisions.append(Revision(tracking, commit, protected=True))
    if branch is None:
        return revisions, ()
    revisions.append(Revision(branch.tracking_ref, branch.commit, protected=True))
    return revisions, (branch.remote_ref,)


def decision_revisions(
    repo: GitRepo,
    rev: str,
    ref: str | None,
    ledger_revs: Sequence[str] = (),
    *,
    signs: bool = False,
) -> tuple[list[Revision], tuple[str, ...], Config]:
    """What a decision for REV reads, as `check` and `gates` read it, and the configuration
    in force.

    REV; then `ledger_revs` when given, else the revisions the pre-push hook would read
    (`inspection_revisions`); then each one the configuration's `ledger_refs` names. All
    but REV are protected, and the first of them gives the configuration (REV's own only
    when none is). Also the refs protected besides the configuration's.

    As the hooks take it (`config_in_force`), the ref's tip is held to no laxer than the
    default branch; but with nothing protected REV's own is taken as it is, not held to
    the built-in defaults as the hooks and `failgate ci` hold it: this is a local look
    that refuses nothing, and with nothing protected here (no remote yet) the commit's
    configuration is the only one the repository states: a team trying mode = "warn"
    before its first push is told what that mode does. The hook a push runs applies
    the floor, and so does a run that `signs` statements (`evidence attest`): what it
    signs stands for a run made as a hook would make it."""
    protected = [Revision(name, repo.resolve_commit(name), protected=True) for name in ledger_revs]
    extra_protected: tuple[str, ...] = ()
    if protected:
        revisions = [Revision(rev, repo.resolve_commit(rev)), *protected]
    else:
        revisions, extra_protected = inspection_revisions(repo, rev, ref)
    # inspection_revisions reads the default branch last, and names it in extra_protected
    default = config_for(repo, revisions[-1:]) if extra_protected else None
    config = config_in_force(repo, revisions, default, floor=BUILT_IN if signs else None)
    # the refs just read by their names, as ledger_refs names them (not a ledger_revs
    # revision: that is read as git reads a revision)
    read = {} if protected else {r.label: r.commit for r in revisions[1:]}
    for name in config.ledger_refs:
        found = read.get(name) or ref_commit(repo, name)
        if found is None:
            raise GitError(
                f"ledger_refs names {name!r}, which this repository lacks ({config.source})",
                hint="fetch it, or fix ledger_refs in the protected configuration",
            )
        revisions.append(Revision(name, found, protected=True))
    return revisions, extra_protected, config


def report(
    repo: GitRepo,
    *,
    rev: str = "HEAD",
    trigger: str = "push",
    ref: str | None = None,
    plain_push: bool = False,
    environment: str | None = None,
    trust_ledger: bool = False,
) -> Report:
    """The decision `check` would reach for REV, answered from the pass cache alone.

    The configuration is `check`'s too: the first protected revision's, REV's own
    only when nothing is protected (no remote here), never the work tree's HEAD's.

    `plain_push`: the destination is not `ref` but the one a plain `git push` updates,
    `@{push}`, else the remote's default branch (else unknown, which blocks)."""
    from failgate_hooks.app.runner import VerifierRunner, evidence_check

    if plain_push:
        if ref is not None:
            raise ValueError("plain_push names the destination: give no ref")
        branch = inspected_branch(repo)
        ref = push_destination(repo) or (branch.remote_ref if branch else None)
    revisions, extra_protected, config = decision_revisions(repo, rev, ref)
    request = Request(
        commit=revisions[0].commit,
        context=Context(trigger=trigger, ref=ref, environment=environment),
        revisions=tuple(revisions),
        trust_ledger=trust_ledger,
        extra_protected_refs=extra_protected,
    )
    runner = VerifierRunner(
        repo, config, trust_ledger=trust_ledger, no_cache=False, cache_only=True
    )
    evidence = evidence_check(repo, config)  # what check reads, so that both agree
    try:
        evaluator = Evaluator(repo, config, runner, evidence=evidence)
        decision, ledger = evaluator.evaluate_with_ledger(request)
    finally:
        runner.close()
        if evidence is not None:
            evidence.close()
    return Report(decision, ledger, tuple(revisions), config)
