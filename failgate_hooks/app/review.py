"""Verifiers as people handle them: `trust`, `try`, and what `record` does with one."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from typing import NamedTuple

from failgate_hooks.app.evaluate import pinned_revision
from failgate_hooks.app.report import inspection_revisions
from failgate_hooks.core.authority import can_hold
from failgate_hooks.core.errors import UsageError
from failgate_hooks.core.events import Event, Verification
from failgate_hooks.core.sanitize import clean_line
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.config import Config
from failgate_hooks.ledger.union import read_union
from failgate_hooks.render.trust import (
    NAMES_NOTE,
    argv_lines,
    content_lines,
    diff_lines,
    margin,
    marked,
    settings_lines,
    shown_path,
)
from failgate_hooks.verify.pins import PinError, resolve_pins, write_regular_file
from failgate_hooks.verify.shadowing import (
    UnpinnedPath,
    absent_files,
    unpinned_files,
    unpinned_repo_files,
)
from failgate_hooks.verify.trust import (
    RunSettings,
    TrustedVerifier,
    TrustStore,
    run_settings,
    verifier_fingerprint,
)


class Candidate(NamedTuple):
    """One gate's verifier as this machine would run it, and how it stands with trust."""

    entity_key: str
    verification: Verification
    pinned: tuple[tuple[str, str], ...]
    fingerprint: str
    pinned_from: str  # the revision the pinned files come from, as people name it
    trusted: bool
    # the gate's approved version, when it is another one
    approved: TrustedVerifier | None
    # approved here once, then replaced: going back to it is a downgrade
    downgrade: bool
    # the copy a push runs; `check` of HEAD alone runs HEAD's when it differs
    push_copy: bool
    unpinned: tuple[UnpinnedPath, ...]
    problem: str | None = None

    @property
    def argv(self) -> tuple[str, ...]:
        return self.verification.command

    @property
    def unpinned_repo_files(self) -> tuple[str, ...]:
        return tuple(found.path for found in self.unpinned)

    @property
    def settings(self) -> RunSettings:
        return run_settings(self.verification)


def candidates(repo: GitRepo, config: Config) -> list[Candidate]:
    """Every resolved entity's verifier, pinned as a push of HEAD would pin it, and as
    `check` of HEAD alone would when that differs. A gate retired on the protected
    revisions has none: its verifier never runs, so trusting it would ask for nothing."""
    revisions, _ = inspection_revisions(repo)  # HEAD, and the remote default branch
    head = revisions[0].commit
    labels = {r.commit: r.label for r in reversed(revisions)}
    ledger = read_union(repo, revisions, config.ledger, config.max_event_bytes)
    store = TrustStore(repo.common_dir)
    tracked = {e.path for e in repo.ls_tree(head) if e.type == "blob"}
    protected_ids = ledger.protected_ids  # computed once: it walks the whole ledger
    out = []
    for key in ledger.entity_keys:
        resolution = ledger.resolve(key)
        verification = resolution.state.verification
        if verification is None or not can_hold(resolution, protected_ids):
            continue
        argv = verification.command
        approved = store.approved(key)
        seen: set[str] = set()
        pushed = pinned_revision(ledger, resolution, head)
        for rev in dict.fromkeys([pushed, head]):
            problem = None
            try:
                pins = resolve_pins(repo, rev, verification.files)
            except PinError as exc:
                pins, problem = [], str(exc)
            pinned = tuple((p.path, p.oid) for p in pins)
            fp = verifier_fingerprint(verification, pinned) if problem is None else ""
            if fp and fp in seen:
                continue
            seen.add(fp)
            unpinned = unpinned_repo_files(repo, argv, pins, tracked)
            out.append(
                Candidate(
                    entity_key=key,
                    verification=verification,
                    pinned=pinned,
                    fingerprint=fp,
                    pinned_from=labels.get(rev, rev[:12]),
                    trusted=bool(fp) and store.is_trusted(key, fp),
                    approved=approved if approved and approved.fingerprint != fp else None,
                    downgrade=bool(fp) and store.was_replaced(key, fp),
                    push_copy=rev == pushed,
                    unpinned=unpinned,
                    problem=problem,
                )
            )
    return out


