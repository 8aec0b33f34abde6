"""The keys a pass is cached under: C's content without the ledger, and a gate's inputs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from failgate_hooks.core.events import Verification, Workdir
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify import keys as keys_module
from failgate_hooks.verify.keys import content_key, input_key
from failgate_hooks.verify.subject import gate_run, run_content_key
from tests.conftest import Repo, make_repo

# --------------------------------------------------------------------------- content key


def _content_key(repo: Repo, commit: str, ledger_dir: str = "ledger") -> str:
    with GitRepo.open(repo.path) as grepo:
        return content_key(grepo, commit, ledger_dir)


def test_content_key_ignores_only_the_ledger(any_repo: Repo) -> None:
    repo = any_repo
    repo.write("src/app.py", "print(1)\n")
    base = repo.commit("code")
    key = _content_key(repo, base)
    assert key.startswith("ck2:")
    repo.write("ledger/deploy/gas/20261129T230500Z-7f3a9c1e.toml", "schema = 1\n")
    first_event = repo.commit("first ledger event")
    repo.write("ledger/deploy/gas/20261130T230500Z-00000000.toml", "schema = 1\n")
    second_event = repo.commit("second ledger event")
    assert _content_key(repo, first_event) == key
    assert _content_key(repo, second_event) == key
    repo.write("src/app.py", "print(2)\n")
    changed = repo.commit("code change")
    assert _content_key(repo, changed) != key
    repo.git("rm", "-q", "-r", "ledger")
    repo.write("src/app.py", "print(1)\n")
    restored = repo.commit("ledger gone, code back")
    assert _content_key(repo, restored) == key
    os.chmod(repo.path / "README", 0o755)  # at the root, where only the entry's mode says it
    assert _content_key(repo, repo.commit("mode change")) != key
    os.chmod(repo.path / "README", 0o644)
    assert _content_key(repo, repo.commit("mode back")) == key
    repo.write("ledgers.txt", "a sibling of the ledger is content\n")
    assert _content_key(repo, repo.commit("sibling")) != key


def test_content_key_with_a_nested_ledger(any_repo: Repo) -> None:
    repo = any_repo
    repo.write("a/other.txt", "content\n")
    base = repo.commit("code")
    key = _content_key(repo, base, "a/b/ledger")
    repo.write("a/b/ledger/x/20261129T230500Z-7f3a9c1e.toml", "schema = 1\n")
    event = repo.commit("first event in new folders")
    assert _content_key(repo, event, "a/b/ledger") == key
    assert _content_key(repo, event, "ledger") != key  # under the default name it is content
    repo.write("a/b/notes.txt", "beside the ledger\n")
    assert _content_key(repo, repo.commit("sibling in a/b"), "a/b/ledger") != key


def test_content_key_differs_between_object_formats(tmp_path: Path) -> None:
    sha1 = make_repo(tmp_path / "one", "sha1")
    sha256 = make_repo(tmp_path / "two", "sha256")
    assert _content_key(sha1, sha1.head()) != _content_key(sha256, sha256.head())


def test_content_key_reads_one_tree_per_level_of_the_ledger_path(repo: Repo) -> None:
    for i in range(30):
        repo.write(f"dir{i}/sub/file.txt", f"{i}\n")
    repo.write("a/b/ledger/x.toml", "schema = 1\n")
    commit = repo.commit("many folders")
    with GitRepo.open(repo.path) as grepo:
        reads: list[str] = []
        original = grepo.read_object

        def counting(oid: str) -> tuple[str, bytes] | None:
            reads.append(oid)
            return original(oid)

        grepo.read_object = counting  # type: ignore[method-assign]
        content_key(grepo, commit, "a/b/ledger")
    # the commit, then the root, a and a/b
    assert len(reads) == 1 + 3


def test_nothing_in_the_ledger_folder_is_content(repo: Repo) -> None:
    """The verifier is given the commit without its ledger folder (`verified_tree`), so
    what lies there, event or not, changes nothing it can read."""
    repo.write("ledger/k/20260101T000000Z-00000000.toml", "schema = 1\n")
    base = repo.commit("an event")

    def key(commit: str) -> str:
        with GitRepo.open(repo.path) as grepo:
            return content_key(grepo, commit, "ledger")

    repo.write("ledger/k/20260102T000000Z-00000001.toml", "schema = 1\n")
    assert key(repo.commit("another event")) == key(base)
    repo.write("ledger/.budget.json", "{}\n")
    assert key(repo.commit("a dot-file in the ledger")) == key(base)
    repo.write("budget.json", "{}\n")
    assert key(repo.commit("the same file beside it")) != key(base)


@pytest.mark.parametrize("ledger", ["ledger", "a/b/ledger", "a/ledger", "missing/ledger"])
def test_the_verified_tree_is_the_tree_git_writes_without_the_ledger(
    any_repo: Repo, ledger: str
) -> None:
    """Its id and the objects made for it are what git itself makes of the commit with
    the ledger folder removed: a checkout can read the tree the key names."""
    repo = any_repo
    for path in ("ledger/k/e.toml", "a/b/ledger/k/e.toml", "a/ledger/e.toml", "a/b/c.txt"):
        repo.write(path, f"{path}\n")
    (repo.path / "a" / "link").symlink_to("b/c.txt")
    os.chmod(repo.path / "a" / "b" / "c.txt", 0o755)
    commit = repo.commit("ledgers at three depths")
    repo.git("rm", "-q", "-r", "--cached", "--ignore-unmatch", ledger)
    expected = repo.git("write-tree").strip()
    repo.git("reset", "-q")
    with GitRepo.open(repo.path) as grepo:
        verified = keys_module.verified_tree(grepo, commit, ledger)
    assert verified.tree == expected
    for content in verified.made:  # git takes each as a well-formed tree
        subprocess.run(
            ["git", "hash-object", "-t", "tree", "--stdin"], input=content, cwd=repo.path,
            check=True, capture_output=True,
        )  # fmt: skip
    assert (ledger == "missing/ledger") == (not verified.made)


def test_a_commit_of_the_ledger_alone_gives_the_empty_tree(repo: Repo) -> None:
    repo.git("rm", "-q", "-r", ".")
    repo.write("ledger/k/e.toml", "schema = 1\n")
    repo.git("add", "ledger")
    commit = repo.commit("the ledger and nothing else")
    empty = repo.git("hash-object", "-t", "tree", "/dev/null").strip()
    with GitRepo.open(repo.path) as grepo:
        assert keys_module.verified_tree(grepo, commit, "ledger").tree == empty


def test_input_key_follows_the_matching_files_only(any_repo: Repo) -> None:
    repo = any_repo
    repo.write("deploy/main.json", "{}\n")
    repo.write("src/budget/x.py", "x = 1\n")
    base = repo.commit("inputs")
    patterns = ("deploy/*.json", "src/budget/**")

    def key(commit: str) -> str:
        with GitRepo.open(repo.path) as grepo:
            return input_key(grepo, commit, patterns)

    assert key(base).startswith("ik1:")
    repo.write("README", "unrelated\n")
    assert key(repo.commit("outside")) == key(base)
    repo.write("deploy/sub/deep.json", "{}\n")  # `*` stays within one segment
    assert key(repo.commit("not matched")) == key(base)
    repo.write("src/budget/x.py", "x = 2\n")
    assert key(repo.commit("inside")) != key(base)


INPUT_FILES = {
    "a/x.py": "1", "a/b/y.py": "2", "a/b/c/z.txt": "3", "a/c/w.py": "4", "a*b": "5",
    "deploy/main.json": "6", "deploy/sub/deep.json": "7", "README": "8", "src/m.py": "9",
}  # fmt: skip
PATTERN_SETS = [
    ("a/*.py",),
    ("a/b/**",),
    ("a/**/*.py", "deploy/*.json"),
    ("a/[bc]/*",),
    ("**/*.py",),  # the root: keyed by nothing, listed whole
    ("a\\*b",),
    ("deploy/main.json", "src/**"),
    ("nowhere/**",),
    ("a/b/**", "a/b/c/*"),  # overlapping: each file once
]


def commit_inputs(repo: Repo) -> str:
    for path, text in INPUT_FILES.items():
        repo.write(path, text + "\n")
    return repo.commit("inputs")


@pytest.mark.parametrize("patterns", PATTERN_SETS, ids=lambda p: ",".join(p))
def test_input_key_by_folders_equals_the_key_of_the_whole_tree(
    repo: Repo, patterns: tuple[str, ...]
) -> None:
    commit = commit_inputs(repo)
    with GitRepo.open(repo.path) as grepo:
        whole = keys_module._input_key(grepo.sorted_files(commit)[0], patterns)
        assert input_key(grepo, commit, patterns) == whole
        keys_module.InputKeys._open.clear()  # as the next process: read back from the file
        assert input_key(grepo, commit, patterns) == whole


def test_an_input_key_is_kept_by_folder_tree_ids(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = commit_inputs(repo)
    repo.write("README", "elsewhere\n")
    later = repo.commit("outside the inputs")
    patterns = ("a/b/**", "deploy/*.json")
    with GitRepo.open(repo.path) as grepo:
        first = input_key(grepo, base, patterns)
    keys_module.InputKeys._open.clear()
    with GitRepo.open(repo.path) as grepo:

        def never(*args: object) -> None:
            raise AssertionError("listed a folder whose tree id has a key")

        monkeypatch.setattr(grepo, "ls_folder", never)
        monkeypatch.setattr(grepo, "sorted_files", never)
        assert input_key(grepo, later, patterns) == first  # same folder trees
    # a damaged file is a miss, never a key
    keys = repo.path / ".git" / "failgate" / "inputs.json"
    keys.write_text(keys.read_text().replace("ik1:", "ik1:0"))
    keys_module.InputKeys._open.clear()
    with GitRepo.open(repo.path) as grepo:
        assert input_key(grepo, later, patterns) == first


def test_an_input_key_kept_under_other_matching_rules_is_not_used(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit = commit_inputs(repo)
    patterns = ("a/b/**",)
    with GitRepo.open(repo.path) as grepo:
        input_key(grepo, commit, patterns)
    keys_module.InputKeys._open.clear()
    monkeypatch.setattr(keys_module, "_matching_rules", lambda: "another-wildmatch")
    listed: list[str] = []
    with GitRepo.open(repo.path) as grepo:
        original = grepo.ls_folder

        def counting(commit: str, path: str) -> list[Any]:
            listed.append(path)
            return original(commit, path)

        monkeypatch.setattr(grepo, "ls_folder", counting)
        input_key(grepo, commit, patterns)
    assert listed == ["a/b"]  # worked out again, not taken from the file


def test_a_link_among_the_inputs_or_on_their_way_keys_by_all_content(any_repo: Repo) -> None:
    """The verifier reads what a link points at, which no matched entry names: such a
    gate is keyed by the content key, so a change behind the link is a change."""
    repo = any_repo
    repo.write("data/budget.json", "{}\n")
    repo.write("deploy/main.json", "{}\n")
    base = repo.commit("inputs")
    (repo.path / "deploy" / "budget.json").symlink_to("../data/budget.json")
    (repo.path / "conf").symlink_to("data")
    linked = repo.commit("a file link among the inputs, a folder link on their way")
    with GitRepo.open(repo.path) as grepo:
        assert input_key(grepo, base, ("deploy/*.json",)) is not None
        assert input_key(grepo, linked, ("deploy/*.json",)) is None
        assert input_key(grepo, linked, ("conf/*.json",)) is None
        whole = content_key(grepo, linked, "ledger")
        assert run_content_key(grepo, linked, ("conf/*.json",), "ledger") == whole
        assert run_content_key(grepo, base, ("deploy/*.json",), "ledger") != content_key(
            grepo, base, "ledger"
        )


@pytest.mark.parametrize(
    ("link", "target", "pattern"),
    [
        ("deploy", "store/private", "*/budget.json"),
        ("deploy/eu", "../store/private", "deploy/*/budget.json"),
    ],
)
def test_a_folder_link_a_glob_walks_through_keys_by_all_content(
    any_repo: Repo, link: str, target: str, pattern: str
) -> None:
    """A glob's folder part can match a link to a folder: the verifier reads `budget.json`
    behind it, at a path the glob does not match, so no input entry names it."""
    repo = any_repo
    repo.write("store/private/budget.json", "{}\n")
    (repo.path / link).parent.mkdir(parents=True, exist_ok=True)
    (repo.path / link).symlink_to(target)
    first = repo.commit("a budget behind a folder link")
    repo.write("store/private/budget.json", '{"broken": true}\n')
    second = repo.commit("the budget behind the link changed")
    with GitRepo.open(repo.path) as grepo:
        keys = [run_content_key(grepo, c, (pattern,), "ledger") for c in (first, second)]
    assert keys[0] != keys[1]


def test_a_verifier_run_in_the_work_tree_is_keyed_by_the_whole_tree(repo: Repo) -> None:
    """workdir = "inplace" runs where the ledger is: its pass cannot stand for a commit
    that differs from its own only there."""
    base = repo.commit("code")
    repo.write("ledger/k/20260101T000000Z-00000000.toml", "schema = 1\n")
    event = repo.commit("an event")

    def run_key(commit: str, workdir: Workdir) -> str:
        verification = Verification(command=("true",), workdir=workdir)
        with GitRepo.open(repo.path) as grepo:
            run = gate_run(
                grepo, entity_key="k", verification=verification, commit=commit,
                pinned_from=None, ledger_dir="ledger", environment=None,
            )  # fmt: skip
            return run.content

    assert run_key(base, Workdir.CHECKOUT) == run_key(event, Workdir.CHECKOUT)
    assert run_key(base, Workdir.INPLACE) != run_key(event, Workdir.INPLACE)


def test_inputs_past_the_matching_budget_key_by_all_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many long globs beside very long file names: past the work one key may take, the
    verifier is keyed by all content, never by a narrower key than it reads."""
    from failgate_hooks.core import wildmatch
    from tests.worlds import long_file_names

    repo, commit = long_file_names(tmp_path / "repo")
    globs = ("deep/*" + "?" * 60 + "*.json",)
    with GitRepo.open(repo.path) as opened:
        assert input_key(opened, commit, globs) is not None
        monkeypatch.setattr(keys_module.InputKeys, "of", lambda repo: keys_module.InputKeys(None))
        monkeypatch.setattr(wildmatch, "MATCH_WORK", len(globs[0]) * 210 * 5)
        assert input_key(opened, commit, globs) is None
