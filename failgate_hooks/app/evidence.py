"""Deciding with evidence: a gate that a valid signed statement covers clears without its run.

Who may attest is the allowed-signers file `evidence_signers` names, read
at every protected revision of the request (a statement counts only when each
of them lists its signer: one revoked on the default branch is revoked for a
release branch too), or given to the server directly. Statements are read from the
local evidence ref and every remote's tracking copy (on a server: its own ref
and the one being pushed, by object id). A statement counts only after its
signature verifies for a listed principal, and only when it says what the
gate's run would stand on (core/evidence.py's `why_not_covered`); every
other one is skipped with its reason, never an error that allows. A line
whose own bytes say it would not cover the gate is skipped before its
signature is checked: lines about anything else cost no ssh-keygen run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from failgate_hooks.app.evaluate import Request
from failgate_hooks.core.errors import UsageError
from failgate_hooks.core.events import Verification
from failgate_hooks.core.evidence import (
    EvidenceFormatError,
    Statement,
    Subject,
    evidence_lines,
    evidence_path,
    parse_payload,
    split_line,
    why_not_covered,
)
from failgate_hooks.core.gates import Assessment, VerifierOutcome, VerifierResult
from failgate_hooks.git import evidence as store
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.config import Config
from failgate_hooks.ledger.union import Revision, config_at

if TYPE_CHECKING:
    from failgate_hooks.verify.signing import SignatureChecker, Signer

NOT_COVERED = "no signed evidence covers it"
CLEARED = "cleared by evidence; its verifier did not run"
# Each statement with a signature to check costs an ssh-keygen process: so many as an
# attacker may add to a content's file must not spend the server's push budget.
MAX_CHECKED = 64


@dataclass
class EvidenceCheck:
    """Looks up evidence for the gates of one configuration; close it when done."""

    repo: GitRepo
    config: Config
    tips: Sequence[str]  # the evidence commits read, as a union
    signers: bytes | None = None  # given directly (the server's flag): wins over the repository's
    _checkers: dict[bytes, SignatureChecker] = field(default_factory=dict)
    _signer_files: dict[tuple[Revision, ...], tuple[list[bytes], str]] = field(default_factory=dict)

    def __call__(
        self, request: Request, item: Assessment, verification: Verification, pinned_from: str
    ) -> VerifierResult:
        """PASSED with the statement that covers the gate, else NOT_RUN saying why not."""
        # verify/ loads only where someone may attest: a plain push never pays for it.
        from failgate_hooks.verify.pins import PinError
        from failgate_hooks.verify.subject import gate_run

        command = verification.command
        signers, why = self._signers(request.revisions)
        if not signers:
            return _not_covered(command, [why])
        try:
            subject = gate_run(
                self.repo,
                entity_key=item.entity_key,
                verification=verification,
                commit=request.commit,
                pinned_from=pinned_from,
                ledger_dir=self.config.ledger,
                environment=request.context.environment,
            ).subject()
        except PinError as exc:
            return _not_covered(command, [f"the gate's verifier cannot be pinned: {exc}"])
        return self._lookup(command, subject, [self._checker(each) for each in signers])

    def _lookup(
        self, command: tuple[str, ...], subject: Subject, checkers: Sequence[SignatureChecker]
    ) -> VerifierResult:
        path = evidence_path(subject.content)
        lines: list[str] = []
        for tip in self.tips:
            held = store.read_file(self.repo, tip, path)
            lines.extend(evidence_lines(held or b""))
        if not lines:
            return _not_covered(command, [f"no statement about this content ({path})"])
        passed_over: list[str] = []
        candidates: list[tuple[int, str, bytes, bytes, Statement]] = []
        for number, line in enumerate(dict.fromkeys(lines), 1):
            found = _claim(line, subject)
            if isinstance(found, str):
                passed_over.append(f"statement {number} skipped: {found}")
            else:
                candidates.append((number, line, *found))
        # A line whose own bytes say it could not cover the gate is passed over without
        # ssh-keygen, so only lines made for this very gate spend the budget. Among them
        # a listed key goes first, against lines under keys made up by the thousand; a
        # forger can name a listed key too (public keys are public), and only the
        # server's rule that every pushed line verifies (app/evidence_update.py) keeps
        # such lines out of its evidence ref.
        candidates.sort(key=lambda candidate: not _listed(candidate[1], checkers[0]))
        checked: list[str] = []
        for count, (number, _, data, signature, statement) in enumerate(candidates, 1):
            if count > MAX_CHECKED:
                checked.append(f"statements after the first {MAX_CHECKED} were not checked")
                break
            signer = _signer(data, signature, checkers)
            if isinstance(signer, str):
                checked.append(f"statement {number} skipped: {signer}")
                continue
            fields = (
                ("signer", f"{signer.principal} {signer.fingerprint}"),
                ("time", statement.time),
                ("run", statement.run_url or "(no run URL)"),
            )
            return VerifierResult(
                command,
                VerifierOutcome.PASSED,
                detail=CLEARED,
                evidence=fields,
                skipped_evidence=_reasons(checked, passed_over),
            )
        return _not_covered(command, _reasons(checked, passed_over))

    def why_not_signed(self, revisions: Sequence[Revision], line: str) -> str | None:
        """None when every signers file in force at `revisions` accepts `line` as a signed
        statement, else why not: the server asks it of each line pushed."""
        signers, why = self._signers(revisions)
        if not signers:
            return why
        try:
            data, signature = split_line(line)
        except EvidenceFormatError as exc:
            return f"unparsable line: {exc}"
        signer = _signer(data, signature, [self._checker(each) for each in signers])
        if isinstance(signer, str):
            return signer
        try:
            parse_payload(data)
        except EvidenceFormatError as exc:
            return f"signed by {signer.principal}, but {exc}"
        return None

    def _signers(self, revisions: Sequence[Revision]) -> tuple[list[bytes], str]:
        """The allowed-signers files in force, each of which must accept a statement, or
        none and why there are none.

        The file is read at the first protected revision of the request (where the
        configuration is read), and at every other protected revision whose own
        configuration names it too: a signer revoked on the default branch is revoked
        for a release branch whose tip still lists it."""
        if self.signers is not None:
            return [self.signers], ""
        path = self.config.evidence_signers
        if path is None:
            return [], "no evidence_signers is configured"
        protected = tuple(rev for rev in revisions if rev.protected)
        if not protected:
            return [], (
                f"evidence_signers ({path}) is read only from a protected revision, and none "
                "was read (--ledger-rev origin/main)"
            )
        if protected not in self._signer_files:
            self._signer_files[protected] = self._read_signers(path, protected)
        return self._signer_files[protected]

    def _read_signers(self, path: str, protected: Sequence[Revision]) -> tuple[list[bytes], str]:
        found: dict[bytes, None] = {}
        for number, rev in enumerate(protected):
            if number and rev.commit != protected[0].commit:
                try:
                    names = config_at(self.repo, rev.commit, rev.label).evidence_signers
                except UsageError as error:
                    return [], f"who may attest at {rev.label} is unknown: {error.message}"
                if names != path:
                    continue  # it says nothing of who may attest (a ledger-only ref)
            held = store.read_file(self.repo, rev.commit, path)
            if held is None:
                return [], f"the signers file {path} is missing at {rev.label} {rev.commit[:12]}"
            found[held] = None
        return list(found), ""

    def _checker(self, signers: bytes) -> SignatureChecker:
        from failgate_hooks.verify.signing import SignatureChecker

        if signers not in self._checkers:
            self._checkers[signers] = SignatureChecker(signers).__enter__()
        return self._checkers[signers]

    def close(self) -> None:
        for checker in self._checkers.values():
            checker.__exit__(None, None, None)
        self._checkers.clear()


def _listed(line: str, checker: SignatureChecker) -> bool:
    try:
        return checker.listed(split_line(line)[1])
    except EvidenceFormatError:
        return False


def _claim(line: str, subject: Subject) -> tuple[bytes, bytes, Statement] | str:
    """The payload, signature and statement of a line whose statement would cover
    `subject`, or why it would not. Its bytes are read before its signature is checked
    only to pass it over: nothing it says counts until the signature verifies."""
    try:
        data, signature = split_line(line)
        statement = parse_payload(data)
    except EvidenceFormatError as exc:
        return f"unparsable line: {exc}"
    why = why_not_covered(statement, subject)
    if why is not None:
        return f"{why} (its signature was not checked)"
    return data, signature, statement


def _signer(data: bytes, signature: bytes, checkers: Sequence[SignatureChecker]) -> Signer | str:
    """Who signed `data`, or why not: every signers file in force must accept the signature."""
    found = [checker.check(data, signature) for checker in checkers]
    refused = next((why for why in found if isinstance(why, str)), None)
    if refused is not None:
        return refused
    signer = found[0]
    assert not isinstance(signer, str)
    return signer


def _reasons(checked: Sequence[str], passed_over: Sequence[str]) -> tuple[str, ...]:
    """Why each statement did not count: every one checked, and so many of the others
    as fit beside them."""
    room = max(MAX_CHECKED - len(checked), 0)
    more = len(passed_over) - room
    tail = [f"{more} more statement(s) could not cover it either"] if more > 0 else []
    return (*checked, *passed_over[:room], *tail)


def _not_covered(command: tuple[str, ...], skipped: Sequence[str]) -> VerifierResult:
    return VerifierResult(
        command,
        VerifierOutcome.NOT_RUN,
        detail=NOT_COVERED,
        skipped_evidence=tuple(s for s in skipped if s),
    )
