"""The pytest configuration a pushed commit would hand a reviewed pytest verifier.

pytest takes its settings from the first configuration file it finds, from its
arguments' folder up: `pytest.toml`, `.pytest.toml`, `pytest.ini`, `.pytest.ini`,
`pyproject.toml` (`[tool.pytest]`, `[tool.pytest.ini_options]`), `tox.ini`
(`[pytest]`), `setup.cfg` (`[tool:pytest]`), or the one `-c`/`--config-file` names.
Those settings decide a run as surely as the pinned test does: `addopts = -p
evil_plugin` loads a module of the commit's own, `--deselect`, `-k`, `python_files`
or `testpaths` drop the failing test, `-p no:…` an installed plugin. So in each
folder pytest may look in, each of those files must give pytest what the reviewed
revision's gave: its pytest part only, so a pushed change to a project's
dependencies in pyproject.toml runs as before. A file that holds pytest settings
where the reviewed one held none (and so may change which file pytest picks), one
whose settings are gone, and one that does not parse (pytest might read it otherwise)
are each refused; a pinned one is the reviewed one. A file pytest reads by being
there (`pytest.ini`, `pytest.toml`, `pyproject.toml`, whose folder becomes the
rootdir when no file holds settings) counts by being there too, and so does a
`setup.py`, whose folder pytest then takes for the rootdir (no `conftest.py` above
it is loaded). A file pytest reads more arguments from (`@args.txt`, in the command
or in `addopts`) must be the reviewed one, byte for byte.
"""

from __future__ import annotations

import configparser
import posixpath
import shlex
import tomllib
from collections.abc import Iterator, Sequence

from failgate_hooks.core.events import is_safe_relative_path
from failgate_hooks.core.ids import short_id
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.git.trees import TreeEntry
from failgate_hooks.verify.pins import Pin, written_over

# In the order pytest tries them in each folder (_pytest/config/findpaths.py).
CONFIG_FILES = (
    "pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini",
    "setup.cfg",
)  # fmt: skip
# Read by being there, holding pytest settings or not.
_READ_WHEN_THERE = frozenset(CONFIG_FILES[:5])
_INI_SECTIONS = ("pytest", "tool:pytest")  # tox.ini's, setup.cfg's: both read in each
_CONFIG_SUFFIXES = (".toml", ".ini", ".cfg")  # what `-c` may name (pytest's loaders)
_SYMLINK = "120000"

Settings = dict[str, object]  # section name -> what pytest reads there


def pytest_config_change(
    repo: GitRepo, commit: str, reviewed: str, pins: Sequence[Pin], words: Sequence[str]
) -> str | None:
    """Why the pytest configuration `commit` gives a verifier run by `words` is not what
    `reviewed` gave, or None when it is."""

    def unpinned(path: str) -> bool:
        return not written_over(pins, path)

    since = short_id(reviewed)
    paths = list(_config_paths(repo, commit, reviewed, pins, words))
    for path, named in paths:
        what = _change(repo, commit, reviewed, path, named) if unpinned(path) else None
        if what is not None:
            return (
                f"{path} is not pinned, and {what}: pytest takes its settings (addopts, "
                "plugins, which tests it runs) from the first such file from the tests' "
                "folder up, so the pushed ones would run in place of those reviewed; pin it "
                f"too in the verifier's files, or keep its pytest settings as {since} has them"
            )
    for folder in sorted({posixpath.dirname(path) for path, _ in paths}):
        path = posixpath.join(folder, "setup.py")
        held = _file(repo, reviewed, path) is not None
        if unpinned(path) and (_file(repo, commit, path) is not None) != held:
            return (
                f"{path} is not pinned, and {since} had {'one' if held else 'none'} there: "
                "with no settings found, pytest takes the folder of the first setup.py from "
                "the tests' folder up for its rootdir, and loads no conftest.py above it; pin "
                f"it too in the verifier's files, or keep it as {since} has it"
            )
    for path in _argument_files(repo, reviewed, words, [p for p, _ in paths]):
        if unpinned(path) and _file(repo, commit, path) != _file(repo, reviewed, path):
            return (
                f"{path} is not pinned, and differs from {since}'s: pytest reads its arguments "
                f"from it (`@{path}`), so the pushed ones would run in place of those reviewed; "
                f"pin it too in the verifier's files, or keep it as {since} has it"
            )
    return None


