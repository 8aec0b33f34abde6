"""Historical replay: a gate proven on real history, from parent to repair.

The entity and its pinned verifier files come from one ledger revision, today's,
and run against every commit of REPAIR's first-parent chain back to PARENT, each
in a clean checkout with those files laid over it. The proof holds only when
the verifier gives a verdict at both ends: held at the parent, cleared at the
repair. What it finds is a core/replay.py report; render/replay.py shows it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import failgate_hooks
from failgate_hooks.app.runner import close_checkouts, verifier_sandbox
from failgate_hooks.core.errors import GitError, UsageError
from failgate_hooks.core.events import DEFAULT_TIMEOUT_S, Verification, is_valid_entity_key
from failgate_hooks.core.gates import VerifierOutcome, VerifierResult
from failgate_hooks.core.ids import short_id
from failgate_hooks.core.replay import ReplayReport, ReplayStep, StepState, failure_reasons
from failgate_hooks.core.resolve import Outcome
from failgate_hooks.core.sanitize import clip
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.union import Revision, config_at, read_union
from failgate_hooks.verify.checkout import Checkouts
from failgate_hooks.verify.execute import RunAs, run_in_checkout
from failgate_hooks.verify.pins import PinError, pins_read_only, resolve_pins, write_pins
from failgate_hooks.verify.shadowing import unpinned_files
from failgate_hooks.verify.worktree_loads import work_trees

# (position from 1, number of steps, full commit id), called before each step runs.
Progress = Callable[[int, int, str], None]


# --------------------------------------------------------------------------- the replay


def replay(
    repo: GitRepo,
    interval: str,
    entity_key: str,
    *,
    trigger: str = "push",
    ledger_rev: str = "HEAD",
    direct: bool = False,
    expect_files: Sequence[str] | None = None,
    default_timeout_s: float = DEFAULT_TIMEOUT_S,
    progress: Progress | None = None,
    sandbox_by: str | None = None,
) -> ReplayReport:
    """Run `entity_key`'s verifier, as `ledger_rev` holds it, on every commit of PARENT..REPAIR.

    Each step runs in the sandbox when `sandbox_by` (a flag) or the configuration at
    `ledger_rev` asks for one: history's code, perhaps a pulled branch's, is run."""
    # A UsageError (exit 2) for a bad interval, entity or verifier; a GitError when git
    # cannot answer. The ledger folder is the one configured at `ledger_rev`.
    if isinstance(expect_files, str):  # a str is a Sequence[str] too: one letter per path
        raise TypeError("expect_files is a list of paths, not one string")
    parent_rev, repair_rev = parse_interval(interval)
    parent = _resolve(repo, parent_rev, "PARENT")
    repair = _resolve(repo, repair_rev, "REPAIR")
    ledger_commit = _resolve(repo, ledger_rev, "--ledger-rev")
    # The reviewed configuration, as the entity is: never that of a commit replayed.
    config = config_at(repo, ledger_commit, ledger_rev)

    title, verification = _entity(
        repo, entity_key, trigger, ledger_rev, ledger_commit, config.ledger, config.max_event_bytes
    )
    try:
        # Today's reviewed verifier, not history's: the commits replayed predate it.
        pins = resolve_pins(repo, ledger_commit, verification.files)
    except PinError as exc:
        raise UsageError(f"{entity_key}: {exc}; the verifier cannot run") from None

    if direct:
        _check_direct(repo, parent, repair)
    chain = first_parent_chain(repo, parent, repair)
    facts = _commit_facts(repo, chain)
    timeout_s = verification.timeout_s or default_timeout_s
    # The repository files the command names and does not pin, as `failgate trust`
    # finds them: each step's commit gives its own, and one it lacks is no verdict.
    tracked = {e.path for c in (ledger_commit, repair) for e in repo.ls_tree(c) if e.type == "blob"}
    named = unpinned_files(repo, verification.command, pins, tracked)

    # Trust is not consulted: a person runs replay deliberately, on their own machine,
    # naming the entity; nothing arrives unasked as it does on a push. The pass cache
    # is neither read nor written either: every step of a proof runs.
    steps = []
    watched = work_trees(repo)
    sandbox = verifier_sandbox(repo, config, asked_by=sandbox_by)
    checkouts = Checkouts(repo)
    try:
        for position, commit in enumerate(chain, 1):
            if progress is not None:
                progress(position, len(chain), commit)
            missing = [path for path in named if not _has_file(repo, commit, path)]
            if missing:
                steps.append(_missing(commit, facts[commit][2], missing))
                continue
            # Always a clean checkout, whatever `workdir` says: history has no work tree.
            # The same one each step, moved by git: a step rewrites only what changed.
            result = run_in_checkout(
                checkouts,
                verification,
                RunAs(commit, entity_key),
                lambda root: write_pins(repo, root, pins),
                ledger_dir=config.ledger,
                timeout_s=timeout_s,
                watched=watched,
                sandbox=sandbox,
                read_only=pins_read_only(pins),
            )
            steps.append(_step(commit, facts[commit][2], result, timeout_s))
    finally:
        close_checkouts(checkouts)

    changed = changed_files(repo, parent, repair)
    expected = None if expect_files is None else tuple(expect_files)
    return ReplayReport(
        entity_key=entity_key,
        title=title,
        trigger=trigger,
        parent=parent,
        repair=repair,
        ledger_rev=ledger_commit,
        ledger_rev_label=ledger_rev,
        command=verification.command,
        pinned=tuple((pin.path, pin.oid) for pin in pins),
        timeout_s=timeout_s,
        steps=tuple(steps),
        changed_files=changed,
        expect_files=expected,
        author=facts[repair][0],
        date=facts[repair][1],
        reasons=failure_reasons(steps, changed, expected),
        failgate_version=failgate_hooks.__version__,
        isolation=None if sandbox is None else sandbox.isolation,
    )


def parse_interval(interval: str) -> tuple[str, str]:
    """PARENT and REPAIR from `PARENT..REPAIR`; UsageError for any other shape."""
    parent, sep, repair = interval.partition("..")
    if not sep or not parent or not repair or repair.startswith("."):
        raise UsageError(
            f"expected an interval PARENT..REPAIR, got {interval!r}",
            hint="two revisions joined by two dots, e.g. 4d1e0b2..9f2a1c4",
        )
    return parent, repair


def _resolve(repo: GitRepo, rev: str, what: str) -> str:
    """The full commit id of `rev`; an unknown name is a bad argument, not an integrity error."""
    try:
        return repo.resolve_commit(rev)
    except GitError as exc:
        raise UsageError(f"{what}: {exc.message}", hint=exc.hint) from None


def _entity(
    repo: GitRepo,
    entity_key: str,
    trigger: str,
    ledger_rev: str,
    ledger_commit: str,
    ledger_dir: str,
    max_event_bytes: int,
) -> tuple[str, Verification]:
    """The entity's title and verification as the ledger at `ledger_commit` resolves them."""
    where = f"the ledger at {ledger_rev} ({short_id(ledger_commit)})"
    if not is_valid_entity_key(entity_key):
        raise UsageError(
            f"{entity_key!r} is not an entity key (segments of [a-z0-9][a-z0-9_-]* joined by ':')"
        )
    revision = Revision(ledger_rev, ledger_commit, protected=True)
    ledger = read_union(repo, [revision], ledger_dir, max_event_bytes)
    if entity_key not in ledger.entity_keys:
        raise UsageError(
            f"no entity {entity_key} in {where}",
            hint="the event is read from --ledger-rev (default HEAD): commit it, or name its rev",
        )
    resolution = ledger.resolve(entity_key)
    if resolution.outcome is Outcome.INVALID:
        first = resolution.problems[0].describe() if resolution.problems else "invalid"
        raise UsageError(f"{entity_key} is invalid in {where}: {first}")
    if resolution.outcome is Outcome.CONFLICT:
        raise UsageError(
            f"{entity_key} is in conflict in {where} (heads {', '.join(resolution.heads)})",
            hint="settle it with an event that follows every head, then replay",
        )
    state = resolution.state
    if state.verification is None:
        raise UsageError(
            f"{entity_key} has no verifier in {where}: nothing to replay",
            hint="record one with `failgate record KEY --verify CMD --verify-file PATH`",
        )
    # Triggers are not scope: a gate that never checks this trigger proves nothing for it.
    triggers = state.triggers or ()
    if trigger not in triggers:
        raise UsageError(
            f'{entity_key} is not checked for "{trigger}" (its triggers: {", ".join(triggers)})',
            hint="pass --trigger with one of them",
        )
    return state.title or "", state.verification


