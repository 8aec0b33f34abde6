"""ledgerindex: entities settled from a cached summary decide exactly as if read in full.

The property: for random ledgers spread over revisions (entities changed between
them, moved or byte-different ids, bad file names, scopes by trigger, ref and
environment), random protection and random actions, the decision with the index
equals the decision from `read_union`. The other tests pin down that the fast
path is really taken, and that the index on disk is never trusted when it is bad.
"""

from __future__ import annotations

import datetime as dt
import gc
import hashlib
import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from failgate_hooks import ledgerindex
from failgate_hooks.app.evaluate import Evaluator, GitFacts, Request
from failgate_hooks.core.events import AppliesTo, Event, Status, event_to_toml
from failgate_hooks.core.gates import Context, ruled_out
from failgate_hooks.git.repo import GitRepo, TreeEntry
from failgate_hooks.ledger import union as ledger_module
from failgate_hooks.ledger.config import Config
from failgate_hooks.ledger.union import Revision, read_union
from failgate_hooks.ledgerindex import LedgerView
from tests.conftest import Repo, git, make_repo

WHEN = dt.datetime(2026, 11, 30, 3, 0, tzinfo=dt.UTC)
KEYS = ["ops:a", "ops:b", "ops:b:c", "svc:d"]
TRIGGERS = [None, ("push",), ("deploy",), ("push", "deploy"), ("release",)]
SCOPES = [
    None,
    AppliesTo(paths=("src/**",)),
    AppliesTo(paths=("README",), refs=("refs/heads/*",)),
    AppliesTo(since="0" * 40),
    AppliesTo(refs=("refs/heads/release/*",)),
    AppliesTo(environments=("prod",)),
    AppliesTo(refs=("refs/heads/main",), environments=("staging", "prod")),
]
CONTEXTS = [
    Context("push", "refs/heads/main"),
    Context("push", "refs/heads/release/1"),
    Context("push", None),
    Context("deploy", "refs/heads/main", "prod"),
    Context("deploy", None, "staging"),
    Context("release"),
]


def gid(n: int) -> str:
    return f"20261130T0300{n:02d}Z-{n:08x}"


class World:
    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.counter = itertools.count()

    def commit(
        self,
        files: dict[str, bytes],
        parent: str | None = None,
        modes: dict[str, str] | None = None,
    ) -> str:
        """A commit holding exactly `files` (a root commit without `parent`): one fast-import.
        Each file is a regular file unless `modes` names another mode (120000: a link)."""
        n = next(self.counter)
        ref = f"refs/index/{n}"
        # the number in the message: the same files make another commit, with the same tree
        message = f"{n}\n"
        stream = bytearray(
            f"commit {ref}\ncommitter T <t@x.org> 0 +0000\ndata {len(message)}\n{message}".encode()
        )
        if parent is not None:
            stream += f"from {parent}\ndeleteall\n".encode()
        stream += b"M 100644 inline README\ndata 2\nhi\n"
        for path, data in files.items():
            name = path
            if "\n" in path or path.startswith('"'):  # fast-import's quoted form
                name = (
                    '"' + path.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
                )
            mode = (modes or {}).get(path, "100644")
            stream += f"M {mode} inline {name}\ndata {len(data)}\n".encode() + data + b"\n"
        subprocess.run(
            ["git", "fast-import", "--quiet"],
            cwd=self.repo.path,
            input=bytes(stream),
            check=True,
        )
        return git(self.repo.path, "rev-parse", ref)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return World(make_repo(tmp_path_factory.mktemp("index") / "repo"))


def path_of(event: Event) -> str:
    return f"ledger/{event.entity_key.replace(':', '/')}/{event.id}.toml"


