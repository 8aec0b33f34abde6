"""One gate decision, end to end: read the ledger, assess, run verifiers, decide.

The imperative shell around the pure core: `ledger` reads, `gates` decides,
`verify` runs. `check`, the hooks and CI all come through `evaluate`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from typing import NamedTuple

from failgate_hooks.core.assess import assess
from failgate_hooks.core.decide import decide
from failgate_hooks.core.errors import GitError, UsageError
from failgate_hooks.core.events import Problem, Verification
from failgate_hooks.core.gates import (
    Assessment,
    Context,
    Decision,
    GateState,
    Policy,
    Relaxation,
    RelaxationKind,
    VerifierOutcome,
    VerifierResult,
)
from failgate_hooks.core.resolve import Resolution, verification_key
from failgate_hooks.core.wildmatch import Budget
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.config import MAX_CONFIG_BYTES, Config, loosened
from failgate_hooks.ledger.union import Ledger, Revision, config_at, config_revision, read_union


class GitFacts:
    """The answers `gates` needs about commit C, asked of git lazily and once."""

    def __init__(
        self, repo: GitRepo, commit: str, ledger_dir: str, protected: Revision | None = None
    ) -> None:
        self._repo = repo
        self._commit = commit
        self._ledger_dir = ledger_dir
        self._protected = protected  # the first protected revision: what C is judged against
        self._since: dict[str, bool | None] = {}
        self._under_since: dict[str, bool] = {}
        # Every gate's paths for C, together; past it a gate's paths are not known to
        # miss, so the gate applies (fail closed).
        self._budget = Budget()
        self._bindings: dict[tuple[str, tuple[str, ...] | None], bool] = {}
        self._folders: dict[str, list[str]] = {}  # sorted file paths under a folder
        self._run_keys: dict[tuple[str, tuple[str, ...] | None], str] = {}

    @property
    def commit(self) -> str:
        return self._commit

    def _run_key(self, commit: str, inputs: tuple[str, ...] | None) -> str:
        """The key a gate's run on `commit` stands on (verify/subject.py), asked once."""
        if (commit, inputs) not in self._run_keys:
            from failgate_hooks.verify.subject import run_content_key

            self._run_keys[commit, inputs] = run_content_key(
                self._repo, commit, inputs, self._ledger_dir
            )
        return self._run_keys[commit, inputs]

    @cached_property
    def _paths(self) -> list[str]:
        return [e.path for e in self._repo.ls_tree(self._commit) if e.type == "blob"]

    @cached_property
    def _shallow(self) -> bool:
        return self._repo.is_shallow()

    def since_relation(self, since: str) -> bool | None:
        if since not in self._since:
            if not self._repo.has_commit(since):
                if self._shallow:
                    # Beyond the shallow boundary, or unknown: only full history can tell.
                    raise GitError(
                        f"this is a shallow clone: {since[:12]}, the since of a gate, is not "
                        f"in it, so whether {self._commit[:12]} descends from it is unknown",
                        hint="fetch full history (git fetch --unshallow; fetch-depth: 0 in CI)",
                    )
                self._since[since] = None
            else:
                related = self._repo.is_ancestor(since, self._commit)
                if not related and self._shallow:
                    raise GitError(
                        f"this is a shallow clone: cannot tell whether {since[:12]} is an "
                        f"ancestor of {self._commit[:12]}",
                        hint="fetch full history (git fetch --unshallow; fetch-depth: 0 in CI)",
                    )
                self._since[since] = related
        return self._since[since]

    def protected_under_since(self, since: str) -> str | None:
        # Asked only after since_relation said False: git has `since`, and full history.
        protected = self._protected
        if protected is None:
            return None
        if since not in self._under_since:
            self._under_since[since] = self._repo.is_ancestor(since, protected.commit)
        return protected.label if self._under_since[since] else None

    def tree_matches(self, patterns: Sequence[str]) -> bool | None:
        from failgate_hooks.core.wildmatch import WorkSpent, literal_prefix, matching

        # Every path a glob matches lies in the folder of its literal prefix: list
        # that folder, not the commit's whole tree (which holds the whole ledger).
        try:
            return any(
                matching(
                    [pattern],
                    self._files_under(literal_prefix(pattern).rpartition("/")[0]),
                    first=True,
                    budget=self._budget,
                )
                for pattern in patterns
            )
        except WorkSpent:
            return None

    def _files_under(self, folder: str) -> list[str]:
        if folder not in self._folders:
            if folder:
                entries = self._repo.ls_folder(self._commit, folder)
                found = sorted(e.path for e in entries if e.type == "blob")
            else:
                found = sorted(self._paths)
            self._folders[folder] = found
        return self._folders[folder]

    def evidence_binds(self, evidence_commit: str, verification: Verification | None) -> bool:
        inputs = verification.inputs if verification is not None else None
        key = (evidence_commit, tuple(inputs) if inputs else None)
        if key not in self._bindings:
            self._bindings[key] = self._binds(evidence_commit, inputs)
        return self._bindings[key]

    def _binds(self, evidence_commit: str, inputs: tuple[str, ...] | None) -> bool:
        if not self._repo.has_commit(evidence_commit):
            return False
        return self._run_key(evidence_commit, inputs) == self._run_key(self._commit, inputs)