def unpinned_at(repo: GitRepo, verification: Verification, commit: str) -> tuple[str, ...]:
    """The files of `commit` the verifier's command names but does not pin (as `trust`
    warns of them); pins `commit` lacks only leave its wrappers unread."""
    return _named_at(repo, verification, commit, unpinned_files)


def absent_at(repo: GitRepo, verification: Verification, commit: str) -> tuple[str, ...]:
    """The paths the verifier's command names, does not pin, and `commit` lacks: a run
    on `commit` fails for want of them, as a replay step without one gives no verdict."""
    return _named_at(repo, verification, commit, absent_files)


def _named_at(
    repo: GitRepo, verification: Verification, commit: str, which: Callable[..., list[str]]
) -> tuple[str, ...]:
    """`which` of the repository paths the command names, judged on `commit`'s tree, less
    the verifier's own files (a pin `commit` lacks is warned of as one)."""
    try:
        pins = resolve_pins(repo, commit, verification.files)
    except PinError:
        pins = []
    tracked = {e.path for e in repo.ls_tree(commit) if e.type == "blob"}
    listed = verification.files
    named = which(repo, verification.command, pins, tracked)
    return tuple(p for p in named if not any(p == f or p.startswith(f"{f}/") for f in listed))


def to_approve(found: list[Candidate]) -> list[Candidate]:
    """What `trust` approves: each gate's copy that a push runs, when it is untrusted.

    One version per gate is trusted, so HEAD's own copy, when it differs, is not
    approved beside it: each approval would revoke the other."""
    return [c for c in found if c.push_copy and not c.trusted and c.problem is None]


def describe(repo: GitRepo, candidate: Candidate) -> list[str]:
    """What a person reviews before approving: argv, each pinned file's content or its
    diff against the approved version, and what else changed. One field per line, each
    under a prefix of ours: nothing from the ledger or a commit starts a line."""
    state = "trusted" if candidate.trusted else "NOT TRUSTED"
    lines = [f"VERIFIER {clean_line(candidate.entity_key)}  [{state}]"]
    lines += ["     argv, one argument per line:", *argv_lines(candidate.argv)]
    approved = candidate.approved
    if approved is not None and approved.argv != candidate.argv:
        lines += ["     the approved version's argv:", *argv_lines(approved.argv)]
    lines += ["     run settings:", *settings_lines(candidate.settings)]
    if approved is not None and approved.settings != candidate.settings:
        lines.append("     the approved version's run settings:")
        lines += (
            settings_lines(approved.settings)
            if approved.settings is not None
            else ["       not recorded: approved by an earlier failgate, which did not cover them"]
        )
    if candidate.problem:
        lines.append(f"     cannot run: {clean_line(candidate.problem)}")
    elif candidate.pinned:
        lines.append(f"     pinned files, from {clean_line(candidate.pinned_from)}:")
        lines += _file_lines(repo, candidate)
    else:
        lines.append("     no pinned files")
    if approved is not None:
        lines.append(
            f"     approving it replaces the version approved by "
            f"{clean_line(approved.approved_by)} at {clean_line(approved.approved_at)}"
        )
    if candidate.downgrade:
        lines.append(
            "     DOWNGRADE: this version was approved on this machine before, then replaced "
            "by a newer one: compare it with the approved version above"
        )
    if not candidate.push_copy and not candidate.trusted:
        lines.append(
            "     not approved by `failgate trust`: this is HEAD's own copy, which only "
            "`failgate check` with no protected revision to read runs (no remote default "
            "branch, no --ledger-rev); one version per gate is trusted, and the one a push "
            "runs is listed first"
        )
    for found in candidate.unpinned:
        lines.append(_unpinned_warning(found))
    names = [*candidate.argv, *(approved.argv if approved else ()), *candidate.unpinned_repo_files]
    names += [path for path, _ in (*candidate.pinned, *(approved.pinned if approved else ()))]
    if any(marked(name) for name in names):
        lines.append(f"     {NAMES_NOTE}")
    return lines


def _unpinned_warning(found: UnpinnedPath) -> str:
    path, start = shown_path(found.path), margin("     ", found.path)
    if found.in_head is None:
        return (
            f"{start}WARNING the command names {path}, which is not pinned (and not in HEAD): "
            "a commit may add it with any content"
        )
    return (
        f"{start}WARNING {path} is a repository {found.in_head} the command names but does not "
        "pin: its content comes from the commit being checked"
    )


