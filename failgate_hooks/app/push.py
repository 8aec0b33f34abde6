"""Ref updates → one decision per ref (`app/hook_input.py` reads them from git).

`pre-push` (plain git and under pre-commit) and `pre-receive` read different
input but ask the same question of every updated ref: which ledger applies
(the union of revisions), has history stayed append-only, and does a gate hold.
"""

from __future__ import annotations

import functools
import os
import shlex
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from failgate_hooks.app.accepted_tips import AcceptedTips, judged_tips, remember
from failgate_hooks.app.evaluate import Evaluator, Request, ResultKey, RunVerifier
from failgate_hooks.app.evidence_update import (
    SignersInForce,
    judge_evidence_update,
    judge_other_failgate_ref,
)
from failgate_hooks.app.hook_input import RefUpdate
from failgate_hooks.app.ref_deletion import InForce, judge_deletion
from failgate_hooks.core import exitcodes
from failgate_hooks.core.decide import enforces
from failgate_hooks.core.errors import GitError
from failgate_hooks.core.gates import (
    Context,
    Decision,
    DecisionKind,
    Relaxation,
    RelaxationKind,
    VerifierResult,
)
from failgate_hooks.core.sanitize import shown_ref
from failgate_hooks.git.evidence import EVIDENCE_REF, FAILGATE_REFS
from failgate_hooks.git.remotes import (
    Branch,
    configured_remote,
    default_branch,
    default_remote,
    fetches,
    inspected_branch,
    ref_moved,
    tracked_branch,
)
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.appendonly import check_update
from failgate_hooks.ledger.config import Config
from failgate_hooks.ledger.union import Revision, config_for, config_in_force, config_revision

if TYPE_CHECKING:
    from failgate_hooks.app.evidence import EvidenceCheck

SEVERITY = {
    DecisionKind.ALLOWED: 0,
    DecisionKind.HELD: 1,
    DecisionKind.ESCALATED: 2,
    DecisionKind.INTEGRITY: 3,
    DecisionKind.REFUSED: 3,
}


# Plain classes, not dataclasses: the hook imports this module, and dataclasses costs
# every push at import.
class RefOutcome:
    """One ref of the push: its update, its decision (None for a deletion), and notes."""

    def __init__(
        self, update: RefUpdate, decision: Decision | None, notes: list[str] | None = None
    ) -> None:
        self.update = update
        self.decision = decision
        self.notes = [] if notes is None else notes


class PushReport:
    """Every ref's outcome, and what the pusher should know that no ref's decision
    says (uncommitted ledger files)."""

    def __init__(self, outcomes: list[RefOutcome], warnings: list[str]) -> None:
        self.outcomes = outcomes
        self.warnings = warnings

    @property
    def exit_code(self) -> int:
        worst = exitcodes.ALLOWED
        rank = -1
        for outcome in self.outcomes:
            if outcome.decision is not None and SEVERITY[outcome.decision.decision] > rank:
                rank = SEVERITY[outcome.decision.decision]
                worst = outcome.decision.exit_code
        return worst


class HookRun:
    """Shared by every ref of one push: the repository, and verifier results by commit."""

    def __init__(
        self,
        repo: GitRepo,
        make_runner: Callable[[Config], RunVerifier | None],
        *,
        make_evidence: Callable[[Config], EvidenceCheck | None] | None = None,
    ) -> None:
        self.repo = repo
        self.make_runner = make_runner
        self.evaluators: dict[str, Evaluator] = {}
        self.results: dict[ResultKey, VerifierResult] = {}
        # Signed evidence for a configuration (app/evidence.py), or None where nobody
        # attests.
        self.make_evidence = make_evidence

    def evaluator(self, config: Config) -> Evaluator:
        """One evaluator per configuration, all sharing one table of verifier results."""
        if config.source not in self.evaluators:
            runner = self.make_runner(config)
            evidence = None if self.make_evidence is None else self.make_evidence(config)
            self.evaluators[config.source] = Evaluator(
                self.repo, config, runner, self.results, evidence
            )
        return self.evaluators[config.source]


def peel(repo: GitRepo, oid: str, ref: str) -> str:
    """The commit a pushed oid names (annotated tags peeled); fails closed otherwise."""
    commit = repo.try_resolve_commit(oid)
    if commit is None:
        raise GitError(
            f"{shown_ref(ref)}: {oid[:12]} is not a commit (nor a tag of one) in this repository; "
            "failgate cannot tell which gates apply, so the push is refused"
        )
    return commit


