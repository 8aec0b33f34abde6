"""What one gate's run stands on, as evidence names it: verifier digest, content, environment.

The same inputs the pass cache keys a pass by (verify/run.py): the pinned
files as `resolve_pins` takes them from the revision the verification came
from, the content key or, with `inputs`, the input key, the entity and the
environment. Attesting and checking a statement both ask here, so a
statement made for a run is the one a check of that run looks for.
"""

from __future__ import annotations

from collections.abc import Iterable

from failgate_hooks.core.events import Verification
from failgate_hooks.core.evidence import Subject
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify.keys import content_key, input_key
from failgate_hooks.verify.localfiles import Pinned
from failgate_hooks.verify.pins import resolve_pins
from failgate_hooks.verify.trust import fingerprint

DIGEST_VERSION = "vd1"


def verifier_digest(argv: Iterable[str], pinned: Iterable[Pinned]) -> str:
    """argv and the sorted pinned (path, blob) pairs, versioned: trust's fingerprint of them."""
    return f"{DIGEST_VERSION}:{fingerprint(list(argv), pinned)}"


def gate_subject(
    repo: GitRepo,
    *,
    entity_key: str,
    verification: Verification,
    commit: str,
    pinned_from: str | None,
    ledger_dir: str,
    environment: str | None,
) -> Subject:
    """The subject of `verification` run for `entity_key` on `commit`.

    Raises PinError when a pinned file cannot be taken: then nothing stands for a run."""
    pins = resolve_pins(repo, pinned_from or commit, verification.files)
    if verification.inputs:
        content = input_key(repo, commit, verification.inputs)
    else:
        content = content_key(repo, commit, ledger_dir)
    digest = verifier_digest(verification.command, [(pin.path, pin.oid) for pin in pins])
    return Subject(content=content, environment=environment, verifier=digest, entity=entity_key)
