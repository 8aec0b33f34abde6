"""Attesting: for each verifier that passed in this run, one signed statement in the evidence ref.

Only what ran here counts: the verifiers are run afresh (`no_cache`), never
read from the pass cache, which any earlier unsandboxed verifier on this
machine could have written, and never from evidence. They run in the
sandbox, which hides the folder of the key file and has its own PID
namespace, so pushed code cannot read the key from a file, the environment
or `/proc`; the verifier's allow-listed environment never holds the key's
variable. Statements are signed once every verifier has ended.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from failgate_hooks.app.evaluate import Request
from failgate_hooks.core.errors import UsageError
from failgate_hooks.core.events import Verification
from failgate_hooks.core.evidence import (
    RESULT_PASS,
    EvidenceFormatError,
    Statement,
    encode_line,
    evidence_path,
    payload,
)
from failgate_hooks.core.gates import Assessment, VerifierOutcome, VerifierResult
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.config import Config
from failgate_hooks.verify.localfiles import utc_now
from failgate_hooks.verify.signing import KEY_VARIABLE, SigningError, key_source, sign
from failgate_hooks.verify.subject import gate_run

SANDBOX_HINT = (
    'pass --sandbox, or set sandbox = "bwrap" in the protected configuration: the verifier '
    "must not be able to read the signing key"
)


class Attested(NamedTuple):
    """One statement made: the gate, the content it passed on, and the signing key."""

    entity_key: str
    content: str
    fingerprint: str


@dataclass
class Attester:
    """Collects the passes of one run, then signs a statement for each."""

    key_file: str | None
    key_text: str | None
    repository: str
    run_url: str | None
    _passes: list[tuple[Statement, str]] = field(default_factory=list)

    @classmethod
    def from_environment(
        cls,
        key_file: str | None,
        environ: Mapping[str, str],
        *,
        repository: str | None,
        run_url: str | None,
    ) -> Attester:
        """The key from `--key` or FAILGATE_EVIDENCE_KEY; the repository and run from CI."""
        file, text = key_source(key_file, environ)
        if file is None and text is None:
            raise UsageError(
                "attesting needs a signing key",
                hint=f"pass --key FILE, or set {KEY_VARIABLE} to the private key (a CI secret)",
            )
        if file is not None and not os.path.isfile(file):
            raise UsageError(f"--key {file}: no such file")
        if file is not None and os.path.dirname(os.path.realpath(file)) == "/":
            # The sandbox hides the key's folder, and / cannot be hidden.
            raise UsageError(
                f"--key {file}: a key in / cannot be hidden from the verifiers attest runs",
                hint="move the key into a folder of its own, readable only by this user",
            )
        return cls(
            key_file=None if file is None else os.path.abspath(file),
            key_text=text,
            repository=repository or environ.get("GITHUB_REPOSITORY", ""),
            run_url=run_url or _github_run_url(environ),
        )

    def hidden_folders(self) -> list[str]:
        """What the sandbox must hide besides its own list: the key file's folder."""
        if self.key_file is None:
            return []
        return [os.path.dirname(os.path.realpath(self.key_file))]

    def saw(
        self,
        repo: GitRepo,
        config: Config,
        request: Request,
        item: Assessment,
        verification: Verification,
        pinned_from: str,
        result: VerifierResult,
    ) -> None:
        """Note one verifier's result: a fresh pass becomes a statement to sign."""
        if result.outcome is not VerifierOutcome.PASSED or result.cached or result.evidence:
            return
        subject = gate_run(
            repo,
            entity_key=item.entity_key,
            verification=verification,
            commit=request.commit,
            pinned_from=pinned_from,
            ledger_dir=config.ledger,
            environment=request.context.environment,
        ).subject()
        statement = Statement(
            content=subject.content,
            environment=subject.environment,
            verifier=subject.verifier,
            entity=subject.entity,
            result=RESULT_PASS,
            time=utc_now(),
            repository=self.repository,
            ref=request.context.ref,
            run_url=self.run_url,
            sandboxed=True,
            commit=request.commit,
            tree=repo.commit_tree(request.commit),
        )
        self._passes.append((statement, evidence_path(subject.content)))

    def sign_all(self) -> tuple[dict[str, list[str]], list[Attested]]:
        """Every pass signed: the lines by evidence path, and what was attested."""
        lines: dict[str, list[str]] = {}
        made = []
        for statement, path in self._passes:
            try:
                data = payload(statement)
                signature, fingerprint = sign(data, key_file=self.key_file, key_text=self.key_text)
                line = encode_line(data, signature)
            except (SigningError, EvidenceFormatError) as exc:
                raise UsageError(f"cannot attest {statement.entity}: {exc}") from None
            lines.setdefault(path, []).append(line)
            made.append(Attested(statement.entity, statement.content, fingerprint))
        return lines, made


def _github_run_url(environ: Mapping[str, str]) -> str | None:
    """The Actions run's page, from the variables every run has."""
    server, repo, run = (
        environ.get(name) for name in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    )
    if server and repo and run:
        return f"{server}/{repo}/actions/runs/{run}"
    return None


def record_statements(repo: GitRepo, attester: Attester) -> tuple[str | None, list[Attested]]:
    """Sign every pass the run saw and add them to the local evidence ref: its commit then."""
    from failgate_hooks.app.evidence_store import append_lines

    lines, made = attester.sign_all()
    if not lines:
        return None, []
    return append_lines(repo, lines), made