def _file_lines(repo: GitRepo, candidate: Candidate) -> list[str]:
    """Each pinned file: its content when new, its diff when changed, a line when not."""
    approved = candidate.approved
    before = dict(approved.pinned) if approved is not None else {}
    blobs = repo.read_blobs(
        [oid for _, oid in candidate.pinned] + list(before.values()), missing_ok=True
    )
    lines = []
    for path, oid in candidate.pinned:
        name = f"{margin('     ', path)}{shown_path(path)} (blob {oid[:12]})"
        was = before.get(path)
        if candidate.trusted or was == oid:
            lines.append(name if candidate.trusted else f"{name}: unchanged")
        elif approved is None:
            lines += [f"{name}:", *content_lines(blobs[oid], oid)]
        elif was is None:
            lines += [f"{name}: new, not pinned by the approved version:"]
            lines += content_lines(blobs[oid], oid)
        elif was in blobs:
            lines += [f"{name}: changed since the approved version (blob {was[:12]}):"]
            lines += diff_lines(blobs[was], blobs[oid], was, oid)
        else:
            lines += [
                f"{name}: changed since the approved version (blob {was[:12]}, which this "
                "repository lacks), so in full:",
                *content_lines(blobs[oid], oid),
            ]
    pinned = {path for path, _ in candidate.pinned}
    for path in before:
        if path not in pinned:
            lines.append(
                f"{margin('     ', path)}{shown_path(path)}: pinned by the approved version, "
                "not by this one"
            )
    return lines


def approve(repo: GitRepo, chosen: list[Candidate], who: str) -> None:
    """Approve each chosen version for its gate, revoking the gate's version before."""
    TrustStore(repo.common_dir).approve(
        TrustedVerifier.new(c.entity_key, c.verification, c.pinned, who) for c in chosen
    )


def trust_recorded(repo: GitRepo, event: Event, who: str) -> str | None:
    """`record` trusts what it writes: argv plus the pinned files as they will be committed."""
    verification = event.verification
    root = repo.working_dir
    if verification is None or root is None:
        return None
    found = work_tree_files(repo, verification.files)
    if isinstance(found, str):
        return f"{found}: the verifier is not trusted"
    pinned = [(path, repo.run("hash-object", "--", path)) for path in found]
    TrustStore(repo.common_dir).approve(
        [TrustedVerifier.new(event.entity_key, verification, pinned, who)]
    )
    return None


def work_tree_files(repo: GitRepo, files: tuple[str, ...]) -> list[str] | str:
    """The work-tree files that `files` names, a folder's as git would commit them;
    or why one of them is not a regular file."""
    root = repo.working_dir or "."
    out: list[str] = []
    for path in files:
        full = os.path.join(root, *path.split("/"))
        if os.path.isdir(full) and not os.path.islink(full):
            listed = repo.run(
                "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                f":(literal){path}", strip=False,
            )  # fmt: skip
            out += sorted(set(filter(None, listed.split("\0"))))
        else:
            out.append(path)
    for path in out:
        full = os.path.join(root, *path.split("/"))
        if os.path.islink(full) or not os.path.isfile(full):
            return f"pinned file {path} is not a regular file here"
    return list(dict.fromkeys(out))


# Paths the probe names when it cannot run; the rest are counted.
_NAMED = 3


class Probe(NamedTuple):
    """What `record`'s probe found, in words; `expected` when it is what an observed failure
    should give (the verifier fails on the commit that has the failure)."""

    expected: bool
    text: str


