"""An unpinned path that Python would import in place of a pinned module.

Pinning a module is worth nothing if the commit can put something beside it
that Python finds first under the same name: a package folder (`helper/` beats
`helper.py`), an extension module (`helper.*.so` beats both), a compiled file
(an unchecked-hash `__pycache__/helper.*.pyc` is used without reading the
source). Nor can it add, where Python looks first, a module the reviewed
revision did not hold there: Python looks in a script's own folder first, so a
`checks/json.py` is what the pinned `checks/check.py` loads for `import json`,
a `checks/yaml.py` for `import yaml`, however the command starts it
(`_first_folder_shadow` says which folders and names); nor, where the project
under test comes first (the root under `python3 -m pytest`), a module named like
an installed package (a root `pluggy.py` is pytest's plugin manager), nor
package metadata in a folder on sys.path (a root `evil.dist-info` declaring a
pytest11 plugin is loaded as pytest starts), nor, under pytest, settings in a
configuration file of its other than those reviewed (pytestconfig.py says which).
Judged on C's tree with the pinned files laid over it, which is what the checkout holds, so a pass
cached for C cannot skip the judgement either.
"""

from __future__ import annotations

import functools
import posixpath
import re
import shlex
import sys
from collections.abc import Callable, Iterator, Sequence
from importlib.machinery import SOURCE_SUFFIXES
from typing import NamedTuple

from failgate_hooks.core.events import is_safe_relative_path
from failgate_hooks.core.ids import short_id
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.git.trees import TreeEntry
from failgate_hooks.verify.installed import PYTEST_NAME, Installed, installed_names, module_stem
from failgate_hooks.verify.metadata import changed_metadata
from failgate_hooks.verify.pins import Pin, pinned_folders, written_over
from failgate_hooks.verify.programs import PYTHON_NAME
from failgate_hooks.verify.pytestconfig import pytest_config_change

_SYMLINK = "120000"
_CACHE = "__pycache__"
_STANDARD = frozenset(sys.stdlib_module_names)
_TEST_NAME = re.compile(r"test_|.*_test\Z")  # what pytest collects, not what anyone imports
_PORTION_DEPTH = 3  # how far below a folder a module makes it a namespace portion
_WRAPPER_BYTES = 65536  # of a pinned Makefile or shell script, read for what it starts
# Judged where the project's own folder comes first: the names of the standard library
# and of the installed packages. No module can be named so (it is not an identifier).
_FIRST_NAMES = "<standard and installed>"


def shadowing(
    repo: GitRepo,
    commit: str,
    pins: Sequence[Pin],
    argv: Sequence[str] = (),
    pinned_from: str | None = None,
) -> str | None:
    """Why an unpinned path in `commit` shadows a pinned module (or, under pytest, gives
    it settings other than the reviewed ones), or None when none does.

    `argv` is the verifier's command, read for how Python is started. `pinned_from` is
    the revision the pins come from (None: `commit`): what it holds is what was
    reviewed."""
    for pin in pins:
        folder, _, filename = pin.path.rpartition("/")
        stem = module_stem(filename)
        # In a folder pinned whole nothing unpinned is left to shadow it.
        if stem is None or pin.folder is not None:
            continue
        for path in _rivals(repo, commit, folder, stem):
            # A pinned path is written over whatever C holds there; a pinned folder
            # replaces C's copy of it.
            if written_over(pins, path):
                continue
            name = folder.rpartition("/")[2] if stem == "__init__" else stem
            where = f"{folder}/" if folder else "the checkout's root folder"
            return (
                f"{path} is not pinned and shadows {pin.path} (Python would import it "
                f"for `{name or stem}`): pin it too in the verifier's files, pin {where} "
                "whole, or remove it"
            )
    # What the pins come from was reviewed (with nothing protected, C itself: then no
    # module of C stands in for one reviewed, as none was).
    reviewed = pinned_from or commit
    words = command_words(repo, argv, pins)
    first = _first_folder_shadow(repo, commit, pins, words, reviewed)
    if first is None and runs_pytest(words):  # its configuration is the reviewed one too
        return pytest_config_change(repo, commit, reviewed, pins, words)
    return first


def runs_pytest(words: Sequence[str]) -> bool:
    """Whether a word of the command (`command_words`) is pytest: its program or `-m`'s."""
    return any(PYTEST_NAME.match(w.rpartition("/")[2]) for w in words)


