"""Whether a gate's verifier needs to run on commit C, and its run when it does.

Two local facts are consulted before anything runs: whether this machine
trusts the verifier, and whether the same verifier already passed on the same
content. Only a miss loads execute.py, which makes the checkout and starts the
process. The parts live beside this module: subject.py (a gate's pins and
content key, which a pass is cached under and evidence names), keys.py, pins.py,
trust.py, passcache.py, shadowing.py, execute.py.

Git is reached only through `GitRepo`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from failgate_hooks.core.events import DEFAULT_TIMEOUT_S, Verification
from failgate_hooks.core.gates import VerifierOutcome, VerifierResult
from failgate_hooks.core.ids import short_id
from failgate_hooks.core.pusher_env import env_pass_withheld
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify.passcache import PassCache
from failgate_hooks.verify.pins import Pin, PinError
from failgate_hooks.verify.shadowing import shadowing
from failgate_hooks.verify.subject import gate_run
from failgate_hooks.verify.trust import TrustStore

if TYPE_CHECKING:
    from failgate_hooks.verify.checkout import Checkouts
    from failgate_hooks.verify.sandbox import Sandbox

UNTRUSTED_DETAIL = "verifier not trusted on this machine: review it with `failgate trust`"
# What `gates`, `export` and `log` say of a verifier they found no cached pass for.
NOT_RUN_DETAIL = "no pass of it is cached here; failgate check runs it"

Progress = Callable[[str], None]


def run_gate_verifier(
    repo: GitRepo,
    *,
    entity_key: str,
    verification: Verification,
    commit: str,
    pinned_from: str | None,
    ledger_dir: str,
    environment: str | None,
    checkouts: Callable[[], Checkouts],
    trust: TrustStore | None = None,
    trust_ledger: bool = False,
    default_timeout_s: float = DEFAULT_TIMEOUT_S,
    no_cache: bool = False,
    progress: Progress | None = None,
    sandbox: Sandbox | None = None,
    cache_only: bool = False,
    pusher_env: bool = False,
    reviewed: bool = False,
) -> VerifierResult:
    """Run one gate's verifier on exactly `commit`, or say why it did not run.

    `cache_only` answers from trust and the pass cache alone: a miss is "not run".
    `pusher_env`: failgate's environment is a pusher's (a server's hook), and no
    variable they set may reach the verifier whose pass stands for every pusher;
    nor, unless the verification is `reviewed` (a protected revision holds the event
    that sets it), any variable its env_pass names. Its pass is then cached as a run
    without them, which never stands for the reviewed run that has them.

    `pinned_from` is the revision the event was read from (None: `commit`).
    `progress` gets one line before the verifier runs; it holds ledger text, so
    the caller sanitises it as any other output. A GitError propagates: git
    could not answer."""
    command = verification.command
    try:
        # the pins and the content key as evidence names them (verify/subject.py)
        run = gate_run(
            repo,
            entity_key=entity_key,
            verification=verification,
            commit=commit,
            pinned_from=pinned_from,
            ledger_dir=ledger_dir,
            environment=environment,
        )
    except PinError as exc:
        return VerifierResult(command, VerifierOutcome.CANNOT_START, detail=str(exc))

    if not trust_ledger:
        store = trust if trust is not None else TrustStore(repo.common_dir)
        if not store.is_trusted(entity_key, run.fingerprint):
            return VerifierResult(command, VerifierOutcome.UNTRUSTED, detail=UNTRUSTED_DETAIL)
    # Before the cache: with `inputs`, a commit that adds a shadow has the key of one
    # that does not, and a cached answer must be the one a run would give.
    shadow = shadowing(repo, commit, run.pins, command, pinned_from)
    if shadow is not None:
        return VerifierResult(command, VerifierOutcome.NO_VERDICT, detail=shadow)

    passes = PassCache(repo.common_dir)
    key = run.pass_key(
        None if sandbox is None else sandbox.isolation,
        env_pass_withheld=env_pass_withheld(pusher_env=pusher_env, reviewed=reviewed),
    )
    if not no_cache:
        hit = passes.lookup(key)
        if hit is not None:
            same = (
                ""
                if hit.commit == commit
                else f"passed on {short_id(hit.commit)}, the same content"
            )
            return VerifierResult(
                command,
                VerifierOutcome.PASSED,
                exit_code=0,
                duration_s=hit.duration_s,
                cached=True,
                detail=same,
            )
    # After the cache, which holds no pass of such a verifier: every pass it keeps was
    # made after this was asked, and the pins are part of its key.
    former = _reads_former_variables(repo, command, run.pins)
    if former is not None:
        return VerifierResult(command, VerifierOutcome.NO_VERDICT, detail=former)
    if cache_only:
        return VerifierResult(command, VerifierOutcome.NOT_RUN, detail=NOT_RUN_DETAIL)

    # checkouts and processes load only when a verifier runs
    from failgate_hooks.verify.execute import run_on_commit

    result = run_on_commit(
        repo,
        verification,
        commit=commit,
        pins=run.pins,
        entity_key=entity_key,
        environment=environment,
        ledger_dir=ledger_dir,
        checkouts=checkouts,
        default_timeout_s=default_timeout_s,
        progress=progress,
        sandbox=sandbox,
        pusher_env=pusher_env,
        reviewed=reviewed,
    )
    if result.outcome is VerifierOutcome.PASSED:
        unstored = passes.record(key, commit=commit, duration_s=result.duration_s)
        if unstored is not None:
            result = result._replace(detail="; ".join(filter(None, [result.detail, unstored])))
    return result


# failgate once told a verifier the trigger and the ref it was run for. A pass stands on
# every ref, so a verifier that still reads them (one that skipped its check unless the
# ref was main would now skip it everywhere) decides on nothing: it has no verdict.
_FORMER_VARIABLES = re.compile(rb"FAILGATE_(?:REF|TRIGGER)(?![A-Z0-9_])")


def _reads_former_variables(
    repo: GitRepo, command: Sequence[str], pins: Sequence[Pin]
) -> str | None:
    """Why the command or a pinned file names FAILGATE_REF or FAILGATE_TRIGGER, or None."""
    named = [arg for arg in command if _FORMER_VARIABLES.search(arg.encode("utf-8", "replace"))]
    found = [pin.path for pin in pins if _FORMER_VARIABLES.search(repo.read_blob(pin.oid))]
    where = f"the command ({named[0]})" if named else found[0] if found else None
    if where is None:
        return None
    return (
        f"{where} names FAILGATE_REF or FAILGATE_TRIGGER, which failgate no longer sets: "
        "a pass stands for the content on every ref and trigger, so the verdict must not "
        "depend on them; scope the gate with applies_to.refs or triggers instead"
    )
