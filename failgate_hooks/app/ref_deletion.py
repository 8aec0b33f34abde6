"""A deleted ref: the event files it would take with it, and what of its configuration
a ref created again in its place would shed (`app/push.py` decides every other ref)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from failgate_hooks.app.evaluate import Evaluator, Request, signers_added
from failgate_hooks.app.hook_input import RefUpdate
from failgate_hooks.core.decide import enforces
from failgate_hooks.core.events import is_ledger_file
from failgate_hooks.core.gates import PUSH, Context, Decision, Policy, Relaxation, RelaxationKind
from failgate_hooks.core.sanitize import shown_ref
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.config import Config, loosened


class InForce(NamedTuple):
    """The configuration in force at a ref, and the commit it is read from (None: the
    built-in defaults)."""

    config: Config
    commit: str | None


def judge_deletion(
    repo: GitRepo,
    evaluator: Callable[[Config], Evaluator],
    in_force: InForce,
    recreated: Config,
    update: RefUpdate,
    old: str | None,
    default: tuple[str, str] | None,
    authority: str,
    relaxer: bool = False,
    pusher: str | None = None,
) -> tuple[Decision | None, list[str]]:
    """A deleted ref's decision (None: nothing to decide) and notes. `default` is the
    default branch as a ref of the side that receives the push, and its tip;
    `recreated` the configuration the ref would be judged by if it were created again.
    The deletion is a relaxation when failgate enforces there and its ledger holds
    event files that the default branch lacks or holds otherwise (else they would leave
    the server with it), or its configuration in force is stricter than `recreated`
    (else deleting and creating it again would shed it)."""
    config = in_force.config
    protected = (*config.protected_refs, *((default[0],) if default else ()))
    policy = Policy(protected_refs=protected, block_on=config.block_on)
    if not enforces(Context(trigger=PUSH, ref=update.remote_ref), policy):
        return None, []
    if old is None:
        return None, [
            f"deletion of {shown_ref(update.remote_ref)}: its tip is not in this repository, "
            "so which ledger events it holds is unknown: fetch it to check"
        ]

    def events(commit: str) -> set[tuple[str, str]]:
        """(path, blob) of each event file: a file at the same path with other bytes on
        the default branch is not the event this ref holds."""
        listing = repo.ls_folder(commit, config.ledger)
        return {(e.path, e.oid) for e in listing if is_ledger_file(e.path)}

    if default is not None and default[0] == update.remote_ref:
        # Whatever it holds: without it another branch, as it stands, would become the
        # default whose ledger and configuration decide every ref.
        what = (
            f"deletion of {shown_ref(update.remote_ref)}, the server's default branch: another "
            "branch, never judged as the default, would decide every ref"
        )
    else:
        kept = set() if default is None else events(default[1])
        lost = sorted(path for path, _ in events(old) - kept)
        shed = _shed_by_recreation(repo, in_force, recreated, default)
        if not lost and not shed:
            return None, []
        losses = []
        if lost:
            losses.append(
                f"its ledger holds {len(lost)} event file(s) that the default branch lacks "
                f"or holds otherwise (e.g. {lost[0]})"
            )
        if shed:
            losses.append(
                f"created again, it would be judged by the configuration from "
                f"{recreated.source} alone, laxer than its own ({config.source}): "
                f"{'; '.join(shed)}"
            )
        what = f"deletion of {shown_ref(update.remote_ref)}: {'; and '.join(losses)}"
    accepted = authority == "accept" or relaxer
    relaxation = Relaxation("", "", RelaxationKind.REF_DELETION.value, accepted, what)
    request = Request(
        commit=old,
        context=Context(trigger="push", ref=update.remote_ref),
        revisions=(),
        authority=authority,
        run_verifiers=False,
        pusher_is_relaxer=relaxer,
        pusher=pusher,
        extra_protected_refs=(default[0],) if default else (),
        other_relaxations=(relaxation,),
    )
    return evaluator(config).evaluate(request), []


def _shed_by_recreation(
    repo: GitRepo, in_force: InForce, recreated: Config, default: tuple[str, str] | None
) -> list[str]:
    """What of a ref's configuration in force a deletion and a creation would shed, as a
    configuration change would (`loosened`), and the signer lines its file lacks that
    the default branch's holds (both files must accept a statement while the ref
    stands, only the default branch's once it is created again)."""
    shed = loosened(in_force.config, recreated)
    path, source = in_force.config.evidence_signers, in_force.commit
    if path is None or path != recreated.evidence_signers:
        return shed  # no file, or another one: `loosened` names the change of path
    if default is None or source is None or source == default[1]:
        return shed  # the ref's file is the one a re-created ref would read
    return shed + signers_added(repo, path, source, default[1])


__all__ = ["InForce", "judge_deletion"]
