"""Verifiers as people handle them: `trust`, `try`, and what `record` does with one."""

from __future__ import annotations

import os
import shlex
import stat
from dataclasses import dataclass

from failgate_hooks.core.errors import UsageError
from failgate_hooks.core.events import Event, Verification
from failgate_hooks.git.repo import GitRepo, default_remote, remote_default_branch
from failgate_hooks.ledger.config import Config
from failgate_hooks.ledger.union import Ledger, Revision, read_union
from failgate_hooks.verify.pins import PinError, resolve_pins, write_regular_file
from failgate_hooks.verify.trust import TrustedVerifier, TrustStore, fingerprint


@dataclass(frozen=True)
class Candidate:
    """One entity's verifier as this machine would run it, and whether it is trusted."""

    entity_key: str
    argv: tuple[str, ...]
    pinned: tuple[tuple[str, str], ...]
    fingerprint: str
    trusted: bool
    previous: TrustedVerifier | None
    unpinned_repo_files: tuple[str, ...]
    problem: str | None = None


def inspection_ledger(repo: GitRepo, config: Config) -> tuple[Ledger, str]:
    """HEAD's ledger united with the remote default branch's (a protected revision)."""
    head = repo.resolve_commit("HEAD")
    revisions = [Revision("HEAD", head)]
    remote = default_remote(repo)
    found = remote_default_branch(repo, remote) if remote else None
    if found is not None:
        revisions.append(Revision(found[0], found[1], protected=True))
    return read_union(repo, revisions, config.ledger), head


def candidates(repo: GitRepo, config: Config) -> list[Candidate]:
    """Every resolved entity's verifier, pinned as a push of HEAD would pin it."""
    from failgate_hooks.app.evaluate import pinned_revision

    ledger, head = inspection_ledger(repo, config)
    store = TrustStore(repo.common_dir)
    tracked = {e.path for e in repo.ls_tree(head) if e.type == "blob"}
    out = []
    for key in ledger.entity_keys:
        resolution = ledger.resolve(key)
        verification = resolution.state.verification
        if verification is None:
            continue
        argv = verification.command
        unpinned = tuple(a for a in argv[1:] if a in tracked and a not in verification.files)
        # what a push would run (the protected copy) and what `check` of HEAD runs
        seen: set[str] = set()
        for rev in dict.fromkeys([pinned_revision(ledger, resolution, head), head]):
            try:
                pins = resolve_pins(repo, rev, verification.files)
            except PinError as exc:
                out.append(Candidate(key, argv, (), "", False, None, unpinned, str(exc)))
                continue
            pinned = tuple((p.path, p.oid) for p in pins)
            fp = fingerprint(argv, pinned)
            if fp not in seen:
                seen.add(fp)
                trusted = store.is_trusted(fp)
                previous = store.previous_for(key)
                out.append(Candidate(key, argv, pinned, fp, trusted, previous, unpinned))
    return out


def describe(candidate: Candidate) -> list[str]:
    """What a person reviews before approving: argv, pinned files, what changed."""
    lines = [f"VERIFIER {candidate.entity_key}", f"     command {shlex.join(candidate.argv)}"]
    for path, oid in candidate.pinned:
        lines.append(f"     pinned  {path} @ blob {oid[:12]}")
    if candidate.problem:
        lines.append(f"     cannot run: {candidate.problem}")
    previous = candidate.previous
    if previous is not None and previous.fingerprint != candidate.fingerprint:
        if previous.argv != candidate.argv:
            lines.append(f"     was     {shlex.join(previous.argv)}")
        before = dict(previous.pinned)
        for path, oid in candidate.pinned:
            was = before.get(path)
            if was is None:
                lines.append(f"     new     {path} (not pinned before)")
            elif was != oid:
                lines.append(f"     changed {path}: see git diff {was[:12]} {oid[:12]}")
        lines.append(f"     trusted before by {previous.approved_by} at {previous.approved_at}")
    for path in candidate.unpinned_repo_files:
        lines.append(
            f"     WARNING {path} is a repository file the command names but does not pin: "
            "its content comes from the commit being checked"
        )
    return lines


def approve(repo: GitRepo, chosen: list[Candidate], who: str) -> None:
    TrustStore(repo.common_dir).approve(
        TrustedVerifier.new(c.entity_key, c.argv, c.pinned, who) for c in chosen
    )


def trust_recorded(repo: GitRepo, event: Event, who: str) -> str | None:
    """`record` trusts what it writes: argv plus the pinned files as they will be committed."""
    verification = event.verification
    root = repo.working_dir
    if verification is None or root is None:
        return None
    pinned = []
    for path in verification.files:
        full = os.path.join(root, *path.split("/"))
        if os.path.islink(full) or not os.path.isfile(full):
            return f"pinned file {path} is not a regular file here: the verifier is not trusted"
        pinned.append((path, repo.run("hash-object", "--", path)))
    TrustStore(repo.common_dir).approve(
        [TrustedVerifier.new(event.entity_key, verification.command, pinned, who)]
    )
    return None


def probe(repo: GitRepo, config: Config, event: Event) -> str | None:
    """For an observed event: run its verifier once on HEAD with the working-tree pins.

    A verifier that already passes on the commit that has the failure guards
    nothing; say so. Never cached, never a pass for any commit.
    """
    from failgate_hooks.verify.checkout import Checkouts, verifier_git_env
    from failgate_hooks.verify.process import run_command, verifier_env

    verification = event.verification
    root = repo.working_dir
    head = repo.try_resolve_commit("HEAD")
    if verification is None or root is None or head is None:
        return None
    env, _ = verifier_env(
        os.environ,
        env_pass=verification.env_pass,
        commit=head,
        entity_key=event.entity_key,
        trigger="probe",
        ref=None,
        environment=None,
    )
    for path in verification.files:
        full = os.path.join(root, *path.split("/"))
        if os.path.islink(full) or not os.path.isfile(full):
            return f"verifier not probed: pinned file {path} is not a regular file in the work tree"
    with Checkouts(repo) as checkouts, checkouts.checkout(head) as checkout:
        for path in verification.files:
            data, executable = _work_tree_file(root, path)
            write_regular_file(checkout, path, data, executable)
        run = run_command(
            verification.command,
            cwd=checkout,
            env={**env, **verifier_git_env(checkout)},
            timeout_s=verification.timeout_s or config.default_timeout_s,
        )
    if run.exit_code == 0:
        return (
            f"the verifier already passes on HEAD ({head[:12]}), which this event says has "
            "the failure: as written it guards nothing"
        )
    return None


def _work_tree_file(root: str, path: str) -> tuple[bytes, bool]:
    """A work-tree file's bytes, and whether git would record it as executable."""
    full = os.path.join(root, *path.split("/"))
    with open(full, "rb") as handle:
        return handle.read(), bool(os.fstat(handle.fileno()).st_mode & stat.S_IXUSR)


def entity_verification(repo: GitRepo, config: Config, key: str) -> Verification:
    """The resolved verifier of KEY at HEAD, for `failgate try`."""
    ledger, _ = inspection_ledger(repo, config)
    if key not in ledger.entity_keys:
        raise UsageError(f"no entity {key!r} in the ledger at HEAD")
    verification = ledger.resolve(key).state.verification
    if verification is None:
        raise UsageError(f"{key} has no verifier: record one with --verify")
    return verification