def probe(repo: GitRepo, config: Config, event: Event, *, trusted: bool = True) -> Probe:
    """For an observed event: run its verifier once on HEAD with the working-tree pins.

    It should fail there: one that passes guards nothing, one that gives no verdict or
    cannot start holds the gate for the wrong reason. Never cached, never a pass for
    any commit. `trusted` False (record could not trust what it wrote): not run."""
    from failgate_hooks.app.runner import close_checkouts, verifier_sandbox
    from failgate_hooks.core.decide import verifier_reason
    from failgate_hooks.core.gates import VerifierOutcome
    from failgate_hooks.verify.checkout import Checkouts
    from failgate_hooks.verify.execute import RunAs, run_in_checkout
    from failgate_hooks.verify.pins import read_only_paths
    from failgate_hooks.verify.worktree_loads import work_trees

    verification = event.verification
    root = repo.working_dir
    head = repo.try_resolve_commit("HEAD")
    if verification is None or root is None or head is None:
        why = "the repository is bare" if root is None else "there is no commit yet"
        return Probe(False, f"not probed: {why}, so nothing says the verifier fails on HEAD")
    if not trusted:
        return Probe(False, "not probed: the verifier is not trusted here (failgate trust)")
    found = work_tree_files(repo, verification.files)
    if isinstance(found, str):
        return Probe(False, f"not probed: {found}")
    absent = absent_at(repo, verification, head)
    if absent:
        return Probe(False, _absent_text(root, head, absent))

    def lay_over(checkout: str) -> None:
        for path in found:
            data, executable = _work_tree_file(root, path)
            write_regular_file(checkout, path, data, executable)

    checkouts = Checkouts(repo)
    try:
        result = run_in_checkout(
            checkouts,
            verification,
            RunAs(head, event.entity_key),
            lay_over,
            ledger_dir=config.ledger,
            timeout_s=verification.timeout_s or config.default_timeout_s,
            watched=work_trees(repo),
            # record's config: the probe runs the commit's code as a gate would
            sandbox=verifier_sandbox(repo, config),
            read_only=read_only_paths(
                found, [path for path in verification.files if path not in found]
            ),
        )
    finally:
        close_checkouts(checkouts)
    on_head = f"on HEAD ({head[:12]}), which this event says has the failure"
    last = next((ln for ln in reversed(result.output_tail.splitlines()) if ln.strip()), "")
    said = f" (its last line: {clean_line(last)})" if last else ""
    if result.outcome is VerifierOutcome.FAILED:
        return Probe(True, f"the verifier fails {on_head}, as expected{said}: the gate holds")
    if result.outcome is VerifierOutcome.PASSED:
        return Probe(False, f"the verifier already passes {on_head}: as written it guards nothing")
    if result.outcome is VerifierOutcome.NO_VERDICT:
        return Probe(
            False,
            f"the verifier gives no verdict {on_head}{said}: it holds the gate without "
            "judging it; make it exit non-zero for the failure",
        )
    # cannot start, or timed out: said as a gate would say it
    return Probe(False, f"{verifier_reason(result)} {on_head}: it holds the gate without judging")


def _absent_text(root: str, head: str, absent: Sequence[str]) -> str:
    """No verdict, as a replay step gives none: the verifier would fail there for want of
    a file the command names, not for the failure; each said with where it is instead."""
    named = [f"{clean_line(path, 200)} ({_where(root, path)})" for path in absent[:_NAMED]]
    more = f" and {len(absent) - _NAMED} more" if len(absent) > _NAMED else ""
    return (
        f"not probed, no verdict: the command names {', '.join(named)}{more}, which HEAD "
        f"({head[:12]}) does not hold and the entity does not pin: run there, the verifier "
        "would fail for want of it, not for the failure"
    )


def _where(root: str, path: str) -> str:
    """Where a path HEAD lacks is, and what to do: commit it, or correct the command."""
    if os.path.lexists(os.path.join(root, *path.split("/"))):
        return "in the work tree, not committed: commit it, then record again"
    return "not in the work tree either: a typo in --verify?"


def _work_tree_file(root: str, path: str) -> tuple[bytes, bool]:
    """A work-tree file's bytes, and whether git would record it as executable."""
    full = os.path.join(root, *path.split("/"))
    with open(full, "rb") as handle:
        return handle.read(), bool(os.fstat(handle.fileno()).st_mode & stat.S_IXUSR)


def entity_verification(repo: GitRepo, config: Config, key: str) -> Verification:
    """The resolved verifier of KEY at HEAD, for `failgate try`."""
    revisions, _ = inspection_revisions(repo)  # HEAD, and the remote default branch
    ledger = read_union(repo, revisions, config.ledger, config.max_event_bytes)
    if key not in ledger.entity_keys:
        raise UsageError(f"no entity {key!r} in the ledger at HEAD")
    verification = ledger.resolve(key).state.verification
    if verification is None:
        raise UsageError(f"{key} has no verifier: record one with --verify")
    return verification