def _argument_files(
    repo: GitRepo, reviewed: str, words: Sequence[str], configs: Sequence[str]
) -> list[str]:
    """The files pytest reads more arguments from (`@args.txt`, its argparse's
    fromfile_prefix_chars, one argument a line), named by a word of the command, in the
    `addopts` of a configuration file or in such a file, as `reviewed` holds them (what
    runs: pinned, or judged the same)."""
    found = [word for word in words if word.startswith("@")]
    for path in configs:
        try:
            settings = _settings(repo, _file(repo, reviewed, path), posixpath.basename(path), True)
        except ValueError:
            continue  # refused above unless pinned as it is, when pytest fails on it too
        for section in (settings or {}).values():
            addopts = section.get("addopts") if isinstance(section, dict) else None
            if isinstance(addopts, str):
                found += _split(addopts)
            elif isinstance(addopts, list):
                found += [str(option) for option in addopts]
    paths: list[str] = []
    while found:  # a reviewed file of arguments may name another (argparse reads it too)
        word = found.pop()
        path = posixpath.normpath(word[1:]) if word.startswith("@") else ""
        if not is_safe_relative_path(path) or path in paths:
            continue
        paths.append(path)
        entry = _file(repo, reviewed, path)
        if entry is not None:
            found += repo.read_blob(entry.oid).decode("utf-8", "replace").splitlines()
    return sorted(paths)


def _config_paths(
    repo: GitRepo, commit: str, reviewed: str, pins: Sequence[Pin], words: Sequence[str]
) -> Iterator[tuple[str, bool]]:
    """(path, whether `-c` names it) of each file pytest may read its settings from: the
    configuration files of the root, of each pinned path's folder and of each path the
    command names, and the folders above them; and the file `-c` names."""
    starts = {""}
    for pin in pins:
        starts.add(pin.folder if pin.folder is not None else posixpath.dirname(pin.path))
    named = set()
    for at, word in enumerate(words):
        path = _path_in(repo, word, commit, reviewed)
        if path is None:
            continue
        entry = repo.tree_entry(commit, path) or repo.tree_entry(reviewed, path)
        starts.add(path if entry is not None and entry.type == "tree" else posixpath.dirname(path))
        before = words[at - 1] if at else ""
        if before in ("-c", "--config-file") and path.endswith(_CONFIG_SUFFIXES):
            named.add(path)
    for word in words:  # -cFILE, --config-file=FILE
        for prefix in ("--config-file=", "-c"):
            path = _path_in(repo, word.removeprefix(prefix), commit, reviewed)
            if word.startswith(prefix) and path is not None and path.endswith(_CONFIG_SUFFIXES):
                named.add(path)
    folders = {parent for start in starts for parent in _up_from(start)}
    for folder in sorted(folders):
        for filename in CONFIG_FILES:
            yield posixpath.join(folder, filename), False
    yield from ((path, True) for path in sorted(named))


def _path_in(repo: GitRepo, word: str, commit: str, reviewed: str) -> str | None:
    """The repository path `word` names (a pytest node's file too) when `commit` or
    `reviewed` holds it; None otherwise."""
    path = posixpath.normpath(word.split("::", 1)[0]) if word else ""
    if path == "." or not is_safe_relative_path(path):
        return None
    found = repo.tree_entry(commit, path) or repo.tree_entry(reviewed, path)
    return path if found is not None else None


def _split(addopts: str) -> list[str]:
    """`addopts`' words as pytest splits them, or at spaces where shlex cannot."""
    try:
        return shlex.split(addopts)
    except ValueError:
        return addopts.split()


