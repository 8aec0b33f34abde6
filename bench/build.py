"""The repositories the benchmark (and tests/test_performance.py) are set in.

Everything is deterministic: ids come from a seeded generator, times are
fixed, and commits are written by one `git fast-import` stream with fixed
author and committer dates, so two runs build the same commit ids. Event files
are written with `events.event_to_toml`, exactly as `failgate record` writes
them, without starting one process per event.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import random
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from failgate_hooks.core.events import (
    AppliesTo,
    Event,
    Status,
    Verification,
    entity_folder,
    event_to_toml,
)

LEDGER = "ledger"
LIVE_ENTITY = "bench:live:smoke"
CHECK_PATH = "checks/ok.py"
CHECK_SCRIPT = '"""The live gate\'s verifier: it always passes."""\n'
EPOCH = 1_767_225_600  # 2026-01-01T00:00:00Z: every commit date counts from here

# A developer's own git config (hooks, signing, templates) never leaks in.
ISOLATED_GIT = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.org",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.org",
    "GIT_AUTHOR_DATE": f"{EPOCH} +0000",
    "GIT_COMMITTER_DATE": f"{EPOCH} +0000",
    "GIT_TERMINAL_PROMPT": "0",
}


def isolated_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """`base` (default: this process's) with git isolated and no inherited git variables."""
    env = dict(os.environ if base is None else base)
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "FAILGATE_TRUST_LEDGER"):
        env.pop(name, None)
    env.update(ISOLATED_GIT)
    return env


def git(
    cwd: Path | str, *args: str, env: Mapping[str, str] | None = None, stdin: bytes = b""
) -> str:
    """`git ARGS` in `cwd`; its stripped output, or an error that says what failed."""
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env=dict(env) if env is not None else isolated_env(),
        check=False,
    )
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip()
        raise RuntimeError(f"git {' '.join(args[:3])} failed in {cwd}: {message}")
    return proc.stdout.decode("utf-8", "replace").strip()


# ---------------------------------------------------------------------------- commits


@dataclass
class Commit:
    """One commit to write: files added or replaced (bytes), and a message."""

    message: str
    files: Mapping[str, bytes]
    executable: frozenset[str] = frozenset()


def fast_import(
    repo: Path, branch: str, commits: Iterable[Commit], *, first_date: int = EPOCH
) -> None:
    """Append `commits` to `branch` through one `git fast-import` stream (each on the last)."""
    parts: list[bytes] = []
    has_parent = bool(git(repo, "for-each-ref", f"refs/heads/{branch}"))
    if has_parent:
        parts.append(
            f"reset refs/heads/{branch}\nfrom {git(repo, 'rev-parse', branch)}\n\n".encode()
        )
    for number, commit in enumerate(commits):
        date = first_date + 60 * number
        message = commit.message.encode()
        head = (
            f"commit refs/heads/{branch}\n"
            f"author Bench <bench@example.org> {date} +0000\n"
            f"committer Bench <bench@example.org> {date} +0000\n"
            f"data {len(message)}\n"
        ).encode()
        parts += [head, message, b"\n"]
        for path in sorted(commit.files):
            data = commit.files[path]
            mode = "100755" if path in commit.executable else "100644"
            parts.append(f"M {mode} inline {path}\ndata {len(data)}\n".encode())
            parts += [data, b"\n"]
        parts.append(b"\n")
    git(repo, "fast-import", "--quiet", "--done", stdin=b"".join(parts) + b"done\n")


def init_repo(path: Path, *, bare: bool = False) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main", *(["--bare"] if bare else []))
    return path


# ---------------------------------------------------------------------------- the ledger

# Background entities that are not retired must not gate a push to main: each
# is out of scope in one of the ways the gate decision allows, so that the push exercises
# applicability, not only the status fold. One in PATHS_EVERY is scoped by `paths`,
# which asks for the pushed commit's whole tree: every kind appears in a small
# ledger too, so that it asks git the same questions as a big one.
_SCOPES: tuple[tuple[tuple[str, ...], AppliesTo | None], ...] = (
    (("push",), AppliesTo(paths=("services/retired-*/**",))),
    (("deploy",), None),
    (("push",), AppliesTo(refs=("refs/heads/release/*",))),
    (("release", "deploy"), None),
)
PATHS_EVERY = 40


def _scope(number: int) -> tuple[tuple[str, ...], AppliesTo | None]:
    if number % PATHS_EVERY == 0:
        return _SCOPES[0]
    return _SCOPES[1 + number % (len(_SCOPES) - 1)]


def _event_id(rng: random.Random, moment: dt.datetime) -> str:
    return f"{moment:%Y%m%dT%H%M%SZ}-{rng.getrandbits(32):08x}"