@st.composite
def spread(draw: st.DrawFn) -> list[dict[str, bytes]]:
    """Events of a few entities spread over 2-3 revisions: most files in every revision
    (so that unchanged entities exist), some in one, some with other bytes or elsewhere."""
    n = draw(st.integers(1, 7))
    events: list[Event] = []
    for i in range(n):
        key = draw(st.sampled_from(KEYS))
        earlier = [e.id for e in events if e.entity_key == key]
        pick = st.sampled_from(earlier) if earlier else st.nothing()
        follows = tuple(sorted(set(draw(st.lists(pick, max_size=2))))) if earlier else ()
        supersedes = tuple(draw(st.lists(pick, max_size=1))) if earlier else ()
        events.append(
            Event(
                id=gid(i),
                entity_key=key,
                effective_at=WHEN,
                follows=follows,
                supersedes=supersedes,
                status=draw(st.sampled_from(list(Status))),
                title="t" if not follows else draw(st.sampled_from([None, "t2"])),
                triggers=draw(st.sampled_from(TRIGGERS[1:] if not follows else TRIGGERS)),
                applies_to=draw(st.sampled_from(SCOPES)),
            )
        )
    count = draw(st.integers(2, 3))
    revisions: list[dict[str, bytes]] = [{} for _ in range(count)]
    for event in events:
        data = event_to_toml(event)
        path = path_of(event)
        if draw(st.integers(0, 2)):
            homes = set(range(count))
        else:
            homes = draw(st.sets(st.integers(0, count - 1), min_size=1))
        for home in sorted(homes):
            damage = draw(st.integers(0, 14))
            if damage == 0:  # the same id, other bytes, in this revision
                revisions[home][path] = data.replace(b'status = "', b'status = "x', 1)
            elif damage == 1:  # the same id in another entity's folder
                revisions[home][f"ledger/svc/moved/{event.id}.toml"] = data
            elif damage == 2:  # a name that is no event id
                revisions[home][path.replace(".toml", ".txt")] = data
            else:
                revisions[home][path] = data
    return revisions


def columns(index: ledgerindex.TreeIndex) -> tuple[object, ...]:
    rows = range(len(index.keys))
    files = [index.files(row) for row in rows]
    return (
        index.clean,
        index.keys,
        index.digests,
        index.scope_of,
        index.scopes,
        index.details,
        files,
    )


def decide(repo: GitRepo, request: Request, *, use_index: bool) -> object:
    return Evaluator(repo, Config(), use_index=use_index).evaluate(request)


@given(spread(), st.data())
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_index_decides_exactly_as_reading_every_entity(
    world: World, revisions: list[dict[str, bytes]], data: st.DataObject
) -> None:
    commits = [world.commit(files) for files in revisions]
    if data.draw(st.booleans()):  # another commit with C's ledger tree, read last
        commits.append(world.commit(revisions[0]))
    protected = data.draw(st.lists(st.booleans(), min_size=len(commits), max_size=len(commits)))
    revs = tuple(
        Revision(f"r{i}", commit, protected=i > 0 and protected[i])
        for i, commit in enumerate(commits)
    )
    with GitRepo.open(world.repo.path) as repo:
        # an index built from another tree's is the index built from every event
        full = [ledgerindex.build_index(repo, c, "ledger") for c in commits]
        for i, commit in enumerate(commits):
            for base in full:
                incremental = ledgerindex.build_index(repo, commit, "ledger", base=base)
                assert columns(incremental) == columns(full[i])
        whole = read_union(repo, revs, "ledger")
        for context in CONTEXTS:
            # every file read in full is the file the whole union has, revisions in order
            part = ledger_view(repo, revs, context).ledger
            for path, file in part.files.items():
                assert file == whole.files[path], path
            assert part.problems == whole.problems
            for authority in ("accept", "protected"):
                request = Request(commits[0], context, revs, authority=authority)
                assert decide(repo, request, use_index=True) == decide(
                    repo, request, use_index=False
                ), (context, authority)


# --------------------------------------------------------------------------- the fast path


def event(n: int, key: str, triggers: tuple[str, ...], **keys: object) -> Event:
    return Event(
        id=gid(n),
        entity_key=key,
        status=Status.OBSERVED,
        effective_at=WHEN,
        title=f"risk {n}",
        triggers=triggers,
        **keys,  # type: ignore[arg-type]
    )


def files_of(*events: Event) -> dict[str, bytes]:
    return {path_of(e): event_to_toml(e) for e in events}


