"""Historical replay: a gate proven on real history, from parent to repair.

The entity and its pinned verifier files come from one ledger revision, today's,
and run against every commit of REPAIR's first-parent chain back to PARENT, each
in a clean checkout with those files laid over it. The proof holds only when
the verifier gives a verdict at both ends: held at the parent, cleared at the
repair. What it finds is a core/replay.py report; render/replay.py shows it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import failgate_hooks
from failgate_hooks.app.runner import close_checkouts
from failgate_hooks.core.errors import GitError, UsageError
from failgate_hooks.core.events import DEFAULT_TIMEOUT_S, Verification, is_valid_entity_key
from failgate_hooks.core.ids import short_id
from failgate_hooks.core.replay import ReplayReport, ReplayStep, StepState, failure_reasons
from failgate_hooks.core.resolve import Outcome
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.union import Revision, config_at, read_union
from failgate_hooks.verify.checkout import Checkouts, verifier_git_env
from failgate_hooks.verify.execute import NO_VERDICT_DETAIL, NO_VERDICT_EXIT
from failgate_hooks.verify.pins import Pin, PinError, resolve_pins, write_pins
from failgate_hooks.verify.process import CommandRun, run_command, verifier_env
from failgate_hooks.verify.worktree_loads import LoadWatch, work_trees

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
    ledger_dir: str | None = None,
) -> ReplayReport:
    """Run `entity_key`'s verifier, as `ledger_rev` holds it, on every commit of PARENT..REPAIR."""
    # A UsageError (exit 2) for a bad interval, entity or verifier; a GitError when git
    # cannot answer. With no `ledger_dir`, the one configured at `ledger_rev` is read.
    if isinstance(expect_files, str):  # a str is a Sequence[str] too: one letter per path
        raise TypeError("expect_files is a list of paths, not one string")
    parent_rev, repair_rev = parse_interval(interval)
    parent = _resolve(repo, parent_rev, "PARENT")
    repair = _resolve(repo, repair_rev, "REPAIR")
    ledger_commit = _resolve(repo, ledger_rev, "--ledger-rev")
    if ledger_dir is None:
        ledger_dir = config_at(repo, ledger_commit, ledger_rev).ledger

    title, verification = _entity(repo, entity_key, trigger, ledger_rev, ledger_commit, ledger_dir)
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

    # Trust is not consulted: a person runs replay deliberately, on their own machine,
    # naming the entity; nothing arrives unasked as it does on a push. The pass cache
    # is neither read nor written either: every step of a proof runs.
    steps = []
    watched = work_trees(repo)
    checkouts = Checkouts(repo)
    try:
        for position, commit in enumerate(chain, 1):
            if progress is not None:
                progress(position, len(chain), commit)
            run, leak = _run_step(
                repo,
                checkouts,
                commit,
                pins,
                verification,
                entity_key=entity_key,
                trigger=trigger,
                timeout_s=timeout_s,
                watched=watched,
            )
            steps.append(_step(commit, facts[commit][2], run, timeout_s, leak))
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
) -> tuple[str, Verification]:
    """The entity's title and verification as the ledger at `ledger_commit` resolves them."""
    where = f"the ledger at {ledger_rev} ({short_id(ledger_commit)})"
    if not is_valid_entity_key(entity_key):
        raise UsageError(
            f"{entity_key!r} is not an entity key (segments of [a-z0-9][a-z0-9_-]* joined by ':')"
        )
    ledger = read_union(repo, [Revision(ledger_rev, ledger_commit, protected=True)], ledger_dir)
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


def _run_step(
    repo: GitRepo,
    checkouts: Checkouts,
    commit: str,
    pins: Sequence[Pin],
    verification: Verification,
    *,
    entity_key: str,
    trigger: str,
    timeout_s: float,
    watched: Sequence[str],
) -> tuple[CommandRun, str | None]:
    """The verifier in a clean checkout of `commit`, the pinned files laid over it;
    and why it gives no verdict when it loaded code from a `watched` work tree."""
    env, _refused = verifier_env(
        os.environ,
        env_pass=verification.env_pass,
        commit=commit,
        entity_key=entity_key,
        trigger=trigger,
        ref=None,
        environment=None,
    )
    # Always a clean checkout, whatever `workdir` says: history has no work tree. The
    # same one each step, moved by git: a step rewrites only what the commit changed.
    try:
        with checkouts.checkout(commit) as root, LoadWatch(watched, checkout=root) as watch:
            write_pins(repo, root, pins)
            env = watch.environ({**env, **verifier_git_env(root)})
            run = run_command(verification.command, cwd=root, env=env, timeout_s=timeout_s)
            return run, watch.leak(commit)
    except OSError as exc:  # a full or read-only cache folder
        return CommandRun(None, 0.0, start_error=f"cannot prepare a clean checkout: {exc}"), None


def _step(
    commit: str, subject: str, run: CommandRun, timeout_s: float, leak: str | None
) -> ReplayStep:
    """One step's state: 0 clears, 125 or no run at all gives no verdict, the rest holds;
    a run that loaded code from the work tree gives no verdict, whatever it exited with."""
    if run.start_error is not None:
        state, detail = StepState.NO_VERDICT, run.start_error
    elif leak is not None:
        state, detail = StepState.NO_VERDICT, leak
    elif run.timed_out:
        state, detail = StepState.NO_VERDICT, f"timed out after {timeout_s:g} s"
    elif run.exit_code == 0:
        state, detail = StepState.CLEARED, ""
    elif run.exit_code == NO_VERDICT_EXIT:
        state, detail = StepState.NO_VERDICT, NO_VERDICT_DETAIL
    else:
        state, detail = StepState.HELD, ""
    return ReplayStep(
        commit=commit,
        subject=subject,
        state=state,
        exit_code=None if run.timed_out else run.exit_code,
        duration_s=run.duration_s,
        detail=detail,
        output_tail=run.output_tail,
    )