def background_events(count: int, *, seed: int = 11) -> list[Event]:
    """`count` events of entities two events long; every other entity is retired (expired)."""
    rng = random.Random(seed)
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    events: list[Event] = []
    number = 0
    while len(events) < count:
        key = f"svc:area-{number % 40:02d}:risk-{number:05d}"
        moment = start + dt.timedelta(minutes=number)
        triggers, scope = _scope(number)
        first = Event(
            id=_event_id(rng, moment),
            entity_key=key,
            status=Status.OBSERVED,
            effective_at=moment,
            title=f"Risk {number}: a failure that burned once",
            triggers=triggers,
            recorded_by="Bench <bench@example.org>",
            note=f"observed while shipping change {number}; see the post-mortem",
            applies_to=scope,
        )
        events.append(first)
        if len(events) < count:
            later = moment + dt.timedelta(days=1)
            retired = (number // 4) % 2 == 0  # alternate blocks of four: about half
            events.append(
                Event(
                    id=_event_id(rng, later),
                    entity_key=key,
                    status=Status.EXPIRED if retired else Status.DIAGNOSED,
                    effective_at=later,
                    follows=(first.id,),
                    recorded_by="Bench <bench@example.org>",
                    note="the code this risk lived in was removed" if retired else "cause found",
                )
            )
        number += 1
    return events


def live_gate_event(inputs: tuple[str, ...] | None = None, key: str = LIVE_ENTITY) -> Event:
    """An open gate on every push whose pinned verifier passes."""
    moment = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
    suffix = hashlib.sha256(key.encode()).hexdigest()[:8]
    return Event(
        id=f"{moment:%Y%m%dT%H%M%SZ}-{suffix}",
        entity_key=key,
        status=Status.OBSERVED,
        effective_at=moment,
        title=f"{key} must pass before a push",
        triggers=("push",),
        recorded_by="Bench <bench@example.org>",
        verification=Verification(
            command=("python3", CHECK_PATH), files=(CHECK_PATH,), timeout_s=120, inputs=inputs
        ),
    )


def event_path(event: Event) -> str:
    return f"{LEDGER}/{entity_folder(event.entity_key)}/{event.id}.toml"


def event_files(events: Iterable[Event]) -> dict[str, bytes]:
    return {event_path(e): event_to_toml(e) for e in events}


# ---------------------------------------------------------------------------- worlds


@dataclass
class World:
    """A work repository whose main is one commit ahead of its bare remote's main
    (or, without a remote, of the commit that holds the ledger)."""

    work: Path
    remote: Path | None
    base: str  # the remote's main: what the pushed commit builds on
    tip: str  # the work repository's main: what is pushed and checked
    events: int


# `check` reads the remote's main as a protected revision, as a team would set it up:
# the events already there are not relaxations to list on every run.
CONFIG = b'[tool.failgate]\nledger_refs = ["refs/remotes/origin/main"]\n'
NO_CONFIG = b'[project]\nname = "no-remote"\n'  # no remote: nothing for ledger_refs to name


def _source_files(config: bytes = CONFIG) -> dict[str, bytes]:
    files = {
        "README.md": b"A project whose ledger remembers what burned.\n",
        "pyproject.toml": config,
        CHECK_PATH: CHECK_SCRIPT.encode(),
    }
    for i in range(20):
        files[f"src/module_{i:02d}.py"] = f"VALUE = {i}\n".encode()
    return files


def ledger_world(
    root: Path, events: int, *, per_commit: int = 1000, upstream: bool = True
) -> World:
    """A repository with `events` ledger events (the live gate among them when events > 0).

    With `upstream`, a bare remote holds them and `check` reads it as protected
    (ledger_refs); without, there is no remote and nothing is protected."""
    work = init_repo(root / "work")
    remote = init_repo(root / "remote.git", bare=True) if upstream else None
    ledger = ([*background_events(events - 1), live_gate_event()]) if events else []
    commits = [Commit("the project", _source_files(CONFIG if upstream else NO_CONFIG))]
    for start in range(0, len(ledger), per_commit):
        chunk = ledger[start : start + per_commit]
        commits.append(Commit(f"record {len(chunk)} events", event_files(chunk)))
    fast_import(work, "main", commits)
    return _finish(work, remote, events)


def _finish(work: Path, remote: Path | None, events: int) -> World:
    """Push main to the remote, then commit one more change to push in the benchmark."""
    git(work, "reset", "-q", "--hard", "main")
    if remote is not None:
        git(work, "remote", "add", "origin", str(remote))
        git(work, "push", "-q", "--no-verify", "origin", "main")
    base = git(work, "rev-parse", "main")
    fast_import(
        work, "main", [Commit("a change to push", {"src/change.py": b"CHANGED = True\n"})],
        first_date=EPOCH + 86_400,
    )  # fmt: skip
    git(work, "reset", "-q", "--hard", "main")
    # a clone's layout: one pack, and the remote's default branch known locally
    git(work, "repack", "-q", "-a", "-d")
    if remote is not None:
        git(work, "remote", "set-head", "origin", "main")
    return World(work, remote, base, git(work, "rev-parse", "main"), events)


def monorepo_world(root: Path, files: int = 50_000, gates: int = 20) -> World:
    """`files` source files in `gates` services; one gate per service, its `inputs` that service."""
    work = init_repo(root / "work")
    remote = init_repo(root / "remote.git", bare=True)
    tree = {
        "README.md": b"A monorepo.\n",
        "pyproject.toml": CONFIG,
        CHECK_PATH: CHECK_SCRIPT.encode(),
    }
    per_service = max(1, (files - len(tree)) // gates)
    for i in range(files - len(tree)):
        service = min(i // per_service, gates - 1)
        tree[f"services/svc-{service:02d}/pkg/m{i % 50:02d}/f{i:05d}.py"] = f"N = {i}\n".encode()
    ledger = [
        live_gate_event(inputs=(f"services/svc-{g:02d}/**",), key=f"mono:svc-{g:02d}:contract")
        for g in range(gates)
    ]
    fast_import(work, "main", [Commit("the monorepo", tree), Commit("gates", event_files(ledger))])
    return _finish(work, remote, len(ledger))


def commit_change(world: World, path: str, text: str, message: str, date: int) -> str:
    """One more commit on the work repository's main (work tree updated); its id."""
    fast_import(world.work, "main", [Commit(message, {path: text.encode()})], first_date=date)
    git(world.work, "reset", "-q", "--hard", "main")
    return git(world.work, "rev-parse", "main")
