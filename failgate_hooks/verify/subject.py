"""What one gate's run stands on: its pinned files, its content key, the verifier digest.

Worked out here and nowhere else. The pass cache keys a pass by it
(verify/run.py), attesting signs it and a check of evidence looks for it
(`GateRun.subject`): the pinned files as `resolve_pins` takes them from the
revision the verification came from, the content key or, with `inputs`, the
input key, the entity and the environment. So a statement made for a run is the
one a check of that run looks for, and a cached pass is the run it stands for.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING

from failgate_hooks.core.events import Verification, Workdir
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify.keys import content_key, input_key
from failgate_hooks.verify.localfiles import Pinned
from failgate_hooks.verify.passcache import pass_key
from failgate_hooks.verify.pins import Pin, resolve_pins
from failgate_hooks.verify.trust import verifier_fingerprint

if TYPE_CHECKING:
    from failgate_hooks.core.evidence import Subject

# The verifier digest: trust's fingerprint, versioned; it names how the verifier ran, so
# it changes with the run's environment too. vd4: the fingerprint covers the pins' shape
# (fp3). vd5: the verifier runs in the fixed locale (process.FIXED_LOCALE), so a vd4
# statement may stand for a run in a pusher's locale. vd6: every statement is of a
# sandboxed run (attest requires it), and the sandbox now keeps the pinned files and its
# bytecode cache read-only, filters syscalls and keeps /proc read-only, so a vd5 one may
# stand for a run whose code under test rewrote its own verdict. An older statement, like
# a vd3 or vd2 one, stands for no run.
DIGEST_VERSION = "vd6"


def run_content_key(
    repo: GitRepo,
    commit: str,
    inputs: Sequence[str] | None,
    ledger_dir: str,
    *,
    whole: bool = False,
) -> str:
    """What of `commit` a verifier's verdict depends on: with `inputs`, the files they
    match (the input key); else, or when a link is among them, the tree the verifier
    is given (the content key): `whole` for one that may run in the work tree."""
    found = input_key(repo, commit, inputs) if inputs else None
    return found if found is not None else content_key(repo, commit, ledger_dir, whole=whole)


# A class, not a NamedTuple like the other values: its content key is a
# cached_property, computed only when asked for, which a tuple has nowhere to keep.
# Not a dataclass either: a check that holds a gate imports this, and dataclasses
# costs every such run at import.
class GateRun:
    """One gate's verifier run on `commit`: what its pass and its evidence stand on.

    The pins are taken when it is made; the content key when first asked for, so
    an answer that needs only the pins (trust) reads no more of the commit."""

    def __init__(
        self,
        repo: GitRepo,
        *,
        entity_key: str,
        verification: Verification,
        commit: str,
        pins: tuple[Pin, ...],
        ledger_dir: str,
        environment: str | None,
    ) -> None:
        self.repo = repo
        self.entity_key = entity_key
        self.verification = verification
        self.commit = commit
        self.pins = pins
        self.ledger_dir = ledger_dir
        self.environment = environment

    @property
    def command(self) -> tuple[str, ...]:
        return self.verification.command

    @cached_property
    def pinned(self) -> tuple[Pinned, ...]:
        """The pinned (path, blob) pairs: what trust, the pass key and the digest cover."""
        return tuple((pin.path, pin.oid) for pin in self.pins)

    @cached_property
    def fingerprint(self) -> str:
        """What trust names: the command, the pinned files and the run settings."""
        return verifier_fingerprint(self.verification, self.pinned)

    @cached_property
    def content(self) -> str:
        """The content key, or with `inputs` the input key, of `commit`."""
        verification = self.verification
        inplace = verification.workdir is Workdir.INPLACE  # the work tree holds the ledger
        return run_content_key(
            self.repo, self.commit, verification.inputs, self.ledger_dir, whole=inplace
        )

    def pass_key(self, isolation: str | None, *, env_pass_withheld: bool = False) -> str:
        """What a pass of this run is cached under, run in the sandbox `isolation` names,
        and `env_pass_withheld` when none of its env_pass variables reached it: a pass
        without them is another run's, keyed as the verifier with no env_pass."""
        fingerprint = self.fingerprint
        if env_pass_withheld and self.verification.env_pass:
            ran = self.verification._replace(env_pass=())
            fingerprint = verifier_fingerprint(ran, self.pinned)
        return pass_key(fingerprint, self.entity_key, self.environment, self.content, isolation)

    def subject(self) -> Subject:
        """What a signed statement about this run names."""
        from failgate_hooks.core.evidence import Subject  # only where someone attests

        return Subject(
            content=self.content,
            environment=self.environment,
            verifier=f"{DIGEST_VERSION}:{self.fingerprint}",
            entity=self.entity_key,
        )


def gate_run(
    repo: GitRepo,
    *,
    entity_key: str,
    verification: Verification,
    commit: str,
    pinned_from: str | None,
    ledger_dir: str,
    environment: str | None,
) -> GateRun:
    """`verification` run for `entity_key` on `commit`, its files pinned from
    `pinned_from` (the revision its event was read from; None: `commit`).

    Raises PinError when a pinned file cannot be taken: then nothing stands for a run."""
    pins = resolve_pins(repo, pinned_from or commit, verification.files)
    return GateRun(
        repo,
        entity_key=entity_key,
        verification=verification,
        commit=commit,
        pins=tuple(pins),
        ledger_dir=ledger_dir,
        environment=environment,
    )