class Request(NamedTuple):
    """What to decide: a commit, a trigger, where it goes, and from which ledger."""

    commit: str
    context: Context
    revisions: tuple[Revision, ...]  # C's own first, then the protected ones
    authority: str = "accept"
    run_verifiers: bool = True
    no_cache: bool = False
    trust_ledger: bool = False
    pusher_is_relaxer: bool = False
    pusher: str | None = None  # who pushes, as identity_env names them (servers only)
    default_ref: str | None = None  # the server's default branch, for the advice
    extra_protected_refs: tuple[str, ...] = ()
    history_errors: tuple[Problem, ...] = ()
    # Relaxing changes found by the caller that are not events (a ref deletion).
    other_relaxations: tuple[Relaxation, ...] = ()

    @property
    def pusher_env(self) -> bool:
        """Whether failgate's environment is the pusher's: on a server (authority
        protected) sshd passes LANG and LC_* from the client, a push to a path the
        pusher's whole environment (core/pusher_env.py)."""
        return self.authority == "protected"

    def holds_reviewed(self, pinned_from: str) -> bool:
        """Whether a verification whose files are pinned from `pinned_from`
        (`pinned_revision`) is a reviewed one: a protected revision holds the event
        that sets it, so `pinned_from` is that revision's commit. On a server only
        such a verification gets its env_pass variables (verify/process.py)."""
        return any(r.protected and r.commit == pinned_from for r in self.revisions)

    @property
    def config_from(self) -> str | None:
        """The commit the configuration in force is read from, as `config_for` reads it:
        the first protected revision (None: none is, so C's own or the built-in
        defaults). When it is not C, C's own configuration is compared with it: what
        loosens enforcement or authority, or adds a signer, is a relaxation."""
        protected = any(r.protected for r in self.revisions)
        return config_revision(self.revisions)[0] if protected else None


# (commit, entity, environment, verifier, pinned-from commit, `runs_as`): what one run ran
ResultKey = tuple[str, str, str | None, Verification, str, tuple[object, ...]]
# (request, assessment, verification, pinned_from commit) -> result
RunVerifier = Callable[["Request", Assessment, Verification, str], VerifierResult]