DEPLOY = [event(i, f"svc:r{i}", ("deploy",)) for i in range(6)]
LIVE = event(40, "ops:live", ("push",))


class View:
    """What ledger_view gave: the keys it settled, and the ledger it read in full."""

    def __init__(self, found: LedgerView) -> None:
        settled = found.settled
        self.settled = sorted(e[0] for e in settled.entities()) if settled else []
        self.ledger = found.ledger


def ledger_view(repo: GitRepo, revs: Sequence[Revision], context: Context) -> LedgerView:
    facts = GitFacts(repo, revs[0].commit, "ledger")
    return ledgerindex.ledger_view(
        repo, revs, "ledger", lambda scopes: ruled_out(scopes, facts, context)
    )


def view(world: World, *revs: Revision, context: Context) -> View:
    with GitRepo.open(world.repo.path) as repo:
        return View(ledger_view(repo, revs, context))


def test_entities_the_action_rules_out_are_settled_without_reading_them(world: World) -> None:
    tip = world.commit(files_of(*DEPLOY, LIVE))
    found = view(
        world,
        Revision("C", tip),
        Revision("main", tip, protected=True),
        context=Context("push", "refs/heads/main"),
    )
    assert found.settled == sorted(e.entity_key for e in DEPLOY)
    # only the gate that may apply to a push is read in full
    assert {f.entity_key for f in found.ledger.files.values()} == {"ops:live"}


def test_nothing_is_settled_when_no_revision_is_protected(world: World) -> None:
    # every event is then a relaxation to list: each entity must be read
    tip = world.commit(files_of(*DEPLOY, LIVE))
    found = view(world, Revision("C", tip), context=Context("push", "refs/heads/main"))
    assert not found.settled
    assert len({f.entity_key for f in found.ledger.files.values()}) == len(DEPLOY) + 1


def test_an_entity_that_differs_between_revisions_is_read_in_full(world: World) -> None:
    later = event(50, DEPLOY[0].entity_key, ("deploy",), follows=(DEPLOY[0].id,))
    main = world.commit(files_of(*DEPLOY, LIVE))
    tip = world.commit(files_of(*DEPLOY, LIVE, later))
    found = view(
        world,
        Revision("C", tip),
        Revision("main", main, protected=True),
        context=Context("push", "refs/heads/main"),
    )
    assert DEPLOY[0].entity_key not in found.settled
    assert found.ledger.file_of_id(later.id) is not None
    assert found.settled == sorted(e.entity_key for e in DEPLOY[1:])


def test_an_id_moved_to_another_entity_falls_back_to_the_whole_union(world: World) -> None:
    moved = {f"ledger/svc/moved/{DEPLOY[1].id}.toml": event_to_toml(DEPLOY[1])}
    main = world.commit(files_of(*DEPLOY))
    tip = world.commit({**files_of(DEPLOY[0], *DEPLOY[2:]), **moved})
    found = view(
        world,
        Revision("C", tip),
        Revision("main", main, protected=True),
        context=Context("push", "refs/heads/main"),
    )
    assert not found.settled
    assert [p.code for p in found.ledger.problems] == ["duplicate-id"]


# --------------------------------------------------------------------------- on disk


def index_files(world: World) -> list[Path]:
    return sorted((world.repo.path / ".git" / "failgate" / "index").glob("*.json"))


def fresh_view(world: World, tip: str) -> View:
    ledgerindex._loaded.clear()  # as a new process would start
    return view(
        world,
        Revision("C", tip),
        Revision("main", tip, protected=True),
        context=Context("push", "refs/heads/main"),
    )


