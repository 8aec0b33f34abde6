"""Bad input through every reader, and random graphs.

Event files are mutated the ways files go bad (bytes flipped and cut, NUL
bytes, invalid UTF-8, deep nesting, huge strings, wrong types, duplicate
keys) and fed to `parse_event` in volume, then to the real `fsck`, `check`
and `failgate-pre-push` processes: each ends 0, 1, 3 or 4 with the file named,
never with a traceback, and a file that fails to read never lets a held push
through. Random event graphs spread over several revisions resolve the same
whatever order `read_union` is given the revisions in.
"""

from __future__ import annotations

import datetime as dt
import itertools
import random
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from failgate_hooks.core.events import Event, Problem, Status, event_to_toml
from failgate_hooks.core.resolve import Outcome, _decision_key, resolve_entity
from failgate_hooks.core.validate import parse_event
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.ledger.config import MAX_EVENT_BYTES
from failgate_hooks.ledger.union import Revision, read_union
from tests.conftest import Repo, git, make_repo
from tests.worlds import with_remote

KEY = "ops:risk"
FOLDER = "ledger/ops/risk"
WHEN = dt.datetime(2026, 11, 29, 23, 5, tzinfo=dt.UTC)
FIRST_ID = "20261129T230500Z-00000001"
SIBLING_ID = "20261129T230501Z-00000002"

FIRST = Event(
    id=FIRST_ID, entity_key=KEY, status=Status.OBSERVED, effective_at=WHEN,
    title="Gas budget must scale with module count", triggers=("push",),
    note="no verifier yet: held until a person confirms",
)  # fmt: skip
# What a mutation starts from: a valid second event, as `record` would write it.
SIBLING = Event(
    id=SIBLING_ID, entity_key=KEY, status=Status.DIAGNOSED, effective_at=WHEN,
    follows=(FIRST_ID,), note="six modules, budget sized for two and a half",
    recorded_by="Ada <ada@example.org>",
)  # fmt: skip
SIBLING_BYTES = event_to_toml(SIBLING)

OTHER_TYPES = ['1', '-7', '3.5', 'inf', 'true', '[]', '[1, "a"]', '{}', '{a = 1}',
               '1979-05-27T07:32:00Z', '1979-05-27', '"text"', '""', '"\\u0000"']  # fmt: skip