def pre_push(
    run: HookRun,
    remote: str,
    updates: Sequence[RefUpdate],
    *,
    trust_ledger: bool = False,
) -> PushReport:
    """Decide every ref of a push, as the client's pre-push hook (authority accept)."""
    repo = run.repo
    name, default, unread = _push_base(repo, remote)
    # The history a remote's refs here hold is on it already: the URL's remote's, else
    # the default remote's.
    checked = name or default_remote(repo)
    outcomes = []
    uncommitted = _UncommittedLedger(repo)
    # What every ref's configuration is held to, as the server holds it (pre_receive).
    base = [Revision(default.tracking_ref, default.commit, True)] if default else []
    default_config = config_for(repo, base) if base else None
    for update in updates:
        if update.remote_ref == EVIDENCE_REF:
            # No gate applies to statements, so no verifier runs on them; the server's
            # rule holds here too, against the remote's tip when this clone has it.
            tip = update.old if repo.has_commit(update.old) else "0" * len(update.old)
            outcomes.append(RefOutcome(update, judge_evidence_update(repo, tip, update.new)))
            continue
        if update.is_delete:
            old = repo.try_resolve_commit(update.old)
            known = [] if old is None else [Revision(f"{remote}'s {update.remote_ref}", old, True)]
            read = [*known, *base]
            config = config_in_force(repo, read, default_config) if read else Config()
            uncommitted.start(config)
            as_remote = None if default is None else (default.remote_ref, default.commit)
            # Pushed again, the ref is judged by the default branch's configuration; with
            # none known here, by its own commit's, so it keeps what it has.
            in_force = InForce(config, config_revision(read)[0] if read else None)
            recreated = config if default_config is None else default_config
            verdict, notes = judge_deletion(
                repo, run.evaluator, in_force, recreated, update, old, as_remote, "accept"
            )
            outcomes.append(RefOutcome(update, verdict, notes))
            continue
        commit = peel(repo, update.new, update.local_ref)
        notes = []
        old = None
        unknown = update.unknown_tip  # pre-commit: the remote's tip is not the one fetched
        if not update.is_create:
            old = repo.try_resolve_commit(update.old)
            if old is None:
                unknown = (
                    f"{remote}'s {shown_ref(update.remote_ref)} is at {update.old[:12]}, "
                    "which this repository lacks"
                )
        revisions = [Revision("pushed commit", commit)]
        if old is not None:
            revisions.append(Revision(f"{remote}'s {update.remote_ref}", old, protected=True))
        extra_protected: tuple[str, ...] = ()
        if default is not None:
            revisions.append(Revision(default.tracking_ref, default.commit, protected=True))
            extra_protected = (default.remote_ref,)
        # A protected branch's old tip (release/1, once set to warn by an admin) is held
        # to no laxer than the default branch, as the server holds it.
        config = config_in_force(repo, revisions, default_config)
        uncommitted.start(config)
        request = Request(
            commit=commit,
            context=Context(trigger="push", ref=update.remote_ref),
            revisions=tuple(revisions),
            authority="accept",
            trust_ledger=trust_ledger,
            extra_protected_refs=extra_protected,
        )
        evaluator = run.evaluator(config)
        if unknown and enforces(request.context, evaluator.policy(request)):
            # Its events are unknown: a force push would drop them unseen.
            raise GitError(
                f"{unknown}: failgate cannot read the gates its ledger holds, so the push is "
                "refused",
                hint=_fetch_hint(repo, name, remote, update.remote_ref),
            )
        if unknown:
            notes.append(f"{unknown}: its ledger was not read; fetch, then push to check it")
        exclude = [f"--remotes={checked}"] if checked else []
        history = check_update(
            repo, old, commit, config.ledger, config.max_event_bytes, exclude=exclude
        )
        decision = evaluator.evaluate(request._replace(history_errors=tuple(history)))
        outcomes.append(RefOutcome(update, decision, notes))
    for outcome in outcomes:
        if outcome.update.remote_ref != EVIDENCE_REF:
            outcome.notes[:0] = unread
    return PushReport(outcomes, uncommitted.warnings())


def _fetch_hint(repo: GitRepo, name: str | None, remote: str, remote_ref: str) -> str:
    """How to fetch the remote's tip of `remote_ref`: `git fetch` alone, unless the remote's
    fetch refspecs do not bring that branch (a single-branch clone)."""
    branch = remote_ref.removeprefix("refs/heads/")
    if name is not None and branch != remote_ref and not fetches(repo, name, remote_ref):
        return (
            f"this clone's fetch does not bring {name}'s {branch} (a single-branch clone): "
            f"git remote set-branches --add {name} {shlex.quote(branch)} && git fetch {name}, "
            "then push again"
        )
    return f"fetch it (git fetch --prune {name or remote}), then push again"