def test_the_index_is_kept_by_tree_and_read_back_by_the_next_process(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    tip = world.commit(files_of(*DEPLOY[:3]))
    fresh_view(world, tip)
    tree = git(world.repo.path, "rev-parse", f"{tip}:ledger")
    assert any(p.name.startswith(tree) for p in index_files(world))

    def must_not_build(*args: object) -> None:
        raise AssertionError("rebuilt an index that was on disk")

    monkeypatch.setattr(ledgerindex, "build_index", must_not_build)
    assert len(fresh_view(world, tip).settled) == 3


def split_index(raw: bytes) -> tuple[bytes, list[bytes], list[bytes], bytes]:
    """The version line, the checksums, the parts (summary, details, digests, offsets), the files."""
    header, table, rest = raw.split(b"\n", 2)
    fields = table.split()
    sums, lengths = fields[:4], [int(n) for n in fields[4:]]
    parts, at = [], 0
    for n in lengths:
        parts.append(rest[at : at + n])
        at += n
    return header, sums, parts, rest[at:]


def join_index(header: bytes, sums: list[bytes], parts: list[bytes], files: bytes) -> bytes:
    table = b" ".join([*sums, *(str(len(p)).encode() for p in parts)])
    return header + b"\n" + table + b"\n" + b"".join(parts) + files


@pytest.mark.parametrize(
    "damage",
    [
        "flip a byte of the summary",
        "flip a byte of the details",
        "flip a byte of an entity's files",
        "drop the files",
        "other version",
        "wrong types, right checksum",
        "details of wrong types, right checksum",
        "empty",
    ],
)
def test_a_bad_index_file_is_rebuilt_never_believed(world: World, damage: str) -> None:
    extra = event(60, "svc:extra", ("push",))
    tip = world.commit(files_of(*DEPLOY[:2], extra))
    fresh_view(world, tip)
    tree = git(world.repo.path, "rev-parse", f"{tip}:ledger")
    (path,) = [p for p in index_files(world) if p.name.startswith(tree)]
    header, sums, parts, files = split_index(path.read_bytes())

    def rechecked(i: int, body: bytes) -> None:
        parts[i] = body
        sums[i] = hashlib.sha256(body).hexdigest().encode()

    if damage == "flip a byte of the summary":
        # claim that the push-triggered entity is deploy-only: the checksum catches it
        assert b'["push"]' in parts[0]
        parts[0] = parts[0].replace(b'["push"]', b'["deplo"]')
    elif damage == "flip a byte of the details":
        assert b'"risk 1"' in parts[1]
        parts[1] = parts[1].replace(b'"risk 1"', b'"risk 9"')
    elif damage == "flip a byte of an entity's files":
        # the entity read in full is listed from the index: a wrong blob id would
        # read another event than the ledger holds
        oid = git(world.repo.path, "rev-parse", f"{tip}:{path_of(extra)}").encode()
        assert oid in files
        files = files.replace(oid, oid[:-1] + (b"0" if oid[-1:] != b"0" else b"1"))
    elif damage == "drop the files":
        files = b""
    elif damage == "other version":
        header = header + b"x"
    elif damage == "wrong types, right checksum":
        rechecked(0, b'[true, ["svc:extra"], [0], [[]]]')
    elif damage == "details of wrong types, right checksum":
        rechecked(1, b"[[1, 2, 3], [null, null, null], [[], [], []]]")
    path.write_bytes(b"" if damage == "empty" else join_index(header, sums, parts, files))
    ledgerindex._loaded.clear()
    with GitRepo.open(world.repo.path) as repo:
        revs = (Revision("C", tip), Revision("main", tip, protected=True))
        found = ledger_view(repo, revs, Context("push", "refs/heads/main"))
        assert found.settled is not None
        settled = list(found.settled.entities())
    # the push-triggered entity is read in full, as the ledger says, not as the file said
    read = found.ledger.file_of_id(extra.id)
    assert read is not None and read.event == extra
    assert [e[0] for e in settled] == sorted(e.entity_key for e in DEPLOY[:2])
    # and what is shown of the settled ones is the ledger's, never the damaged file's
    titles = [e.title for e in sorted(DEPLOY[:2], key=lambda e: e.entity_key)]
    assert [e[2] for e in settled] == titles
    if damage in ("flip a byte of the summary", "other version", "empty"):
        # a bad summary is a miss: written afresh at once
        assert ledgerindex._read(str(path), "ledger", lambda: pytest.fail("rebuilt")) is not None


def test_only_the_latest_index_files_are_kept(world: World) -> None:
    for n in range(ledgerindex.KEEP + 3):
        fresh_view(world, world.commit(files_of(event(70 + n, "svc:keep", ("deploy",)))))
    assert len(index_files(world)) == ledgerindex.KEEP


def test_an_unwritable_index_folder_is_no_index(world: World) -> None:
    folder = world.repo.path / ".git" / "failgate" / "index"
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o500)
    try:
        tip = world.commit(files_of(*DEPLOY[:4]))
        if os.access(folder, os.W_OK):  # root ignores the mode: use a file in the way
            os.chmod(folder, 0o700)
            for p in folder.iterdir():
                p.unlink()
            folder.rmdir()
            folder.write_text("not a folder")
        assert len(fresh_view(world, tip).settled) == 4
    finally:
        if folder.is_dir():
            os.chmod(folder, 0o700)
        else:
            folder.unlink()