def _first_folder_shadow(
    repo: GitRepo, commit: str, pins: Sequence[Pin], words: Sequence[str], reviewed: str
) -> str | None:
    """Why an unpinned module the `reviewed` revision lacked would be imported ahead of
    what the pinned files meant to import; None when there is none.

    What the reviewed revision held where it is was reviewed, and the commit may change
    it as it changes every unpinned file; a module it adds may take an import from
    elsewhere, whoever starts Python (the command, `make`, a shell script). Judged:
    - in the folder of every pinned Python file, and of a pinned file the command runs
      with a python-named program: a wrapper may run it by a path no reading of the
      command recognises (`cd checks && python3 check.py`), and Python puts its folder
      first on sys.path for every import: any name (`simplejson.py`, `yaml.py`); so
      too in the folder pytest puts first for a pinned test, but for the tests beside
      it (`test_*`, `*_test`);
    - on the way from the root to a module Python imports (a `-m` module, a pinned
      module no command runs by its path, a pinned test), the packages it is reached
      through: `checks.py` or `checks/__init__.py` for checks/gate.py; for pytest, each
      `conftest.py` on the way too;
    - in the root when `-m` or `-c` puts it first, and in each `PYTHONPATH` folder named,
      the names of the standard library and of the installed packages only (`pluggy`,
      `_pytest`: installed.py says whose): those hold the project under test, the
      commit's by design, and a new package of its own there is no shadow.
    In each of those folders that is on sys.path, package metadata that is not what the
    reviewed revision held is refused too (metadata.py)."""
    pinned = {pin.path for pin in pins}
    folders_pinned = pinned_folders(pins)
    # The site folders are read only when a folder where the project comes first is judged.
    installed = functools.cache(lambda: installed_names(words))
    names: dict[str, set[str] | None] = {}  # folder -> the names judged there (None: any)
    on_path: set[str] = set()  # the folders of those on sys.path
    modules = _modules(words)
    ways = [[part for part in m.split(".") if part] for m in modules]
    pytest = runs_pytest(words)
    for pin in pins:
        if pin.folder is not None:
            continue
        folder, _, _ = pin.path.rpartition("/")
        named = _runs_as_script(repo, pin, words)
        if named or _python_file(repo, pin):
            names[folder] = None
            on_path.add(folder)
        if not named and (pin.path.endswith(tuple(SOURCE_SUFFIXES)) or pytest):
            ways.append(folder.split("/") if folder else [])
        if pytest:  # pytest runs every conftest.py on the way, and puts a folder first
            parts = folder.split("/") if folder else []
            for depth in range(len(parts) + 1):
                _judge(names, "/".join(parts[:depth]), "conftest")
            first = _pytest_first(repo, commit, parts)
            if first:
                names.setdefault(first, None)
            else:
                _judge(names, "", _FIRST_NAMES)
            on_path.add(first)
    for parts in ways:
        for depth, part in enumerate(parts):  # the packages on the way
            _judge(names, "/".join(parts[:depth]), part)
            _judge(names, "/".join(parts[: depth + 1]), "__init__")
    if modules or _runs_code(words):  # the working folder, the root, first on sys.path
        _judge(names, "", _FIRST_NAMES)
        on_path.add("")
    for folder in _pythonpath(words):  # on sys.path as Python starts: its site hooks too
        _judge(names, folder, _FIRST_NAMES, "sitecustomize", "usercustomize")
        on_path.add(folder)
    since = short_id(reviewed)
    for folder, judged in names.items():
        if any(folder == f or folder.startswith(f"{f}/") for f in folders_pinned):
            continue  # a folder pinned whole is the reviewed one
        where = f"{folder}/" if folder else "the checkout's root folder"
        offered: dict[bool, set[str]] = {True: set(), False: set()}  # portion or not: reviewed
        for _, name, portion in _importable(repo, reviewed, folder):
            offered[True].add(name)
            if not portion:  # a module of a name beats a portion of it (checks.py, checks/)
                offered[False].add(name)
        for path, name, portion in _importable(repo, commit, folder):
            if path in pinned or name in offered[portion]:
                continue
            if any(p.startswith(f"{path}/") for p in pinned):
                continue  # a folder on a pinned path's way: the pin is written into it
            if judged is not None and not _judged(name, judged, installed):
                continue
            if judged is None and (name == "__init__" or _TEST_NAME.match(name)):
                continue  # a folder's own marker; a test beside a test
            if portion and (
                name in _STANDARD or (judged is not None and name in installed().regular)
            ):
                continue  # a regular module of its name, later on sys.path, beats a portion
            return (
                f"{path} is not pinned, and {since} had no module `{name}` in {where}: "
                "Python would import it there ahead of what the pinned verifier meant to "
                f"import; pin it too in the verifier's files, pin {where} whole, or move "
                "it to a folder of its own"
            )
        metadata = None
        if folder in on_path:
            held, now = _entries(repo, reviewed, folder), _entries(repo, commit, folder)
            metadata = changed_metadata(repo, held, now, folder, pinned)
        if metadata is not None:
            path, was_held = metadata
            what = (
                "held other content there" if was_held else "had no package metadata of that name"
            )
            return (
                f"{path} is not pinned, and {since} {what} "
                f"in {where}: importlib.metadata reads it from every sys.path folder, so its "
                "entry points (a pytest11 plugin) would run in place of what was reviewed; "
                f"pin it too in the verifier's files, pin {where} whole, or remove it"
            )
    return None