def _push_base(repo: GitRepo, remote: str) -> tuple[str | None, Branch | None, list[str]]:
    """The configured remote a push goes to, the default branch read as protected for
    it, and a note when that branch is not the remote's own.

    git names the remote, or the URL pushed to: the remote configured with that URL is
    read. Where none is, or no ref here tracks the remote's default branch (`git remote
    add prod URL`, never fetched), the default remote's stands in: never the pushed
    commit's configuration alone."""
    name = configured_remote(repo, remote)
    own = None if name is None else tracked_branch(repo, name)
    if own is not None:
        return name, own, []
    branch = inspected_branch(repo)
    instead = f"{branch.tracking_ref} is read in its place" if branch else "nothing is"
    if name is None:
        note = (
            f"{remote} is the URL of no remote configured here, so no protected revision of "
            f"it was read ({instead}): push to a remote by name to check against its branches"
        )
    else:
        note = (
            f"no ref here tracks {name}'s default branch (never fetched, or a single-branch "
            f"clone), so no protected revision of it was read ({instead}): fetch it (git "
            f"fetch {name}; in a single-branch clone, git remote set-branches --add {name} "
            "BRANCH first), then push again to check against it"
        )
    return name, branch, [note]


def pre_receive(
    run: HookRun,
    updates: Sequence[RefUpdate],
    *,
    exec_verifiers: bool,
    environ: Mapping[str, str] = os.environ,
) -> PushReport:
    """Decide every ref of a push on the server (authority protected)."""
    repo = run.repo
    default = server_default_branch(repo)
    outcomes = []
    # A server's repository is bare: nothing is uncommitted, this warns only in a non-bare one.
    uncommitted = _UncommittedLedger(repo)
    base = [Revision(default[0], default[1], protected=True)] if default else []
    default_config = config_for(repo, base) if base else None
    accepted = AcceptedTips(repo.common_dir)  # read here; written through `remember`
    judged = functools.cache(lambda: judged_tips(repo, accepted))
    base_commits = {r.commit for r in base}
    enforced: list[tuple[str, str]] = []  # (ref, commit) decided where failgate enforces
    for pushed in updates:
        update = pushed._replace(remote_ref=ref_moved(repo, pushed.remote_ref))
        if update.remote_ref == EVIDENCE_REF:
            made = run.make_evidence(default_config or Config()) if run.make_evidence else None
            signers = SignersInForce(made, base)
            decision = judge_evidence_update(repo, update.old, update.new, signers)
            outcomes.append(RefOutcome(update, decision))
            continue
        if update.remote_ref.startswith(FAILGATE_REFS):
            decision = judge_other_failgate_ref(update.remote_ref, update.old, update.new)
            outcomes.append(RefOutcome(update, decision))
            continue
        old = None if update.is_create else repo.resolve_commit(update.old)
        # The old tip is reviewed only if this server accepted it while enforcing here.
        known = [] if old is None else [_old_tip(accepted, update.remote_ref, old)]
        # Never the pushed commit's own configuration: with no protected revision at all,
        # the built-in defaults decide, and the pushed one is judged against them.
        protected = [r for r in [*known, *base] if r.protected]
        config = config_in_force(repo, protected, default_config) if protected else Config()
        uncommitted.start(config)
        pusher = pusher_identity(config.identity_env, environ)
        relaxer = _may_relax(config, default_config, environ)
        if update.is_delete:
            # Created again, the ref is judged by the default branch's configuration alone.
            in_force = InForce(config, config_revision(protected)[0] if protected else None)
            recreated = default_config or Config()
            verdict, notes = judge_deletion(
                repo, run.evaluator, in_force, recreated, update, old, default, "protected",
                relaxer, pusher,
            )  # fmt: skip
            outcomes.append(RefOutcome(update, verdict, notes))
            continue
        commit = peel(repo, update.new, update.remote_ref)
        revisions = [Revision("new tip", commit), *known, *base]
        takeover = _default_takeover(repo, default, update, relaxer)
        protected_here: tuple[str, ...] = (default[0],) if default else ()
        if takeover:
            protected_here += (update.remote_ref,)  # blocks whatever protected_refs says
        request = Request(
            commit=commit,
            context=Context(trigger="push", ref=update.remote_ref),
            revisions=tuple(revisions),
            authority="protected",
            run_verifiers=exec_verifiers,
            trust_ledger=True,
            pusher_is_relaxer=relaxer,
            pusher=pusher,
            default_ref=default[0] if default else None,
            extra_protected_refs=protected_here,
            other_relaxations=takeover,
        )
        # With require_evidence an open gate is held where no verifier runs: only
        # evidence clears it, and nothing pushed is executed.
        hold_open = exec_verifiers or config.requires_evidence
        evaluator = run.evaluator(config)
        # Where a problem blocks, only history this server judged while it blocked is
        # skipped: a commit on any other ref may have been let through with a warning.
        if enforces(request.context, evaluator.policy(request, hold_open=hold_open)):
            exclude = judged()  # the old tip among them only if accepted
        else:
            exclude = ["--all"]
        history = check_update(
            repo,
            old,
            commit,
            config.ledger,
            config.max_event_bytes,
            exclude=exclude,
            skip_old=False,
        )
        request = request._replace(history_errors=tuple(history))
        decision = evaluator.evaluate(request, hold_open=hold_open)
        # A refusal says when the old tip was not trusted: the default branch's is, as the base.
        untrusted = [r for r in known if not r.protected and r.commit not in base_commits]
        refused = decision.exit_code != exitcodes.ALLOWED
        notes = [_unaccepted_note(update.remote_ref, r.commit) for r in untrusted if refused]
        outcomes.append(RefOutcome(update, decision, notes))
        if decision.enforcing and decision.policy.mode == "enforce":
            enforced.append((update.remote_ref, commit))
    report = PushReport(outcomes, uncommitted.warnings())
    if report.exit_code == exitcodes.ALLOWED:
        # Only now: a refused push moves no ref, and its tips were not accepted.
        problem = remember(repo, enforced)
        report.warnings += [problem] if problem else []
    return report