def test_an_index_built_from_another_never_hides_an_id_held_twice(world: World) -> None:
    # the new tree holds DEPLOY[1] in a second folder: only a full read says so
    moved = {f"ledger/svc/moved/{DEPLOY[1].id}.toml": event_to_toml(DEPLOY[1])}
    main = world.commit(files_of(*DEPLOY))
    tip = world.commit({**files_of(*DEPLOY), **moved})
    with GitRepo.open(world.repo.path) as repo:
        base = ledgerindex.build_index(repo, main, "ledger")
        built = ledgerindex.build_index(repo, tip, "ledger", base=base)
        assert not built.clean
        assert columns(built) == columns(ledgerindex.build_index(repo, tip, "ledger"))


def test_only_an_unclean_ledger_keeps_its_parses(world: World) -> None:
    # a clean one is served by its index from now on; an unclean one is read whole
    # on every run, and the parse cache is what keeps that fast
    many = [event(60 + i, f"svc:m{i}", ("deploy",)) for i in range(ledger_module.FEW + 8)]
    clean = world.commit(files_of(*many))
    moved = {f"ledger/svc/moved/{many[1].id}.toml": event_to_toml(many[1])}
    unclean = world.commit({**files_of(*many), **moved})
    parsed = world.repo.path / ".git" / "failgate" / "parsed"
    shutil.rmtree(parsed, ignore_errors=True)
    with GitRepo.open(world.repo.path) as repo:
        ledger_module._parsed.clear()
        assert ledgerindex.build_index(repo, clean, "ledger").clean
        assert not parsed.exists()
        ledger_module._parsed.clear()
        assert not ledgerindex.build_index(repo, unclean, "ledger").clean
        assert list(parsed.glob("*.json"))