def _judged(name: str, judged: set[str], installed: Callable[[], Installed]) -> bool:
    """Whether `name` is among the `judged` names (`_FIRST_NAMES` standing for those of
    the standard library and the installed packages)."""
    if name in judged:
        return True
    return _FIRST_NAMES in judged and (name in _STANDARD or name in installed().names)


def _judge(names: dict[str, set[str] | None], folder: str, *judged: str) -> None:
    """Judge `judged` in `folder` too, unless every name there is judged already."""
    if folder not in names:
        names[folder] = set()
    found = names[folder]
    if found is not None:
        found.update(judged)


def command_words(repo: GitRepo, argv: Sequence[str], pins: Sequence[Pin]) -> list[str]:
    """The command's words, with those of each string in it that holds a space (`sh -c
    '…'`, `env -S '…'`) and of each pinned file that is no Python source (a Makefile, a
    shell script): what starts Python may be any of them."""
    texts = [arg for arg in argv if " " in arg]
    for pin in pins:
        if pin.folder is None and not pin.path.endswith(tuple(SOURCE_SUFFIXES)):
            texts.append(repo.read_blob(pin.oid)[:_WRAPPER_BYTES].decode("utf-8", "replace"))
    words = list(argv)
    for text in texts:
        for line in text.splitlines():
            try:
                words += shlex.split(line, comments=True)
            except ValueError:  # an unclosed quote: read it word by word
                words += line.split()
    return words


class UnpinnedPath(NamedTuple):
    """A repository path the command names and does not pin; `in_head` what HEAD holds
    there (`file`, `folder`), None when nothing: a commit may add it with any content."""

    path: str
    in_head: str | None


def unpinned_repo_files(
    repo: GitRepo, argv: Sequence[str], pins: Sequence[Pin], tracked: set[str]
) -> tuple[UnpinnedPath, ...]:
    """The repository paths the command names but does not pin, each once: its program
    too, the words of each string in it (`sh -c '…'`) and of each pinned wrapper, as
    shadowing reads them, and `./checks/check.py` as `checks/check.py`. A path HEAD does
    not hold is one too: a later commit may add it, and trust would not see it change."""
    pinned = {pin.path for pin in pins}
    # a folder is named to work in (`cd checks`) as much as to run: one holding a pin is
    # not warned of, nor a name HEAD lacks that a pinned script has (`cd checks && python3
    # check.py`); what a look-alike of either runs is shown escaped
    pinned |= {parent for path in pinned for parent in _parents(path)}
    names = {posixpath.basename(path) for path in pinned}
    folders = {parent for path in tracked for parent in _parents(path)}
    pinned_whole = pinned_folders(pins)
    found: dict[str, UnpinnedPath] = {}
    for word in command_words(repo, argv, pins):
        path = _repository_path(word, tracked, folders)
        if path is None or path in pinned or path in found:
            continue
        where = "file" if path in tracked else "folder" if path in folders else None
        if any(path.startswith(folder + "/") for folder in pinned_whole) or (
            where is None and path in names
        ):
            continue
        found[path] = UnpinnedPath(path, where)
    return tuple(found.values())


def unpinned_files(
    repo: GitRepo, argv: Sequence[str], pins: Sequence[Pin], tracked: set[str]
) -> list[str]:
    """Of those, the files `tracked` holds: what a commit without one runs without."""
    return [u.path for u in unpinned_repo_files(repo, argv, pins, tracked) if u.in_head == "file"]