class Evaluator:
    """Decides for one repository and config; verifier results are shared across refs."""

    def __init__(
        self,
        repo: GitRepo,
        config: Config,
        run_verifier: RunVerifier | None = None,
        results: dict[ResultKey, VerifierResult] | None = None,
        evidence: RunVerifier | None = None,
    ) -> None:
        self.repo = repo
        self.config = config
        self.run_verifier = run_verifier
        # shared by every ref of a push: a commit's verifiers run once for each way they run
        self.results = {} if results is None else results
        self.runs_as = runs_as(config)
        # Signed evidence (app/evidence.py): consulted before a verifier runs, and
        # where none does.
        self.evidence = evidence

    def policy(self, request: Request, *, hold_open: bool = True) -> Policy:
        return Policy(
            protected_refs=tuple(self.config.protected_refs) + request.extra_protected_refs,
            block_on=self.config.block_on,
            mode=self.config.mode,
            authority=request.authority,
            pusher_is_relaxer=request.pusher_is_relaxer,
            hold_open=hold_open,
            relaxers=self.config.relaxers,
            identity_env=self.config.identity_env,
            pusher=request.pusher,
            default_ref=request.default_ref,
        )

    def evaluate(self, request: Request, *, hold_open: bool = True) -> Decision:
        """The gate decision for one commit and destination."""
        return self.evaluate_with_ledger(request, hold_open=hold_open)[0]

    def evaluate_with_ledger(
        self, request: Request, *, hold_open: bool = True
    ) -> tuple[Decision, Ledger]:
        """The decision, and the ledger it was made from (for a report of its events)."""
        context = request.context
        judged_against = next((r for r in request.revisions if r.protected), None)
        facts = GitFacts(self.repo, request.commit, self.config.ledger, judged_against)
        ledger = read_union(
            self.repo, request.revisions, self.config.ledger, self.config.max_event_bytes
        )
        policy = self.policy(request, hold_open=hold_open)
        config_relaxations, config_problems = self._config_change(request, policy)
        protected_ids = ledger.protected_ids  # computed once: it walks the whole ledger
        resolutions = list(ledger.resolve_all().values())
        assessments = [
            assess(resolution, facts, context, protected_ids=protected_ids, policy=policy)
            for resolution in resolutions
        ]
        pin_relaxations = self._pin_changes(request, policy, ledger, resolutions)
        results: dict[str, VerifierResult] = {}
        for item in assessments:
            if item.state is GateState.OPEN and item.verification is not None:
                results[item.entity_key] = self._verify(request, ledger, item, item.verification)
        decision = decide(
            assessments,
            results,
            context=request.context,
            policy=policy,
            errors=ledger.problems,
            history_errors=request.history_errors + config_problems,
            commit=request.commit,
            other_relaxations=request.other_relaxations + config_relaxations + pin_relaxations,
        )
        protected_read = any(r.protected for r in request.revisions)
        return decision._replace(protected_read=protected_read), ledger

    def _config_change(
        self, request: Request, policy: Policy
    ) -> tuple[tuple[Relaxation, ...], tuple[Problem, ...]]:
        """C's configuration against the one in force: loosening is a relaxation, and a
        configuration that does not parse is a problem that blocks where a gate would."""
        if not request.revisions or request.config_from == request.commit:
            return (), ()  # no revision: a deletion, which pushes no configuration
        try:
            pushed = config_at(self.repo, request.commit, "the pushed commit")
        except UsageError as error:
            problem = Problem(
                code="invalid-config",
                message=f"{error.message}: it would break every later push",
                commit=request.commit,
            )
            return (), (problem,)
        changes = loosened(self.config, pushed) + self._signers_added(request)
        if not changes:
            return (), ()
        accepted = policy.authority == "accept" or policy.pusher_is_relaxer
        what = f"config change at {request.commit[:12]}: {'; '.join(changes)}"
        kind = RelaxationKind.CONFIG.value
        return (Relaxation("", "", kind, accepted, what),), ()

    def _pin_changes(
        self,
        request: Request,
        policy: Policy,
        ledger: Ledger,
        resolutions: Sequence[Resolution],
    ) -> tuple[Relaxation, ...]:
        """Each verifier whose pinned files C holds otherwise than the protected revision
        they are pinned from, or beside which C puts a module that revision lacks: a
        relaxation. C's copy runs nowhere now, but once C is a protected ref's tip its
        copy is the pinned one, and what lies beside it what was reviewed, whatever the
        gate's state today."""
        pinning = [r for r in resolutions if r.state.verification and r.state.verification.files]
        if not pinning:
            return ()
        from failgate_hooks.verify.pins import Pin, PinError, differs_from, resolve_pins
        from failgate_hooks.verify.shadowing import shadowing

        accepted = policy.authority == "accept" or policy.pusher_is_relaxer
        kind = RelaxationKind.PINNED_FILES.value
        found = []
        for resolution in pinning:
            verification = resolution.state.verification
            assert verification is not None
            pinned_from = pinned_revision(ledger, resolution, request.commit)
            if pinned_from == request.commit:
                continue
            try:
                pins = resolve_pins(self.repo, pinned_from, verification.files)
                why = differs_from(self.repo, request.commit, pins)
            except PinError:
                # The gate cannot start today, but what C puts at a pinned path is what
                # runs once C is a protected tip: a file brought back is a change too,
                # and so is what C puts beside it.
                why = self._path_changed(pinned_from, request.commit, verification.files)
                try:
                    pins = resolve_pins(self.repo, request.commit, verification.files)
                except PinError:  # C lacks them too: what lands beside their paths counts
                    pins = [Pin(p, "100644", "") for p in verification.files if p.endswith(".py")]
            if why is None and pins:
                why = shadowing(self.repo, request.commit, pins, verification.command, pinned_from)
            if why is not None:
                what = f"{why}, pinned for {resolution.entity_key} from {pinned_from[:12]}"
                found.append(Relaxation("", "", kind, accepted, what))
        return tuple(found)

    def _path_changed(self, pinned_from: str, commit: str, files: Sequence[str]) -> str | None:
        """The first pinned path whose entry `commit` holds otherwise than `pinned_from`."""
        for path in files:
            if self.repo.tree_entry(pinned_from, path) != self.repo.tree_entry(commit, path):
                return f"pinned file {path} differs from {commit[:12]}'s"
        return None

    def _signers_added(self, request: Request) -> list[str]:
        """A line the pushed commit adds to the signers file in force: who may attest grows."""
        path = self.config.evidence_signers
        if path is None or request.config_from is None:
            return []
        return signers_added(self.repo, path, request.config_from, request.commit)

    def _verify(
        self, request: Request, ledger: Ledger, item: Assessment, verification: Verification
    ) -> VerifierResult:
        runs = request.run_verifiers and self.run_verifier is not None
        if not runs and self.evidence is None:
            return VerifierResult(verification.command, VerifierOutcome.NOT_RUN, detail="not run")
        # a commit's verifiers run once however many pushed refs point at it
        # Two refs may read the entity from different revisions: the verifier and
        # where its files are pinned from are part of what was run.
        pinned_from = pinned_revision(ledger, ledger.resolve(item.entity_key), request.commit)
        skipped: tuple[str, ...] = ()
        if self.evidence is not None:
            found = self.evidence(request, item, verification, pinned_from)
            if found.outcome is VerifierOutcome.PASSED or not runs:
                return found
            skipped = found.skipped_evidence
        assert self.run_verifier is not None
        key = (
            request.commit,
            item.entity_key,
            request.context.environment,
            verification,
            pinned_from,
            self.runs_as,
        )
        if key not in self.results:
            self.results[key] = self.run_verifier(request, item, verification, pinned_from)
        return self.results[key]._replace(skipped_evidence=skipped)


