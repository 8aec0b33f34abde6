"""What a server's pre-receive accepted while it enforced: the only old tips it trusts.

A protected ref's old tip counts as a protected revision on the server (its
events were judged when they were pushed) only if this server's failgate
accepted exactly that commit for that ref while it enforced there. A tip pushed
while nothing enforced on the ref (only warnings then), before failgate was
installed, or in the same push as the configuration that protects the ref, was
never judged: once the ref is enforced its events count as new, so an expiry
pushed there unreviewed is PENDING like any other.

One small file per ref under `<git-dir>/failgate/accepted/`, named by a digest
of the ref, holding the last tips accepted for it: a server's own state, which
a pusher can neither push nor fetch. Rewritten only under its lock file, so two
pushes to one ref at once lose nothing. A file that cannot be read names no tip
(fail closed: the old tip's events count as new).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence

from failgate_hooks.core.decide import enforces
from failgate_hooks.core.gates import PUSH, Context, Policy
from failgate_hooks.git.evidence import EVIDENCE_REF
from failgate_hooks.git.remotes import default_branch, ref_tips
from failgate_hooks.git.repo import GitRepo, local_folder
from failgate_hooks.ledger.config import Config
from failgate_hooks.ledger.union import config_at
from failgate_hooks.verify.localfiles import read_quietly, write_atomically
from failgate_hooks.verify.lockfile import LockUnavailable, locked

# Enough for pushes that race, and a force push back to a tip accepted a while ago.
KEPT_PER_REF = 16


class AcceptedTips:
    """`<git-dir>/failgate/accepted/`: the tips this server accepted per enforced ref.

    `shared` is the repository's core.sharedRepository: where each pusher is their
    own Unix user, the folder and files are shared as git shares its own."""

    def __init__(self, common_dir: str, shared: str | None = None) -> None:
        self.folder = os.path.join(local_folder(common_dir), "accepted")
        self._modes = shared_modes(shared)

    def holds(self, ref: str, commit: str) -> bool:
        """Whether `commit` is a tip this server accepted for `ref` while enforcing there."""
        return commit in self._tips(ref)

    def record(self, accepted: Iterable[tuple[str, str]]) -> str | None:
        """Remember each (ref, commit) accepted; None when stored, else why not (never
        raises: the push was decided, and a tip not remembered only fails closed later)."""
        try:
            self._make_folders()
            for ref, commit in accepted:
                path = self._path(ref)
                with locked(path + ".lock", f"the accepted tips of {ref}"):
                    tips = [t for t in self._tips(ref) if t != commit][-(KEPT_PER_REF - 1) :]
                    body = json.dumps({"ref": ref, "tips": [*tips, commit]}).encode() + b"\n"
                    write_atomically(path, body, durable=True)
                    if self._modes is not None:
                        os.chmod(path, self._modes[0])
        except (OSError, LockUnavailable) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            return (
                f"the tips accepted could not be remembered in {self.folder} ({why}): the next "
                "push to those refs judges their events as new; make that folder writable"
            )
        return None

    def _make_folders(self) -> None:
        for folder in (os.path.dirname(self.folder), self.folder):
            if not os.path.isdir(folder):
                os.makedirs(folder, exist_ok=True)
                if self._modes is not None:
                    os.chmod(folder, self._modes[1])

    def _tips(self, ref: str) -> list[str]:
        raw = read_quietly(self._path(ref))
        if raw is None:
            return []
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return []
        tips = data.get("tips") if isinstance(data, dict) and data.get("ref") == ref else None
        return [t for t in tips if isinstance(t, str)] if isinstance(tips, list) else []

    def _path(self, ref: str) -> str:
        # A ref name is bytes to git: one not UTF-8 arrives surrogate-escaped.
        digest = hashlib.sha256(ref.encode("utf-8", "surrogateescape")).hexdigest()
        return os.path.join(self.folder, digest[:32] + ".json")


def shared_modes(shared: str | None) -> tuple[int, int] | None:
    """(file mode, folder mode) for core.sharedRepository as git reads it; None: the umask."""
    value = (shared or "").strip().lower()
    if value in ("group", "true", "1", "all", "world", "everybody", "2"):
        other = 0o004 if value in ("all", "world", "everybody", "2") else 0
        return 0o660 | other, 0o2770 | other | (other >> 2)
    if len(value) == 4 and value.startswith("0") and all(c in "01234567" for c in value):
        mode = int(value, 8)
        return mode, 0o2000 | mode | ((mode & 0o444) >> 2)  # a folder is searched where read
    return None


def remember(repo: GitRepo, accepted: Sequence[tuple[str, str]]) -> str | None:
    """Record the (ref, commit) pairs accepted in `repo`, shared as the repository is;
    None when stored (or nothing to store), else why not."""
    if not accepted:
        return None
    shared = repo.config_get("core.sharedRepository")  # read only when something is written
    return AcceptedTips(repo.common_dir, shared).record(accepted)


def judged_tips(repo: GitRepo, accepted: AcceptedTips) -> list[str]:
    """Each ref's tip that this server accepted for that ref while enforcing there: a
    history it walked for append-only where a problem blocked (nothing before the tips
    an administrator vouched for), and so the only one a later walk may skip."""
    return sorted({commit for ref, commit in ref_tips(repo) if accepted.holds(ref, commit)})


def enforced_tips(repo: GitRepo) -> list[tuple[str, str]]:
    """Every ref on this server that its default branch's configuration enforces on, and
    the commit it names now: what an administrator vouches for after an upgrade."""
    default = default_branch(repo, "HEAD", "refs/heads/")
    config = config_at(repo, default[1], default[0]) if default else Config()
    if config.mode != "enforce":
        return []
    policy = Policy(
        protected_refs=(*config.protected_refs, *((default[0],) if default else ())),
        block_on=config.block_on,
    )
    return [
        (ref, commit)
        for ref, commit in ref_tips(repo)
        if ref != EVIDENCE_REF and enforces(Context(trigger=PUSH, ref=ref), policy)
    ]
