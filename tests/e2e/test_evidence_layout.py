"""The evidence ref's tree holds only what failgate writes, each name once: real ssh-keygen
keys, a real bare remote with the real pre-receive hook, and trees written raw.

A line once in can never be dropped, so an entry the server lets in stays for good. Two
entries of one name passed the append-only check (a listing keeps the last of them) and
then broke every lookup, which reads trees through the parser that refuses them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from failgate_hooks.core.evidence import evidence_path, parse_payload, split_line
from failgate_hooks.git.evidence import EVIDENCE_REF
from tests.conftest import Repo
from tests.e2e.test_evidence import World, attest, the_line, world
from tests.e2e.test_pre_receive import push
from tests.test_trees import raw_tree
from tests.worlds import fix_budget, remote_ref

FILE, FOLDER = b"100644", b"40000"


@dataclasses.dataclass
class Landed:
    """The server's evidence after one genuine statement: its commit and the file's parts."""

    tip: str
    version: bytes
    fanout: bytes
    name: bytes
    blob: str


def landed(w: World) -> Landed:
    fix_budget(w.repo)
    attest(w, "--key", str(w.key))
    assert push(w.repo, EVIDENCE_REF).returncode == 0
    path = evidence_path(parse_payload(split_line(the_line(w))[0]).content)
    tip = w.repo.git("rev-parse", EVIDENCE_REF)
    version, fanout, name = (part.encode() for part in path.split("/"))
    return Landed(tip, version, fanout, name, w.repo.git("rev-parse", f"{tip}:{path}"))


def on_top(repo: Repo, tip: str, root: str) -> str:
    """A commit of tree `root` after the evidence tip: the push is a fast-forward."""
    return repo.git("commit-tree", root, "-p", tip, "-m", "failgate: 0 statement(s)")


def refused_and_unmoved(w: World, commit: str, said: str) -> None:
    before = remote_ref(w.remote, EVIDENCE_REF)
    refused = push(w.repo, f"{commit}:{EVIDENCE_REF}")
    assert refused.returncode != 0, refused.stderr
    assert "Traceback" not in refused.stderr, refused.stderr
    assert said in refused.stderr, refused.stderr
    assert remote_ref(w.remote, EVIDENCE_REF) == before


def test_two_files_of_one_name_cannot_hide_a_line_the_lookups_need(tmp_path: Path) -> None:
    """The finding: an empty file, then the statement's, under the statement's name."""
    w = world(tmp_path)
    e = landed(w)
    empty = w.repo.git("hash-object", "-w", "--stdin", input="")
    leaf = raw_tree(w.repo, (FILE, e.name, empty), (FILE, e.name, e.blob))
    fanout = raw_tree(w.repo, (FOLDER, e.fanout, leaf))
    root = raw_tree(w.repo, (FOLDER, e.version, fanout))
    refused_and_unmoved(w, on_top(w.repo, e.tip, root), "holds two entries named")


def test_two_folders_of_one_name_at_the_top_are_refused(tmp_path: Path) -> None:
    """At the top every lookup passes through the name: all of them would fail."""
    w = world(tmp_path)
    e = landed(w)
    held = w.repo.git("rev-parse", f"{e.tip}:{e.version.decode()}")
    empty = raw_tree(w.repo)
    root = raw_tree(w.repo, (FOLDER, e.version, empty), (FOLDER, e.version, held))
    refused_and_unmoved(w, on_top(w.repo, e.tip, root), "holds two entries named")


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("link", "puts a symbolic link here"),
        ("submodule", "puts a submodule here"),
        ("executable", "puts an executable file here"),
        ("folder", "puts a folder where no evidence folder belongs"),
        ("stray", "puts a file no content key names"),
    ],
)
def test_an_entry_the_evidence_layout_has_no_place_for_is_refused(
    tmp_path: Path, kind: str, said: str
) -> None:
    """Each beside the statement's file, with the statement's line in it where it holds
    lines: nothing is dropped and the line verifies, so only the layout refuses it."""
    w = world(tmp_path)
    e = landed(w)
    other = ("f" * len(e.name)).encode()  # another evidence file's name, sorted after
    kept = (FILE, e.name, e.blob)
    leaf = {
        "link": (b"120000", other, e.blob),
        "submodule": (b"160000", other, w.repo.head()),
        "executable": (b"100755", other, e.blob),
        "folder": (FOLDER, other, raw_tree(w.repo, (FILE, b"x", e.blob))),
    }
    entries = [kept, leaf[kind]] if kind in leaf else [kept]
    fanout = raw_tree(w.repo, (FOLDER, e.fanout, raw_tree(w.repo, *entries)))
    top = [(FOLDER, e.version, fanout)]
    if kind == "stray":
        top.insert(0, (FILE, b"README", e.blob))
    refused_and_unmoved(w, on_top(w.repo, e.tip, raw_tree(w.repo, *top)), said)


def test_an_entry_the_server_held_before_the_rule_does_not_refuse_later_updates(
    tmp_path: Path,
) -> None:
    """A stray file that got in before (here fetched by the server itself, which runs no
    hook): the layout rule judges what an update changes, and this one changes nothing."""
    w = world(tmp_path)
    e = landed(w)
    fanout = w.repo.git("rev-parse", f"{e.tip}:{e.version.decode()}")
    root = raw_tree(w.repo, (FILE, b"README", e.blob), (FOLDER, e.version, fanout))
    held = on_top(w.repo, e.tip, root)
    w.repo.git("update-ref", EVIDENCE_REF, held)
    Repo(w.remote).git("fetch", str(w.repo.path), f"{EVIDENCE_REF}:{EVIDENCE_REF}")
    again = on_top(w.repo, held, root)
    accepted = push(w.repo, f"{again}:{EVIDENCE_REF}")
    assert accepted.returncode == 0, accepted.stderr
    assert remote_ref(w.remote, EVIDENCE_REF) == again


def test_a_malformed_tree_the_server_already_holds_refuses_with_the_repair(tmp_path: Path) -> None:
    """Got in before the rule: every lookup fails on it, and so does every update, saying
    what an administrator does about it."""
    w = world(tmp_path)
    e = landed(w)
    held = w.repo.git("rev-parse", f"{e.tip}:{e.version.decode()}")
    root = raw_tree(w.repo, (FOLDER, e.version, raw_tree(w.repo)), (FOLDER, e.version, held))
    malformed = on_top(w.repo, e.tip, root)
    Repo(w.remote).git("fetch", str(w.repo.path), f"{malformed}:{EVIDENCE_REF}")
    again = on_top(w.repo, malformed, w.repo.git("rev-parse", f"{e.tip}^{{tree}}"))
    refused_and_unmoved(w, again, "the evidence this update builds on is malformed")