def test_a_build_split_with_a_forked_child_is_the_build_of_one_process(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    many = [event(60 + i, f"svc:m{i}", ("deploy",)) for i in range(30)]
    later = [event(10 + i, f"svc:m{i}", ("push",), follows=(many[i].id,)) for i in range(0, 30, 3)]
    tip = world.commit(files_of(*many, *later, LIVE))
    with GitRepo.open(world.repo.path) as repo:
        ledger_module._parsed.clear()
        alone = ledgerindex.build_index(repo, tip, "ledger")
        monkeypatch.setattr(ledgerindex, "FORK_FILES", 2)
        parent = os.getpid()
        here: list[int] = []  # the parts read in this process; the child's list is its own
        original = ledgerindex._read_rows

        repo.read_object(tip)  # starts this process's cat-file
        parents_cat_file = repo.cat_file.pid

        def noting(*args, **options):  # type: ignore[no-untyped-def]
            if os.getpid() != parent:
                if args[0].repo.cat_file.pid == parents_cat_file:
                    os._exit(5)  # two processes on one pipe: answers would cross
            else:
                here.append(len(args[-1]))
                time.sleep(0.05)  # a slow core: the child should take the larger share
            return original(*args, **options)

        monkeypatch.setattr(ledgerindex, "_read_rows", noting)
        ledger_module._parsed.clear()
        split = ledgerindex.build_index(repo, tip, "ledger")
        assert columns(split) == columns(alone)
        # the parent's cat-file is still in step after the child's reads
        entry = repo.tree_entry(tip, path_of(LIVE))
        assert entry is not None
        assert repo.read_object(entry.oid) == ("blob", event_to_toml(LIVE))
    if sys.platform == "linux":
        assert 0 < sum(here) < 31, here  # of 31 entities: this process read some, the child more
        assert sum(here) < 16, here


@pytest.mark.parametrize(("fails_at", "read_here"), [(1, 32), (3, 28)])
def test_a_child_that_fails_leaves_the_parts_it_did_not_give_to_the_parent(
    world: World, monkeypatch: pytest.MonkeyPatch, fails_at: int, read_here: int
) -> None:
    many = [event(60 + i, f"svc:m{i}", ("deploy",)) for i in range(32)]
    tip = world.commit(files_of(*many))
    with GitRepo.open(world.repo.path) as repo:
        alone = ledgerindex.build_index(repo, tip, "ledger")
        monkeypatch.setattr(ledgerindex, "FORK_FILES", 2)
        parent = os.getpid()
        original = ledgerindex._read_rows
        here: list[int] = []
        theirs: list[int] = []  # the child's own copy counts its parts

        def failing_at_the_childs_nth_part(*args, **options):  # type: ignore[no-untyped-def]
            if os.getpid() != parent:
                theirs.append(1)
                if len(theirs) == fails_at:
                    os._exit(3)
            else:
                here.append(len(args[-1]))
                time.sleep(0.1)  # a slow core: the child finishes its first parts meanwhile
            return original(*args, **options)

        monkeypatch.setattr(ledgerindex, "_read_rows", failing_at_the_childs_nth_part)
        ledger_module._parsed.clear()
        assert columns(ledgerindex.build_index(repo, tip, "ledger")) == columns(alone)
    # of 16 parts of 2 entities: the parts the child sent are taken, the rest read here
    assert sum(here) == (read_here if sys.platform == "linux" else 32), here


def test_the_garbage_collector_is_as_the_build_found_it(world: World) -> None:
    tip = world.commit(files_of(*DEPLOY))
    with GitRepo.open(world.repo.path) as repo:
        try:
            for enabled in (True, False):
                (gc.enable if enabled else gc.disable)()
                ledger_module._parsed.clear()
                ledgerindex.build_index(repo, tip, "ledger")
                assert gc.isenabled() is enabled
        finally:
            gc.enable()


def two_entries_of_one_name(world: World) -> str:
    """A commit whose ledger folder svc/r0 holds DEPLOY[0]'s file name twice, with two
    contents: git mktree makes such a tree, fsck only warns, a push carries it."""
    path = world.repo.path

    def blob(data: bytes) -> str:
        return git(path, "hash-object", "-w", "--stdin", input=data.decode())

    one = blob(event_to_toml(DEPLOY[0]))
    two = blob(event_to_toml(replace(DEPLOY[0], title="edited")))
    name = f"{DEPLOY[0].id}.toml"
    tree = git(path, "mktree", input=f"100644 blob {one}\t{name}\n100644 blob {two}\t{name}\n")
    for folder in ("r0", "svc", "ledger"):
        tree = git(path, "mktree", input=f"040000 tree {tree}\t{folder}\n")
    return git(path, "commit-tree", tree, "-m", "two entries of one name")


def test_an_id_twice_in_one_folder_is_no_unique_id() -> None:
    entry = TreeEntry("100644", "blob", "1" * 40, f"ledger/svc/r0/{DEPLOY[0].id}.toml")
    other = entry._replace(oid="2" * 40)
    assert ledgerindex._listings([entry], "ledger") == ({"svc:r0": [entry]}, True)
    assert ledgerindex._listings([entry, other], "ledger") == ({"svc:r0": [entry, other]}, False)
    # a file outside every entity's folder: the listing cannot call the ledger clean
    root = entry._replace(path=f"ledger/{DEPLOY[1].id}.toml")
    assert ledgerindex._listings([entry, root], "ledger") == ({"svc:r0": [entry]}, False)


@pytest.mark.parametrize("fork_files", [ledgerindex.FORK_FILES, 1])
def test_two_entries_of_one_name_make_an_unclean_index_not_a_crash(
    world: World, monkeypatch: pytest.MonkeyPatch, fork_files: int
) -> None:
    commit = two_entries_of_one_name(world)
    monkeypatch.setattr(ledgerindex, "FORK_FILES", fork_files)
    with GitRepo.open(world.repo.path) as repo:
        ledger_module._parsed.clear()
        assert not ledgerindex.build_index(repo, commit, "ledger").clean
        # a problem the listing check misses is found by the read, which then reads whole
        listings = ledgerindex._listings
        monkeypatch.setattr(ledgerindex, "_listings", lambda *a: (listings(*a)[0], True))
        ledger_module._parsed.clear()
        built = ledgerindex.build_index(repo, commit, "ledger")
        assert not built.clean
        full = read_union(repo, [Revision("index", commit, protected=True)], "ledger")
        assert [p.code for p in full.problems] == ["duplicate-id"]


def test_a_push_that_records_an_event_reads_only_that_entity(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    later = event(80, DEPLOY[2].entity_key, ("deploy",), follows=(DEPLOY[2].id,))
    main = world.commit(files_of(*DEPLOY))
    tip = world.commit(files_of(*DEPLOY, later))
    read: list[str] = []
    original = ledgerindex._read_rows

    def counting(at, keys):  # type: ignore[no-untyped-def]
        read.extend(e.path for key in keys for e in at.listings[key])
        return original(at, keys)

    with GitRepo.open(world.repo.path) as repo:
        base = ledgerindex.build_index(repo, main, "ledger")
        monkeypatch.setattr(ledgerindex, "_read_rows", counting)
        built = ledgerindex.build_index(repo, tip, "ledger", base=base)
    assert sorted(read) == sorted([path_of(DEPLOY[2]), path_of(later)])
    row = built.keys.index(DEPLOY[2].entity_key)
    assert built.details.event_ids[row] == [DEPLOY[2].id, later.id]


# --------------------------------------------------------------------------- found in review


def test_a_shallow_clone_asks_git_only_what_the_full_read_asks(
    world: World, tmp_path: Path
) -> None:
    # C's gate applies to pushes since A; the protected revision moves it to deploy.
    # In a clone without A the full read never asks about A (the union's scope is
    # deploy); the index must not ask it either, for C's own scope.
    base = world.commit({})
    first = event(90, "ops:e", ("push",), applies_to=AppliesTo(since=base))
    moved = event(91, "ops:e", ("deploy",), follows=(first.id,))
    tip = world.commit(files_of(first), parent=base)
    main = world.commit(files_of(first, moved), parent=tip)
    git(world.repo.path, "update-ref", "refs/heads/shallow-c", tip)
    git(world.repo.path, "update-ref", "refs/heads/shallow-p", main)
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", "--no-single-branch",
        f"file://{world.repo.path}", str(clone))  # fmt: skip
    assert git(clone, "rev-parse", "--is-shallow-repository") == "true"
    with GitRepo.open(clone) as repo:
        revs = (Revision("C", tip), Revision("main", main, protected=True))
        request = Request(tip, Context("push", "refs/heads/main"), revs)
        full = decide(repo, request, use_index=False)
        assert decide(repo, request, use_index=True) == full
    assert full.exit_code == 0  # type: ignore[attr-defined]


def test_problems_keep_the_order_git_lists_their_files_in(world: World) -> None:
    # "a-b" sorts before "a/" in git's byte order, after "a" in key order
    one, two = event(92, "ops:a", ("push",)), event(93, "ops:a-b", ("push",))
    edited = {path_of(e): event_to_toml(replace(e, title="edited")) for e in (one, two)}
    tip = world.commit(files_of(one, two))
    main = world.commit(edited)
    with GitRepo.open(world.repo.path) as repo:
        revs = (Revision("C", tip), Revision("main", main, protected=True))
        request = Request(tip, Context("push", "refs/heads/main"), revs)
        full = decide(repo, request, use_index=False)
        assert len(full.errors) == 2  # type: ignore[attr-defined]
        assert decide(repo, request, use_index=True) == full


@pytest.mark.parametrize("char", ["\n", "\r", "\x85", "\u2028"])
def test_a_file_name_with_a_line_break_is_a_bad_name_not_a_crash(world: World, char: str) -> None:
    live = event(94, "ops:z", ("push",))
    files = {**files_of(live), f"ledger/ops/z/notes{char}draft.toml": b"x = 1\n"}
    tip = world.commit(files)
    with GitRepo.open(world.repo.path) as repo:
        for protected in (False, True):
            ledgerindex._loaded.clear()
            revs = (Revision("C", tip), Revision("main", tip, protected=protected))
            for trigger in ("push", "deploy"):
                request = Request(tip, Context(trigger, "refs/heads/main"), revs)
                assert decide(repo, request, use_index=True) == decide(
                    repo, request, use_index=False
                )


def test_a_listing_moved_to_another_row_is_not_believed(world: World) -> None:
    # two entities' lines of the same length swapped: offsets and checksums still hold
    held, other = event(95, "ops:a", ("push",)), event(96, "ops:b", ("deploy",))
    tip = world.commit(files_of(held, other))
    revs = (Revision("C", tip), Revision("main", tip, protected=True))
    request = Request(tip, Context("push", "refs/heads/main"), revs)
    with GitRepo.open(world.repo.path) as repo:
        full = decide(repo, request, use_index=False)
        assert decide(repo, request, use_index=True) == full
    tree = git(world.repo.path, "rev-parse", f"{tip}:ledger")
    (path,) = [p for p in index_files(world) if p.name.startswith(tree)]
    header, sums, parts, files = split_index(path.read_bytes())
    offsets = json.loads(parts[3])
    lines = [files[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]
    assert len(lines) == 2 and len(lines[0]) == len(lines[1])
    path.write_bytes(join_index(header, sums, parts, lines[1] + lines[0]))
    ledgerindex._loaded.clear()
    with GitRepo.open(world.repo.path) as repo:
        assert decide(repo, request, use_index=True) == full
    assert full.exit_code == 1  # type: ignore[attr-defined]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["100644", "120000"]),
            st.sampled_from(["blob", "tree"]),
            st.text(alphabet='0af"\\\x7f\n', min_size=1, max_size=4),
            st.text(max_size=8),
        ),
        max_size=3,
    )
)
def test_a_listing_is_written_as_json_writes_it(entries: list[tuple[str, str, str, str]]) -> None:
    listing = [TreeEntry(*entry) for entry in entries]
    assert ledgerindex._listing_json(listing) == ledgerindex._json([list(e) for e in listing])