BAD_UTF8 = [b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80", b"\xe2\x82"]


@st.composite
def mutations(draw: st.DrawFn) -> tuple[str, bytes]:
    """A kind of damage, and SIBLING_BYTES so damaged."""
    data = bytearray(SIBLING_BYTES)
    kind = draw(
        st.sampled_from(
            ["flip", "cut", "nul", "utf8", "nest", "huge", "type", "dup", "garbage", "mixed"]
        )
    )
    positions = st.integers(0, max(0, len(data) - 1))
    if kind in ("flip", "mixed"):
        for _ in range(draw(st.integers(1, 8))):
            data[draw(positions)] ^= draw(st.integers(1, 255))
    if kind in ("cut", "mixed"):
        del data[draw(st.integers(0, len(data))) :]
    if kind in ("nul", "mixed"):
        for _ in range(draw(st.integers(1, 3))):
            data.insert(draw(st.integers(0, len(data))), 0)
    if kind == "utf8":
        at = draw(st.integers(0, len(data)))
        data[at:at] = draw(st.sampled_from(BAD_UTF8))
    if kind == "nest":
        depth = draw(st.sampled_from([40, 500, 5000]))
        opener, closer = draw(st.sampled_from([("[", "]"), ("{a = ", "}"), ("[{x = [", "]}]")]))
        key = draw(st.sampled_from(["note", "follows", "x", "applies_to"]))
        closed = draw(st.booleans())
        data += f"\n{key}2 = {opener * depth}1{closer * depth if closed else ''}\n".encode()
        if key != "x":
            data = bytearray(bytes(data).replace(f"{key}2".encode(), key.encode()))
    if kind == "huge":
        size = draw(st.sampled_from([70_000, 1_000_000]))
        filler = draw(st.sampled_from(["a", "é", "-----BEGIN PRIVATE KEY-----", "\x1b[31m"]))
        what = draw(st.sampled_from(["note", "title", "key", "follows"]))
        if what == "key":
            data += f"\n{'k' * size} = 1\n".encode()
        elif what == "follows":
            ids = ", ".join(f'"20261129T230500Z-{i:08x}"' for i in range(size // 200))
            data = bytearray(bytes(data).replace(b"follows = [", f"follows = [{ids}, ".encode()))
        else:
            text = (filler * (size // len(filler)))[:size]
            data = bytearray(event_to_toml(SIBLING._replace(**{what: text})))
    if kind == "type":
        lines = bytes(data).split(b"\n")
        keyed = [i for i, line in enumerate(lines) if b" = " in line]
        i = draw(st.sampled_from(keyed))
        name = lines[i].split(b" = ", 1)[0]
        lines[i] = name + b" = " + draw(st.sampled_from(OTHER_TYPES)).encode()
        data = bytearray(b"\n".join(lines))
    if kind == "dup":
        lines = bytes(data).split(b"\n")
        i = draw(st.integers(0, len(lines) - 1))
        lines.insert(draw(st.integers(0, len(lines))), lines[i])
        data = bytearray(b"\n".join(lines))
    if kind == "garbage":
        data = bytearray(draw(st.binary(max_size=300)))
    return kind, bytes(data)


# --------------------------------------------------------------------------- in process, in volume


@given(mutations())
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_parse_event_reports_every_bad_file_and_never_raises(damage: tuple[str, bytes]) -> None:
    _, data = damage
    path = f"{FOLDER}/{SIBLING_ID}.toml"
    event, problems = parse_event(data, path, entity_key=KEY)
    assert (event is None) == bool(problems)
    for problem in problems:
        assert problem.path == path and problem.message
    if problems:
        res = resolve_entity(KEY, [FIRST], problems)
        assert res.outcome is Outcome.INVALID


@pytest.mark.parametrize(
    "line",
    [f"{'k' * 200_000} = 1", f'status = "{"x" * 200_000}"', f'triggers = ["{"Y" * 200_000}"]',
     f'[applies_to]\nsince = "{"0" * 200_000}"'],
    ids=["key", "status", "trigger", "since"],
)  # fmt: skip
def test_a_huge_bad_value_is_not_echoed_whole(line: str) -> None:
    """A message names what is wrong in a line, however big the bad value: a pushed file must
    not make every hook print megabytes. Needs the fix in core/validate.py (`_Checker.fail` clips)."""
    data = SIBLING_BYTES.replace(b'status = "diagnosed"\n', b"") + b"\n" + line.encode() + b"\n"
    if not line.startswith("status"):
        data += b'status = "diagnosed"\n'
    _, problems = parse_event(data, f"{FOLDER}/{SIBLING_ID}.toml", entity_key=KEY)
    assert problems
    assert all(len(p.describe()) <= 1_000 for p in problems), [len(p.describe()) for p in problems]


# --------------------------------------------------------------------------- through the processes


@dataclass
class Held:
    """A repository whose main holds a gate (no verifier: open until confirmed), pushed."""

    repo: Repo
    remote: Path
    base: str
    counter: itertools.count[int]


@pytest.fixture(scope="module")
def held(tmp_path_factory: pytest.TempPathFactory) -> Held:
    tmp = tmp_path_factory.mktemp("fuzz")
    repo = make_repo(tmp / "work")
    (repo.path / FOLDER).mkdir(parents=True)
    (repo.path / FOLDER / f"{FIRST_ID}.toml").write_bytes(event_to_toml(FIRST))
    base = repo.commit("the held gate")
    remote = with_remote(repo, tmp / "remote.git")
    repo.git("fetch", "-q", "origin")
    return Held(repo, remote, base, itertools.count())


def commit_with(held: Held, files: dict[str, bytes], *, parent: str | None = None) -> str:
    """A commit on `parent` (the base) with `files` added or replaced: one fast-import."""
    ref = f"refs/fuzz/{next(held.counter)}"
    stream = bytearray(
        f"commit {ref}\ncommitter Fuzz <f@x.org> 0 +0000\ndata 0\n"
        f"from {parent or held.base}\n".encode()
    )
    for path, data in files.items():
        stream += f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n"
    subprocess.run(
        ["git", "fast-import", "--quiet"], cwd=held.repo.path, input=bytes(stream), check=True
    )
    return git(held.repo.path, "rev-parse", ref)


def run(held: Held, args: list[str], stdin: str | None = None) -> tuple[int, str]:
    proc = subprocess.run(
        args, cwd=held.repo.path, input=stdin, capture_output=True, text=True,
        errors="replace", check=False, timeout=120,
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out, out[-3000:]
    assert proc.returncode in (0, 1, 3, 4), (proc.returncode, out[-3000:])
    return proc.returncode, out


def fsck(held: Held, commit: str) -> tuple[int, str]:
    return run(held, [sys.executable, "-m", "failgate_hooks", "fsck", "--rev", commit])


def check(held: Held, commit: str) -> tuple[int, str]:
    return run(
        held,
        [sys.executable, "-m", "failgate_hooks", "check", "--rev", commit,
         "--ref", "refs/heads/main", "--ledger-rev", "refs/remotes/origin/main"],
    )  # fmt: skip


def pre_push(held: Held, commit: str) -> tuple[int, str]:
    """The real hook program, fed what git feeds it for `git push origin <commit>:main`."""
    stdin = f"refs/heads/main {commit} refs/heads/main {held.base}\n"
    call = "from failgate_hooks.commands.cli import pre_push_main; pre_push_main()"
    return run(held, [sys.executable, "-c", call, "origin", str(held.remote)], stdin)


def named(path: str, out: str) -> bool:
    """Whether the output names the file (as the sanitiser would print it)."""
    return path in out


LOCATIONS = {
    # where the damaged file lands, and the entity its folder names (None: no entity)
    "sibling": (f"{FOLDER}/{SIBLING_ID}.toml", KEY),
    "new entity": (f"ledger/ops/other/{SIBLING_ID}.toml", "ops:other"),
    "ledger root": (f"ledger/{SIBLING_ID}.toml", None),
}


def test_the_held_world_is_held_before_any_damage(held: Held) -> None:
    assert check(held, held.base)[0] == 1
    assert pre_push(held, held.base)[0] == 1
    assert fsck(held, held.base)[0] == 0


@given(mutations(), st.sampled_from(sorted(LOCATIONS)))
@settings(max_examples=18, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_damaged_file_through_fsck_check_and_the_hook_fails_closed_and_is_named(
    held: Held, damage: tuple[str, bytes], location: str
) -> None:
    _, data = damage
    path, entity = LOCATIONS[location]
    commit = commit_with(held, {path: data})
    _, problems = parse_event(data, path, entity_key=entity)
    unreadable = entity is None or bool(problems)

    fsck_code, fsck_out = fsck(held, commit)
    check_code, check_out = check(held, commit)
    hook_code, hook_out = pre_push(held, commit)
    if unreadable:
        # the gate held before; a file that fails to read must not open it
        assert fsck_code == check_code == hook_code == 4, (fsck_out, check_out, hook_out)
        for out in (fsck_out, check_out, hook_out):
            assert named(path, out), out[-2000:]
    else:
        assert fsck_code in (0, 4)


IN_PLACE = f"{FOLDER}/{FIRST_ID}.toml"


@given(mutations())
@example(damage=("cut", SIBLING_BYTES))  # cut at the end: no damage at all
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_protected_event_damaged_in_place_is_refused_by_check_and_the_hook(
    held: Held, damage: tuple[str, bytes]
) -> None:
    """The same id with other bytes than the protected revision's: always an integrity error."""
    _, data = damage
    original = event_to_toml(FIRST)
    # damage the protected event instead of the sibling, in the same way; a damage that
    # changed nothing (a cut at the very end) leaves it whole: no case
    data = data.replace(SIBLING_BYTES, original)
    if data == original:
        return
    commit = commit_with(held, {IN_PLACE: data})
    check_code, check_out = check(held, commit)
    hook_code, hook_out = pre_push(held, commit)
    assert check_code == hook_code == 4, (check_out, hook_out)
    assert named(IN_PLACE, check_out) and named(IN_PLACE, hook_out)


@pytest.mark.parametrize(
    "data",
    [
        SIBLING_BYTES.replace(b"diagnosed", b"diag\0nosed"),
        SIBLING_BYTES.replace(b"six", b"s\xffx"),
        SIBLING_BYTES[: len(SIBLING_BYTES) // 2],
        SIBLING_BYTES + b"\nx = " + b"[" * 3000 + b"]" * 3000 + b"\n",
        SIBLING_BYTES + b'\nnote = "' + b"-----BEGIN PRIVATE KEY-----" * 40_000 + b'"\n',
    ],
    ids=["nul", "invalid-utf8", "cut", "deep-nesting", "huge-and-hostile-to-regexes"],
)
def test_a_real_push_of_a_damaged_event_is_refused_and_names_it(
    tmp_path: Path, data: bytes
) -> None:
    repo = make_repo(tmp_path / "work")
    (repo.path / FOLDER).mkdir(parents=True)
    (repo.path / FOLDER / f"{FIRST_ID}.toml").write_bytes(event_to_toml(FIRST))
    repo.write("deploy/budget.json", "{}\n")
    repo.commit("the held gate")
    remote = with_remote(repo, tmp_path / "remote.git")
    before = git(remote, "rev-parse", "main")
    (repo.path / FOLDER / f"{SIBLING_ID}.toml").write_bytes(data)
    repo.commit("a damaged event")
    assert repo.failgate("install").code == 0
    proc = subprocess.run(
        ["git", "push", "origin", "main"], cwd=repo.path, capture_output=True, text=True,
        errors="replace", check=False, timeout=120,
    )  # fmt: skip
    assert proc.returncode != 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"{FOLDER}/{SIBLING_ID}.toml" in proc.stderr
    assert "BLOCKED: ledger integrity" in proc.stderr
    assert git(remote, "rev-parse", "main") == before
    fsck_result = repo.failgate("fsck")
    assert fsck_result.code == 4 and f"{SIBLING_ID}.toml" in fsck_result.out


# --------------------------------------------------------------------------- random graphs, in union


def gid(n: int) -> str:
    return f"20261129T2305{n:02d}Z-{n:08x}"


@st.composite
def spread_ledgers(draw: st.DrawFn) -> tuple[list[list[tuple[str, bytes]]], list[str]]:
    """Event files of one or two entities, spread over 2-3 revisions (each file in at least
    one), some ids given different bytes in different revisions; and the entity keys."""
    keys = ["ops:a", "ops:b"][: draw(st.integers(1, 2))]
    n = draw(st.integers(1, 7))
    events: list[Event] = []
    for i in range(n):
        key = draw(st.sampled_from(keys))
        earlier = [e.id for e in events if e.entity_key == key]
        everyone = [gid(j) for j in range(n + 2) if j != i]  # unknown and later ids too
        pick = st.sampled_from(earlier if earlier and draw(st.integers(0, 4)) else everyone)
        follows = tuple(sorted(set(draw(st.lists(pick, max_size=2))))) if earlier else ()
        replaces = tuple(sorted(set(draw(st.lists(pick, max_size=1))))) if earlier else ()
        retract = draw(st.integers(0, 5)) == 0
        events.append(
            Event(
                id=gid(i), entity_key=key, effective_at=WHEN, follows=follows,
                status=draw(st.sampled_from(list(Status))),
                title=draw(st.sampled_from([None, "t1", "t2"])) if follows else "first",
                triggers=draw(st.sampled_from([None, ("push",), ("deploy",), ("push", "deploy")]))
                if follows else ("push",),
                supersedes=() if retract else replaces, retracts=replaces if retract else (),
            )
        )  # fmt: skip
    files = [
        (f"ledger/{e.entity_key.replace(':', '/')}/{e.id}.toml", event_to_toml(e)) for e in events
    ]
    revisions: list[list[tuple[str, bytes]]] = [[] for _ in range(draw(st.integers(2, 3)))]
    for path, data in files:
        homes = draw(st.sets(st.integers(0, len(revisions) - 1), min_size=1))
        for home in sorted(homes):
            if draw(st.integers(0, 9)) == 0:  # the same id, other bytes, in this revision
                data = data.replace(b'status = "', b'status = "x', 1) if home else data + b"#\n"
            revisions[home].append((path, data))
    return revisions, keys


@pytest.fixture(scope="module")
def union_repo(tmp_path_factory: pytest.TempPathFactory) -> Held:
    repo = make_repo(tmp_path_factory.mktemp("union") / "repo")
    return Held(repo, repo.path, repo.head(), itertools.count())


def _summary(ledger_revisions: list[Revision], repo: GitRepo) -> tuple[object, ...]:
    """What must not depend on the revisions' order: entities, resolutions, problem codes."""
    ledger = read_union(repo, ledger_revisions, "ledger", MAX_EVENT_BYTES)
    resolutions = {key: ledger.resolve(key) for key in ledger.entity_keys}
    for res in resolutions.values():
        # a superseded event is never revived; heads that disagree never resolve
        assert not set(res.heads) & res.dropped
        keys = {_decision_key(res.head_states[h]) for h in res.heads}
        if len(keys) > 1:
            assert res.outcome in (Outcome.CONFLICT, Outcome.INVALID)
    return (
        tuple(ledger.entity_keys),
        {
            key: (res.outcome, res.heads, res.order, sorted(res.dropped), _codes(res.problems))
            for key, res in resolutions.items()
        },
        # kinds, not counts: a third differing copy is one more report in one order only
        _codes(ledger.problems),
    )  # fmt: skip


def _codes(problems: Iterable[Problem]) -> list[str]:
    # sorted, never a set: the summaries are compared as text, and a set's order
    # depends on how it was built and on the hash seed
    return sorted({p.code for p in problems})


@given(spread_ledgers(), st.randoms(use_true_random=False))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_resolution_does_not_depend_on_which_revision_lists_an_event_first(
    union_repo: Held, spread: tuple[list[list[tuple[str, bytes]]], list[str]], rng: random.Random
) -> None:
    revisions, _ = spread
    commits = [commit_with(union_repo, dict(files)) for files in revisions]
    with GitRepo.open(union_repo.repo.path) as repo:
        orders = list(itertools.permutations(range(len(commits))))
        rng.shuffle(orders)
        seen = set()
        for order in orders[:3]:
            revs = [Revision(f"r{i}", commits[i], protected=i > 0) for i in order]
            seen.add(repr(_summary(revs, repo)))
        assert len(seen) == 1, "\n".join(sorted(seen))


def test_a_differing_duplicate_makes_its_entity_invalid_in_either_order(union_repo: Held) -> None:
    """The same id with other bytes in two revisions: which copy came first must not pick the
    entity's state. Needs the fix in ledger.py (`_add_entry`): see the report."""
    first = (f"ledger/ops/a/{gid(0)}.toml", event_to_toml(
        Event(id=gid(0), entity_key="ops:a", status=Status.OBSERVED, effective_at=WHEN,
              title="first", triggers=("push",))
    ))  # fmt: skip
    expired = event_to_toml(
        Event(id=gid(1), entity_key="ops:a", status=Status.EXPIRED, effective_at=WHEN,
              follows=(gid(0),))
    )  # fmt: skip
    observed = expired.replace(b'"expired"', b'"observed"')
    one = commit_with(union_repo, dict([first, (f"ledger/ops/a/{gid(1)}.toml", expired)]))
    two = commit_with(union_repo, dict([first, (f"ledger/ops/a/{gid(1)}.toml", observed)]))
    # the same id in another entity's folder, too
    three = commit_with(union_repo, {f"ledger/ops/b/{gid(1)}.toml": expired.replace(
        b'entity_key = "ops:a"', b'entity_key = "ops:b"')})  # fmt: skip
    with GitRepo.open(union_repo.repo.path) as repo:
        for pair in ((one, two), (two, one), (one, three), (three, one)):
            ledger = read_union(
                repo, [Revision("x", pair[0]), Revision("y", pair[1])], "ledger", MAX_EVENT_BYTES
            )
            assert [p.code for p in ledger.problems] == ["duplicate-id"]
            outcomes = {key: ledger.resolve(key).outcome for key in ledger.entity_keys}
            assert set(outcomes.values()) == {Outcome.INVALID}, (pair, outcomes)
            if three in pair:
                assert sorted(outcomes) == ["ops:a", "ops:b"]


def test_a_ledger_entry_that_is_a_symlink_or_a_submodule_is_named_never_read(
    held: Held,
) -> None:
    """A ledger entry that is not a blob (a symlink, a submodule) is named, never read."""
    tree_path = f"{FOLDER}/{SIBLING_ID}.toml"
    stream = (
        f"commit refs/fuzz/link\ncommitter F <f@x.org> 0 +0000\ndata 0\nfrom {held.base}\n"
        f"M 120000 inline {tree_path}\ndata 11\n/etc/passwd\n"
        f"M 160000 {held.base} ledger/ops/risk/20261129T230502Z-00000003.toml\n"
    ).encode()
    subprocess.run(["git", "fast-import", "--quiet"], cwd=held.repo.path, input=stream, check=True)
    commit = git(held.repo.path, "rev-parse", "refs/fuzz/link")
    for code, out in (fsck(held, commit), check(held, commit), pre_push(held, commit)):
        assert code == 4, out
        assert tree_path in out and re.search(r"regular files|not an event", out)
    assert "root:" not in check(held, commit)[1]