def runs_as(config: Config) -> tuple[object, ...]:
    """What of a configuration a verifier run depends on beside the verification itself
    (what app/runner.py hands the run): two refs of one push whose configurations differ
    here share no result, so a ref that asks for the sandbox, or a shorter default
    timeout, never takes a pass run without it."""
    return (config.ledger, config.default_timeout_s, config.sandbox, config.sandbox_network)


def pinned_revision(ledger: Ledger, resolution: Resolution, commit: str) -> str:
    """The commit whose copies of the verifier's files run.

    The verification being run was introduced by the first event, in causal
    order, that sets it: a protected revision's copy when that event is in one,
    else C's own. A later event that restates it cannot re-pin it, or a pushed
    commit could repeat the reviewed verification beside a gutted file.
    """
    wanted = resolution.state.verification
    if wanted is None:
        return commit
    key = verification_key(wanted)
    # Every event that sets it, dropped ones too (superseding an event copies its
    # keys forward). Any protected one wins, not only the first: an event's
    # ancestors are in every revision that holds it, so the first is protected
    # whenever a later one is, except among events that do not follow each other,
    # whose order is their ids' and so the pusher's to choose.
    for event_id in resolution.order:
        event = resolution.events.get(event_id)
        if event is None or event.verification is None:
            continue
        if verification_key(event.verification) != key:
            continue
        file = ledger.file_of_id(event_id)
        for rev in file.revisions if file is not None else ():
            if rev.protected:
                return rev.commit
    return commit


def signers_added(repo: GitRepo, path: str, in_force: str, other: str) -> list[str]:
    """The signer lines the file at `path` holds at `other` and not at `in_force`: who
    may attest grows when `other`'s file is the one read."""

    def lines(commit: str) -> set[str] | None:
        """The file's signer lines at `commit`; None when it is too large to read."""
        entry = repo.tree_entry(commit, path)
        if entry is None or entry.type != "blob":
            return set()
        data = repo.read_blob_at_most(entry.oid, MAX_CONFIG_BYTES)
        if data is None:
            return None
        text = data.decode("utf-8", "replace")
        return {ln.strip() for ln in text.splitlines() if ln.strip()[:1] not in ("", "#")}

    grown, before = lines(other), lines(in_force)
    if grown is None or before is None:
        # unread, it could name anyone: judged as a change of who may attest
        return [f"evidence_signers file {path} is larger than {MAX_CONFIG_BYTES} bytes"]
    added = sorted(grown - before)
    if not added:
        return []
    who = ", ".join(line.split()[0] for line in added)
    return [f"evidence_signers file {path} adds {who}"]