def _up_from(folder: str) -> list[str]:
    """`a/b`, `a` and `""` (the root) for `a/b`."""
    parts = folder.split("/") if folder else []
    return ["/".join(parts[:depth]) for depth in range(len(parts), -1, -1)]


def _change(repo: GitRepo, commit: str, reviewed: str, path: str, named: bool) -> str | None:
    """How the pytest settings at `path` in `commit` differ from `reviewed`'s, or None."""
    new, old = _file(repo, commit, path), _file(repo, reviewed, path)
    if new is not None and new.mode.lstrip("0") == _SYMLINK:
        return "it is a link: pytest reads what it points to, which is not judged"
    if new == old:
        return None
    filename = posixpath.basename(path)
    try:
        after = _settings(repo, new, filename, named)
    except ValueError as error:
        return f"it cannot be read as {_kind(filename)} ({error}): pytest might read it otherwise"
    try:
        before = _settings(repo, old, filename, named)
    except ValueError:
        before = {"": "unreadable"}  # what was reviewed is unknown: nothing pushed matches it
    if after == before:
        return None
    if before is None:
        return f"it gives pytest settings where {short_id(reviewed)} had none"
    if after is None:
        return f"the pytest settings {short_id(reviewed)} had in it are gone"
    changed = sorted(set(after) ^ set(before) | {s for s in after if after[s] != before.get(s)})
    return f"its pytest settings ({', '.join(changed) or 'the file'}) differ from the reviewed"


def _file(repo: GitRepo, commit: str, path: str) -> TreeEntry | None:
    """The entry at `path` when it is a file (or a link): pytest reads nothing else."""
    entry = repo.tree_entry(commit, path)
    return entry if entry is not None and entry.type == "blob" else None


def _settings(
    repo: GitRepo, entry: TreeEntry | None, filename: str, named: bool
) -> Settings | None:
    """What pytest reads from the file `entry` (None: nothing, as from no file): its
    pytest sections, parsed; ValueError when it does not parse."""
    if entry is None:
        return None
    text = repo.read_blob(entry.oid).decode("utf-8")  # UnicodeDecodeError is a ValueError
    found: Settings = {}
    if filename.endswith(".toml"):
        document = tomllib.loads(text)
        tool = document.get("tool")
        if "pytest" in document:
            found["[pytest]"] = document["pytest"]
        if isinstance(tool, dict) and "pytest" in tool:
            found["[tool.pytest]"] = tool["pytest"]
    else:
        parser = _IniReader()
        try:
            parser.read_string(_as_iniconfig_splits(text))
        except configparser.Error as error:
            raise ValueError(str(error).splitlines()[0]) from None
        found = {f"[{s}]": dict(parser[s]) for s in _INI_SECTIONS if parser.has_section(s)}
    return found if found or named or filename in _READ_WHEN_THERE else None


def _as_iniconfig_splits(text: str) -> str:
    """`text` in the lines pytest's iniconfig reads: its BOM dropped, split at every line
    boundary str.splitlines knows (a `\x85` too, where configparser reads on); ValueError
    for a line opening with `[` that iniconfig reads as no section header (`[x] -p
    evil_plugin` continues the value before it, where configparser starts section x)."""
    lines = text.removeprefix("\N{BYTE ORDER MARK}").splitlines()
    for line in lines:
        header = line.rstrip()
        for comment in "#;":
            header = header.split(comment)[0].rstrip()
        if line.startswith("[") and not header.endswith("]"):
            raise ValueError(f"line {line!r} is no section header to pytest")
    return "\n".join(lines)


class _IniReader(configparser.ConfigParser):
    """configparser as strict as pytest's iniconfig, or stricter: names kept as written
    (`Addopts` is no `addopts` to pytest), no interpolation, no DEFAULT section merged
    into the others, a repeated section or name an error."""

    def __init__(self) -> None:
        super().__init__(interpolation=None, strict=True, default_section="\n")

    def optionxform(self, optionstr: str) -> str:
        return optionstr


def _kind(filename: str) -> str:
    return "TOML" if filename.endswith(".toml") else "an INI file"