def _unaccepted_note(ref: str, old: str) -> str:
    return (
        f"{shown_ref(ref)}'s tip {old[:12]} was not accepted by this server while it enforced "
        "there (pushed while only warnings applied, in the push that protected it, or before "
        "this failgate was installed): the events it holds count as new, so a relaxation "
        "only it holds needs a relaxer's push once"
    )


def _old_tip(accepted: AcceptedTips, ref: str, old: str) -> Revision:
    """A ref's old tip on the server: protected when accepted here while enforced; else
    read, but its events are judged as new (pushed while only warnings applied there)."""
    if accepted.holds(ref, old):
        return Revision(f"old tip of {ref}", old, protected=True)
    return Revision(f"old tip of {ref} (not accepted here while enforced)", old, protected=False)


class _UncommittedLedger:
    """The work tree's ledger files a push does not carry, asked of git once per push
    (in the ledger folder of the first configuration in force) while refs are decided."""

    def __init__(self, repo: GitRepo) -> None:
        self._repo = repo
        self._pending: Callable[[], list[str]] | None = None

    def start(self, config: Config) -> None:
        if self._pending is None:
            from failgate_hooks.app.check import start_uncommitted_warnings

            self._pending = start_uncommitted_warnings(self._repo, config.ledger)

    def warnings(self) -> list[str]:
        return self._pending() if self._pending is not None else []


def server_default_branch(repo: GitRepo) -> tuple[str, str] | None:
    """The server's default branch and its tip: HEAD's branch, else main, else master.

    A stock `git init --bare` points HEAD at master; a repository whose default
    branch is main must still protect main and read its ledger and configuration."""
    return default_branch(repo, "HEAD", "refs/heads/")


def _default_takeover(
    repo: GitRepo, default: tuple[str, str] | None, update: RefUpdate, relaxer: bool
) -> tuple[Relaxation, ...]:
    """The creation of a branch that would take over as the server's default from the one
    in force (`server_default_branch` takes HEAD's branch, else main, else master: a stock
    `git init --bare` names master, the team pushes main). From then on its ledger and
    configuration would decide every new ref, so what it holds is the pusher's choice."""
    if default is None or not update.is_create:
        return ()
    order = [r for r in (repo.symbolic_ref("HEAD"), "refs/heads/main", "refs/heads/master") if r]
    named = update.remote_ref
    if named not in order or default[0] not in order:
        return ()
    if order.index(named) >= order.index(default[0]):
        return ()
    what = (
        f"creating {named} makes it the server's default branch in place of {default[0]}: "
        "its ledger and configuration would decide every new ref; on the server, point "
        f"HEAD at {default[0]} (git symbolic-ref HEAD {default[0]})"
    )
    kind = RelaxationKind.DEFAULT_BRANCH.value
    return (Relaxation("", "", kind, relaxer, what),)


def _may_relax(config: Config, default_config: Config | None, environ: Mapping[str, str]) -> bool:
    """Whether the pusher is a relaxer for this ref: in the configuration in force (the
    ref's old tip's), and in the default branch's too. A relaxer revoked on the default
    branch must not keep relaxing every other protected ref whose tip still lists them."""
    for each in (config, *((default_config,) if default_config is not None else ())):
        pusher = pusher_identity(each.identity_env, environ)
        if pusher is None or pusher not in each.relaxers:
            return False
    return True


def pusher_identity(config_env: str | None, environ: Mapping[str, str] = os.environ) -> str | None:
    """Who pushes, from the variable named by `identity_env` (e.g. GL_USERNAME)."""
    if not config_env:
        return None
    return environ.get(config_env) or None


__all__ = [
    "HookRun",
    "PushReport",
    "pre_push",
    "pre_receive",
    "pusher_identity",
]