def test_a_clean_trees_rows_are_the_rows_of_the_full_read(world: World) -> None:
    # every kind of file a clean tree may hold, each in an entity's folder
    later = event(97, LIVE.entity_key, ("push",), follows=(LIVE.id,))
    broken = event(98, "ops:broken", ("push",))
    linked = event(99, "ops:linked", ("push",))
    files = {
        **files_of(DEPLOY[0], LIVE, later, linked),
        path_of(broken): event_to_toml(broken).replace(b'status = "', b'status = "x', 1),
        f"ledger/ops/named/{gid(100)}.txt": event_to_toml(DEPLOY[1]),  # no event id
    }
    commit = world.commit(files, modes={path_of(linked): "120000"})
    with GitRepo.open(world.repo.path) as repo:
        ledger_module._parsed.clear()
        built = ledgerindex.build_index(repo, commit, "ledger")
        listings, clean = ledgerindex._listings(repo.ls_folder(commit, "ledger"), "ledger")
        revision = Revision("index", commit, protected=True)
        full = ledgerindex._full_read(repo, revision, "ledger", listings)
    assert clean and built.clean
    assert columns(built) == columns(full)
    events = dict(zip(built.keys, built.details.event_ids, strict=True))
    assert events[LIVE.entity_key] == [LIVE.id, later.id]
    # a file that is no valid event, a link, a name that is no id: no event counts
    assert events["ops:broken"] == events["ops:linked"] == events["ops:named"] == []