def absent_files(
    repo: GitRepo, argv: Sequence[str], pins: Sequence[Pin], tracked: set[str]
) -> list[str]:
    """Of those, the paths `tracked` holds neither as a file nor as a folder: what a
    checkout of that tree runs without (an uncommitted script, a typo)."""
    return [u.path for u in unpinned_repo_files(repo, argv, pins, tracked) if u.in_head is None]


# A word naming a file by its name alone: a script of Python or of the shell.
_SCRIPT = (*SOURCE_SUFFIXES, ".sh", ".bash")
# A word holding one of these is shell code, an option's value or a URL, not one path.
_NOT_A_PATH = re.compile(r"[\s$`<>|&;*?\[\]{}()~=!\"'\\]|://")


def _repository_path(word: str, tracked: set[str], folders: set[str]) -> str | None:
    """The repository path `word` names, normalised, or None when it names none: a path
    HEAD holds, else a relative path (`checks/check.py`, `./run-tests`, a pytest node's
    file) or a script's name (`check.py`), whether or not HEAD holds it."""
    path = posixpath.normpath(word.split("::", 1)[0]) if word else ""
    if path in tracked or path in folders:
        return path
    if word.startswith("-") or _NOT_A_PATH.search(word) or not is_safe_relative_path(path):
        return None
    return path if "/" in word or path.endswith(_SCRIPT) else None


def _parents(path: str) -> list[str]:
    """`a` and `a/b` for `a/b/c`."""
    parts = path.split("/")
    return ["/".join(parts[:n]) for n in range(1, len(parts))]


def _runs_as_script(repo: GitRepo, pin: Pin, words: Sequence[str]) -> bool:
    """Whether the command plainly runs pinned `pin` by its path: named after a
    python-named program (and its options), or named at all when it is a Python file."""
    return any(
        posixpath.normpath(word) == pin.path
        and (_python_before(words, at) or _python_shebang(repo, pin))
        for at, word in enumerate(words)
    )


def _python_file(repo: GitRepo, pin: Pin) -> bool:
    """Whether pinned `pin` is a Python source or starts with a `#!` line naming python:
    something Python may run as a script, its folder first on sys.path, however the
    command names it (`cd checks && python3 check.py`, a wrapper's `"$(dirname "$0")"`,
    `$PWD/…`). No reading of a command can follow every wrapper, so none is needed."""
    return pin.path.endswith(tuple(SOURCE_SUFFIXES)) or _python_shebang(repo, pin)


def _python_shebang(repo: GitRepo, pin: Pin) -> bool:
    """Whether pinned `pin` starts with a `#!` line naming python."""
    if not pin.oid:
        return False  # a path no revision holds (main lost it): no `#!` line to read
    head = repo.read_blob(pin.oid)[:128].split(b"\n", 1)[0]
    return head.startswith(b"#!") and b"python" in head


def _python_before(words: Sequence[str], at: int) -> bool:
    """Whether the word before `words[at]`, its options aside, is a python-named program."""
    at -= 1
    while at >= 0 and (words[at].startswith("-") or (at > 0 and words[at - 1] in ("-X", "-W"))):
        at -= 1
    return at >= 0 and bool(PYTHON_NAME.match(words[at].rpartition("/")[2]))


def _modules(words: Sequence[str]) -> list[str]:
    """Each module run with `-m` or `--module` (any program's: `coverage run -m`), with
    `-m runpy M`'s M: Python imports it from the working folder, the checkout's root."""
    found = []
    for at, word in enumerate(words):
        following = words[at + 1] if at + 1 < len(words) else ""
        if word == "--module":
            found.append(following)
        elif word.startswith("--module="):
            found.append(word.partition("=")[2])
        elif word.startswith("-") and not word.startswith("--") and "m" in word[1:]:
            given = word[word.index("m", 1) + 1 :] or following
            found.append(given)
            if given == "runpy" and at + 2 < len(words):
                found.append(words[at + 2])
    return [module for module in found if module and not module.startswith("-")]


def _runs_code(words: Sequence[str]) -> bool:
    """Whether a python-named program among `words` runs `-c` (the root first too)."""
    return any(
        word.startswith("-") and not word.startswith("--") and "c" in word[1:]
        and _python_before(words, at + 1)
        for at, word in enumerate(words)
    )  # fmt: skip