def _check_direct(repo: GitRepo, parent: str, repair: str) -> None:
    """`--direct`: REPAIR's first parent must be PARENT itself."""
    parents = repo.commit_parents(repair)
    if not parents or parents[0] != parent:
        first = short_id(parents[0]) if parents else "none: it is a root commit"
        raise UsageError(
            f"--direct: the first parent of REPAIR {short_id(repair)} is {first}, "
            f"not PARENT {short_id(parent)}"
        )


def first_parent_chain(repo: GitRepo, parent: str, repair: str) -> list[str]:
    """REPAIR's first-parent chain back to PARENT, oldest first, both ends included."""
    if parent == repair:
        raise UsageError(f"PARENT and REPAIR are the same commit {short_id(parent)}")
    if not repo.is_ancestor(parent, repair):
        if repo.is_shallow():
            raise GitError(
                f"this is a shallow clone: cannot tell whether {short_id(parent)} "
                f"is an ancestor of {short_id(repair)}",
                hint="fetch full history (git fetch --unshallow)",
            )
        raise UsageError(
            f"PARENT {short_id(parent)} is not an ancestor of REPAIR {short_id(repair)}: "
            "it must be on REPAIR's first-parent chain"
        )
    # The commits that descend from PARENT and lead to REPAIR: one walk, not one per step.
    between = set(repo.run("rev-list", "--ancestry-path", f"{parent}..{repair}").split())
    chain = [repair]
    while True:
        parents = repo.commit_parents(chain[-1])
        first = parents[0] if parents else None
        if first == parent:
            chain.append(parent)
            return chain[::-1]
        if first is None or first not in between:
            raise UsageError(
                f"PARENT {short_id(parent)} is not on REPAIR {short_id(repair)}'s first-parent "
                f"chain: it came in through another parent of a merge at or before "
                f"{short_id(chain[-1])}",
                hint="replay from a commit on the first-parent chain (git log --first-parent)",
            )
        chain.append(first)


