"""The bridge from a decision to `verify`: one gate's verifier, run for `evaluate`."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from failgate_hooks.app.evaluate import Evaluator, Request, RunVerifier
from failgate_hooks.core.errors import UsageError
from failgate_hooks.core.events import Verification
from failgate_hooks.core.gates import Assessment, Decision, VerifierResult
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.config import Config

if TYPE_CHECKING:
    from failgate_hooks.app.attest import Attester
    from failgate_hooks.app.evidence import EvidenceCheck
    from failgate_hooks.verify.checkout import Checkouts
    from failgate_hooks.verify.sandbox import Sandbox
    from failgate_hooks.verify.trust import TrustStore


def progress_line(text: str) -> None:
    """One line per gate on standard error, so a push never looks hung.

    It quotes the ledger's verifier command, and a CI runner reads standard error for
    workflow commands (a `git push` in a workflow step too): it is written as none, in
    and out of a step. It is the one line the app layer writes itself, while verifiers
    run; everything else is printed by commands/output.py."""
    from failgate_hooks.core.sanitize import clean_line, no_workflow_commands

    sys.stderr.write(no_workflow_commands(clean_line(text)) + "\n")
    sys.stderr.flush()


class VerifierRunner:
    """Runs verifiers for one repository and config; owns the checkouts they run in.

    `cache_only` runs none: each answer comes from trust and the pass cache.

    `sandbox_by` names what asked for the sandbox (a flag), or None; the
    configuration's `sandbox = "bwrap"` asks for it too."""

    def __init__(
        self,
        repo: GitRepo,
        config: Config,
        *,
        trust_ledger: bool,
        no_cache: bool,
        sandbox_by: str | None = None,
        hidden: Sequence[str] = (),
        cache_only: bool = False,
    ) -> None:
        self.repo = repo
        self.cache_only = cache_only
        self.config = config
        self.trust_ledger = trust_ledger
        self.no_cache = no_cache
        self.sandbox_by = sandbox_by
        self.hidden = tuple(hidden)  # more folders the sandbox hides (a signing key's)
        self._checkouts: Checkouts | None = None
        self._sandbox: Sandbox | None = None
        self._trust: TrustStore | None = None  # read once for every gate of the run

    @property
    def checkouts(self) -> Checkouts:
        # verify, the trust store and the pass cache load with the first verifier to run
        if self._checkouts is None:
            from failgate_hooks.verify.checkout import Checkouts

            self._checkouts = Checkouts(self.repo)
        return self._checkouts

    @property
    def sandbox(self) -> Sandbox | None:
        """The sandbox every verifier runs in, when one was asked for; made once."""
        if self._sandbox is None:
            self._sandbox = verifier_sandbox(
                self.repo, self.config, asked_by=self.sandbox_by, hidden=self.hidden
            )
        return self._sandbox

    def __call__(
        self, request: Request, item: Assessment, verification: Verification, pinned_from: str
    ) -> VerifierResult:
        from failgate_hooks.verify.run import run_gate_verifier
        from failgate_hooks.verify.trust import TrustStore

        if self._trust is None:
            self._trust = TrustStore(self.repo.common_dir)
        return run_gate_verifier(
            self.repo,
            entity_key=item.entity_key,
            verification=verification,
            commit=request.commit,
            pinned_from=pinned_from,
            ledger_dir=self.config.ledger,
            environment=request.context.environment,
            checkouts=lambda: self.checkouts,
            trust=self._trust,
            trust_ledger=self.trust_ledger or request.trust_ledger,
            default_timeout_s=self.config.default_timeout_s,
            no_cache=self.no_cache or request.no_cache,
            progress=progress_line,
            sandbox=self.sandbox,
            cache_only=self.cache_only,
            pusher_env=request.pusher_env,
            reviewed=request.holds_reviewed(pinned_from),
        )

    def close(self) -> None:
        if self._checkouts is not None:
            close_checkouts(self._checkouts)


def verifier_sandbox(
    repo: GitRepo, config: Config, *, asked_by: str | None = None, hidden: Sequence[str] = ()
) -> Sandbox | None:
    """The sandbox a verifier run in `repo` gets, or None when nothing asks for one.

    `asked_by` names a flag that asks for it; `sandbox = "bwrap"` in `config` asks
    too. Every run goes through here (a gate's, each step of replay, record's
    probe), so the configuration's promise holds for each. Only made, never tried:
    a bwrap that is missing is found by the run, which then cannot start."""
    if not asked_by and config.sandbox != "bwrap":
        return None
    from failgate_hooks.verify.pool import pools_folder
    from failgate_hooks.verify.sandbox import Sandbox
    from failgate_hooks.verify.worktree_loads import work_trees

    asked_by = asked_by or f'sandbox = "bwrap" in {config.source}'
    # The repository and every work tree of it, not only the one failgate runs in: nothing
    # there is commit C's, and with the work trees hidden no load watcher is needed.
    folders = [repo.common_dir, repo.git_dir, repo.working_dir or "", *work_trees(repo)]
    # Every pool of kept checkouts: the run's own is bound back over it.
    folders.append(pools_folder(os.environ) or "")
    folders += hidden  # more the caller's run must not see (a signing key's folder)
    return Sandbox(network=config.sandbox_network, hidden=folders, asked_by=asked_by)


def close_checkouts(checkouts: Checkouts) -> None:
    """Close `checkouts`, and print their warnings on standard error: a checkout that
    could not be removed (what ran there stands, the folder is left for a person to
    remove), a pool that could not be kept."""
    checkouts.close()
    for note in dict.fromkeys(checkouts.warnings):
        progress_line(f"failgate: warning: {note}")


def decide_with_verifiers(
    repo: GitRepo,
    config: Config,
    request: Request,
    *,
    sandbox_by: str | None = None,
    attester: Attester | None = None,
) -> Decision:
    """One decision for one request, its verifiers run and its checkouts removed.

    Signed evidence clears what it covers. With an `attester`, every verifier runs
    afresh in the sandbox instead, and each pass is handed to it to be signed."""
    runner = VerifierRunner(
        repo,
        config,
        trust_ledger=request.trust_ledger,
        no_cache=request.no_cache or attester is not None,
        sandbox_by=sandbox_by,
        hidden=() if attester is None else attester.hidden_folders(),
    )
    run: RunVerifier = runner
    evidence = None
    if attester is None:
        evidence = evidence_check(repo, config)
    else:
        from failgate_hooks.app.attest import SANDBOX_HINT

        if runner.sandbox is None:
            raise UsageError("attesting needs the sandbox", hint=SANDBOX_HINT)

        def run(
            request: Request, item: Assessment, verification: Verification, pinned_from: str
        ) -> VerifierResult:
            result = runner(request, item, verification, pinned_from)
            attester.saw(repo, config, request, item, verification, pinned_from, result)
            return result

    try:
        return Evaluator(repo, config, run, evidence=evidence).evaluate(request)
    finally:
        runner.close()
        if evidence is not None:
            evidence.close()


def evidence_check(
    repo: GitRepo,
    config: Config,
    *,
    tips: Sequence[str] | None = None,
    signers: bytes | None = None,
) -> EvidenceCheck | None:
    """The evidence lookup for `config`, or None when nobody may attest (no signers at all).

    Only then is the lookup loaded (app/evidence.py, and the statement format with
    it): a push where nobody attests never pays for them."""
    if signers is None and config.evidence_signers is None:
        return None
    from failgate_hooks.app.evidence import EvidenceCheck
    from failgate_hooks.git.evidence import evidence_tips

    found = evidence_tips(repo) if tips is None else list(tips)
    return EvidenceCheck(repo, config, found, signers)