def _pytest_first(repo: GitRepo, commit: str, parts: Sequence[str]) -> str:
    """The folder pytest puts first on sys.path for a test in folder `parts`: the first
    one up without an `__init__.py` (`""`: the root)."""
    while parts:
        folder = "/".join(parts)
        if not any(name == "__init__" for _, name, _ in _importable(repo, commit, folder)):
            return folder
        parts = parts[:-1]
    return ""


def _pythonpath(words: Sequence[str]) -> list[str]:
    """The folders of the checkout that a `PYTHONPATH=…` among `words` puts on sys.path."""
    found = []
    for word in words:
        _, assigned, value = word.partition("PYTHONPATH=")
        if not assigned or not value:  # an empty one puts nothing there
            continue
        for entry in value.split(":"):
            folder = posixpath.normpath(entry or ".").strip("/")
            if not folder.startswith("..") and not entry.startswith("/"):
                found.append("" if folder == "." else folder)
    return found


def _importable(repo: GitRepo, commit: str, folder: str) -> Iterator[tuple[str, str, bool]]:
    """(path, module name, whether a namespace portion) of what Python could import from
    `folder` by a name (an identifier): a module of any suffix, a link, a package's
    `__init__`, or a folder without one that holds a module: a namespace portion, which
    extends an installed namespace package (`google`) and stands for a missing one,
    though a module of its name anywhere beats it."""
    entry = repo.tree_entry(commit, folder)
    if entry is None or entry.type != "tree":
        return
    prefix = f"{folder}/" if folder else ""
    for path, name, portion in _importable_in(repo, entry.oid):
        yield prefix + path, name, portion


@functools.lru_cache(maxsize=1024)
def _importable_in(repo: GitRepo, tree: str) -> tuple[tuple[str, str, bool], ...]:
    """`_importable` of one tree, by its id: asked for every gate of a run, in the pushed
    commit and the reviewed one, which share most folders."""
    found = []
    for entry in repo.tree_entries(tree):
        if entry.mode.lstrip("0") == _SYMLINK:  # Python follows it: it counts as is
            name: str | None = module_stem(entry.path) or entry.path
        elif entry.type == "tree":
            if not entry.path.isidentifier() or entry.path == _CACHE:
                continue  # no module name; compiled files Python finds by their sources
            inner = repo.tree_entries(entry.oid)
            inits = [e.path for e in inner if module_stem(e.path) == "__init__"]
            if inits:
                found.append((f"{entry.path}/{inits[0]}", entry.path, False))
            elif _holds_a_module(repo, inner, _PORTION_DEPTH):
                found.append((entry.path, entry.path, True))
            continue
        else:
            name = module_stem(entry.path)
        if name is not None and name.isidentifier():
            found.append((entry.path, name, False))
    return tuple(found)


def _holds_a_module(repo: GitRepo, entries: Sequence[TreeEntry], depth: int) -> bool:
    """Whether a module lies among `entries`, or in a folder of them, `depth` levels down."""
    if any(e.type != "tree" and module_stem(e.path) for e in entries):
        return True
    return depth > 0 and any(
        _holds_a_module(repo, repo.tree_entries(e.oid), depth - 1)
        for e in entries
        if e.type == "tree" and e.path.isidentifier()
    )


def _rivals(repo: GitRepo, commit: str, folder: str, stem: str) -> Iterator[str]:
    """Paths in `commit` that Python could import for `stem` from `folder`, pinned or not:
    a package folder's files, modules of any suffix, compiled files, and links to any."""
    prefix = f"{folder}/" if folder else ""
    for entry in _entries(repo, commit, folder):
        path = prefix + entry.path
        link = entry.mode.lstrip("0") == _SYMLINK  # Python follows it: it counts as is
        if entry.path == stem and stem != "__init__":
            if link:
                yield path
            elif entry.type == "tree":
                yield from (e.path for e in repo.ls_folder(commit, path))
        elif module_stem(entry.path) == stem:
            yield path
        elif entry.path == _CACHE:
            if link:
                yield path
            elif entry.type == "tree":
                for cached in repo.tree_entries(entry.oid):
                    if cached.path.startswith(f"{stem}."):
                        yield f"{path}/{cached.path}"


def _entries(repo: GitRepo, commit: str, folder: str) -> list[TreeEntry]:
    """The entries of `folder` (`""`: the root) in `commit`, or none when it is not a folder."""
    entry = repo.tree_entry(commit, folder)
    return repo.tree_entries(entry.oid) if entry is not None and entry.type == "tree" else []