def changed_files(repo: GitRepo, parent: str, repair: str) -> tuple[str, ...]:
    """The paths that differ between PARENT's tree and REPAIR's, sorted."""
    # Plumbing, so a user's diff.relative or rename settings cannot change the answer;
    # a rename is both paths, because both changed.
    out = repo.run(
        "diff-tree", "-r", "-z", "--name-only", "--no-renames", parent, repair, strip=False
    )
    return tuple(sorted(path for path in out.split("\0") if path))


def _commit_facts(repo: GitRepo, commits: Sequence[str]) -> dict[str, tuple[str, str, str]]:
    """(author, author date, subject) of each commit, from one `git log`."""
    out = repo.run(
        "log",
        "--no-walk=unsorted",
        "--no-show-signature",
        "--stdin",
        "--format=%H%x00%an <%ae>%x00%aI%x00%s",
        stdin="\n".join(commits) + "\n",
    )
    facts: dict[str, tuple[str, str, str]] = {}
    # Only "\n" ends a record: an author or a subject may hold \r or NEL, at which
    # splitlines() would also break, losing the commit.
    for line in out.split("\n"):
        fields = line.split("\0")
        if len(fields) == 4:
            facts[fields[0]] = (fields[1], fields[2], fields[3])
    missing = [c for c in commits if c not in facts]
    if missing:
        raise GitError(f"git log gave nothing for commit {missing[0]}")
    return facts


def _has_file(repo: GitRepo, commit: str, path: str) -> bool:
    entry = repo.tree_entry(commit, path)
    return entry is not None and entry.type == "blob"


def _missing(commit: str, subject: str, missing: Sequence[str]) -> ReplayStep:
    """A step the verifier was not run at: a file its command names is not in the commit
    and not pinned, so a failure there would be the missing file's, not the gate's."""
    names = clip(", ".join(missing), 300)
    return ReplayStep(
        commit=commit,
        subject=subject,
        state=StepState.NO_VERDICT,
        exit_code=None,
        duration_s=0.0,
        detail=f"the command names {names}, which this commit lacks and the entity does not "
        f"pin: not run (pin it with --verify-file, or replay from a commit that has it)",
        output_tail="",
    )


def _step(commit: str, subject: str, result: VerifierResult, timeout_s: float) -> ReplayStep:
    """One step's state: a pass clears, a failure holds, anything else gives no verdict
    (exit 125, no run at all, a timeout, code loaded from the work tree)."""
    outcome = result.outcome
    if outcome is VerifierOutcome.PASSED:
        state, detail = StepState.CLEARED, ""
    elif outcome is VerifierOutcome.FAILED:
        state, detail = StepState.HELD, ""
    elif outcome is VerifierOutcome.TIMEOUT:
        state, detail = StepState.NO_VERDICT, f"timed out after {timeout_s:g} s"
    else:
        state, detail = StepState.NO_VERDICT, result.detail
    return ReplayStep(
        commit=commit,
        subject=subject,
        state=state,
        exit_code=None if outcome is VerifierOutcome.TIMEOUT else result.exit_code,
        duration_s=result.duration_s or 0.0,
        detail=detail,
        output_tail=result.output_tail,
    )
