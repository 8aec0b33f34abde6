"""Whether a write lands on what decides a push: hooks, ledger, agents' hook config. Pure.

The paths are compared as text, after `.`, `..` and repeated slashes are folded
away and case is ignored (case-insensitive file systems). A part the shell
computes matches anything, and a glob matches what it would expand to; a match
made only of computed parts does not count, or `> "$OUT"` would match everything.
Removing or moving a folder counts for everything inside it.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from failgate_hooks.core.agent.command_rules import Finding, Risk, Unread
from failgate_hooks.core.agent.command_writes import WriteTarget
from failgate_hooks.core.agent.shell_lexer import DYN

# Anywhere in a path: what git runs around a push, and the hook configuration of each agent.
_PROTECTED_RUNS: tuple[tuple[tuple[str, ...], str], ...] = (
    ((".git", "hooks"), "the git hooks (.git/hooks)"),
    ((".git", "config"), "git's configuration (.git/config), which says where the hooks are"),
    ((".git", "index"), "git's index (.git/index), which pre-commit writes out at a push"),
    ((".git", "commondir"), "git's commondir file, which moves the hooks and config elsewhere"),
    ((".gitconfig",), "a git configuration file (.gitconfig), which can move the hooks"),
    # a worktree's own configuration, read when extensions.worktreeConfig is set, and
    # a linked worktree's (.git/worktrees/NAME/config.worktree, beside its index)
    ((".git", "config.worktree"), "a worktree's git configuration, which can move the hooks"),
    ((".git", "worktrees"), "a linked worktree's git files (its config.worktree, its index)"),
    # the global configuration where XDG puts it
    ((".config", "git", "config"), "git's global configuration, which can move the hooks"),
    ((".pre-commit-config.yaml",), "pre-commit's configuration, which says what a push runs"),
    ((".claude", "settings.json"), "Claude Code's hook configuration"),
    ((".claude", "settings.local.json"), "Claude Code's hook configuration"),
    ((".codex", "hooks.json"), "Codex's hook configuration"),
    ((".codex", "config.toml"), "Codex's configuration, which can hold hooks"),
    ((".gemini", "settings.json"), "Gemini CLI's hook configuration"),
    ((".cursor", "hooks.json"), "Cursor's hook configuration"),
    ((".github", "hooks"), "Copilot's hook configuration (.github/hooks)"),
)
_EVENT_FILE = re.compile(r"[0-9]{8}t[0-9]{6}z-[0-9a-f]{8}\.toml")
_GLOB_CHARS = re.compile(r"[*?\[]")
_BRACES = re.compile(r"\{[^{}]*\}")


class Protected(NamedTuple):
    """What this repository's gate rests on, as absolute paths where they are known."""

    root: str | None = None  # the work tree
    ledger: str = "ledger"  # the ledger folder, relative to the root
    hooks_dirs: tuple[str, ...] = ()  # where git looks for hooks (core.hooksPath included)
    # git's configuration files where this environment puts them by a variable
    # (`$XDG_CONFIG_HOME/git/config`): the usual places are protected by their names
    config_files: tuple[str, ...] = ()

    def names(self) -> tuple[str, ...]:
        """Texts that name a protected place, for code that is read, not parsed."""
        runs = ("/".join(run) for run, _ in _PROTECTED_RUNS)
        ledger = self.ledger.strip("/").lower()
        configs = (path.lower() for path in self.config_files)
        return (*runs, *configs, "hookspath", f"{ledger}/", f"'{ledger}'", f'"{ledger}"')


def protected_writes(
    writes: Iterable[WriteTarget],
    code: Iterable[str],
    protected: Protected,
    unread: Unread | None = None,
) -> tuple[Finding, ...]:
    """A finding for each write, each piece of inline code, and a line the scan could not
    read, that touches or names a protected place."""
    found: dict[str, Finding] = {}
    for target in writes:
        what = touched(target, protected)
        if what is not None:
            found.setdefault(what, write_finding(target, what, Risk.PROTECTED_WRITE))
    for text in code:
        name = named_in(text, protected)
        if name is not None:
            what = f"code naming {name}"
            found.setdefault(what, Finding(Risk.PROTECTED_WRITE, what))
    # what the unread part runs could write anywhere its line names: fail closed on the names
    name = named_in(unread.text, protected) if unread is not None else None
    if unread is not None and name is not None:
        what = f"{name} ({unread.why})"
        found.setdefault(what, Finding(Risk.PROTECTED_UNREADABLE, what))
    return tuple(found.values())


def write_finding(target: WriteTarget, detail: str, risk: Risk) -> Finding:
    """The finding for `target`'s write that reaches a protected place: `risk`, or
    PROTECTED_INDEX for a write of git's index alone (a plain write and a restore alike)."""
    return Finding(Risk.PROTECTED_INDEX if target.index_only else risk, detail)


def named_in(text: str, protected: Protected) -> str | None:
    """The first protected place text names, for text that is judged by its names alone."""
    lowered = text.lower()
    name = next((n for n in protected.names() if n in lowered), None)
    if name is None and _EVENT_FILE.search(lowered):
        return "a ledger event file"
    return name.strip("'\"") if name is not None else None


def touched(target: WriteTarget, protected: Protected) -> str | None:
    """What protected place writing `target` changes, in words; None when none."""
    path = target.path
    if not path.startswith("/"):
        path = f"{target.cwd if target.cwd is not None else DYN}/{path}"
    segments = _segments(path)
    if segments and _EVENT_FILE.fullmatch(segments[-1]):
        return "a ledger event file"
    if segments[-1:] == [".git"] and not (target.removes or target.git_pathspec):
        # a linked worktree's `.git` is a file naming its git folder: hooks and config too
        return "a .git file, which says where the repository and its hooks are"
    for run, what in _PROTECTED_RUNS:
        if _holds_run(segments, run, target.removes):
            return what
    hooks = [_segments(d) for d in protected.hooks_dirs]
    # a pathspec of git's own never reaches into .git, only into a hooks folder in the work tree
    reached = [d for d in hooks if not (target.git_pathspec and ".git" in d)]
    places = [(d, "the git hooks folder") for d in reached]
    configs = [_segments(f) for f in protected.config_files]
    places += [(f, "git's global configuration, which can move the hooks") for f in configs]
    if protected.root is not None:
        ledger = _segments(posixpath.join(protected.root, protected.ledger))
        places.append((ledger, f"the ledger ({protected.ledger}/)"))
    for place, what in places:
        if _under(segments, place, target.removes):
            return what
    if segments[:1] == [DYN] and _holds_run(segments, tuple(_segments(protected.ledger)), False):
        return f"the ledger ({protected.ledger}/)"  # relative to a folder the scan lost
    return None


def restore_scope(target: WriteTarget, protected: Protected) -> str | None:
    """The folder of the work tree, relative to its root and in lower case, that a git
    pathspec target reaches ("" for all of it); None when it lies elsewhere or where the
    scan lost track (a computed part, a `cd` it could not follow)."""
    if protected.root is None or (target.cwd is None and not target.path.startswith("/")):
        return None
    path = target.path if target.path.startswith("/") else f"{target.cwd}/{target.path}"
    segments, root = _segments(path), _segments(protected.root)
    if any(DYN in segment for segment in segments):
        return None
    if segments[: len(root)] == root:
        return "/".join(segments[len(root) :])
    return "" if root[: len(segments)] == segments else None  # a folder above the root


def in_scope(path: str, scope: str) -> bool:
    """Whether a path of the work tree (as git lists it) lies in a `restore_scope`."""
    lowered = "/".join(_segments(path))
    return not scope or lowered == scope or lowered.startswith(scope + "/")


def protected_entry(path: str, protected: Protected) -> str | None:
    """What a path that git's index or a tree can hold is, when the gate rests on it
    (`path` relative to the work tree's root): a protected name anywhere in it, the
    ledger, a hooks folder in the work tree, or a folder above one of them, which git
    replaces with a file of that name (`.claude` as a file takes `.claude/settings.json`
    away). An event file's name outside the ledger is not one: failgate reads events
    from the ledger alone."""
    segments = _segments(path)
    for run, what in _PROTECTED_RUNS:
        if run[0] != ".git" and _holds_run(segments, run, True):
            return what
    for place, what in _tree_places(protected):
        if segments[: len(place)] == place or place[: len(segments)] == segments:
            return what
    return None


def entry_pathspecs(protected: Protected) -> tuple[str, ...]:
    """git pathspecs, from the top, that select every path `protected_entry` names, and
    perhaps more (case is ignored)."""
    specs: list[str] = []
    for run, _ in _PROTECTED_RUNS:
        if run[0] != ".git":  # git holds no path inside a .git
            joined = "/".join(run)
            specs.append(f":(top,glob,icase)**/{joined}/**")
            specs += [f":(top,glob,icase)**/{'/'.join(run[:n])}" for n in range(1, len(run) + 1)]
    for place, _ in _tree_places(protected):
        specs.append(f":(top,literal,icase){'/'.join(place)}")  # and all it holds
        specs += [f":(top,literal,icase){'/'.join(place[:n])}" for n in range(1, len(place))]
    return tuple(dict.fromkeys(specs))


def _tree_places(protected: Protected) -> list[tuple[list[str], str]]:
    """The ledger and the hooks folders inside the work tree, relative to its root."""
    if protected.root is None:
        return []
    root = _segments(protected.root)
    places = [(_segments(protected.ledger), f"the ledger ({protected.ledger}/)")]
    for folder in protected.hooks_dirs:
        segments = _segments(folder)
        if segments[: len(root)] == root and len(segments) > len(root):
            places.append((segments[len(root) :], "the git hooks folder"))
    return [(place, what) for place, what in places if place and ".git" not in place]


def _segments(path: str) -> list[str]:
    out: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if out:
                out.pop()
            continue
        out.append(segment.lower())
    return out


def _match(segment: str, wanted: str) -> str | None:
    """ "static" when `segment` names `wanted`, "computed" when only a computed part could."""
    if DYN in segment:
        pattern = _BRACES.sub("*", segment.replace(DYN, "*"))
        return "computed" if fnmatch.fnmatchcase(wanted, pattern) else None
    if _GLOB_CHARS.search(segment) or _BRACES.search(segment):
        if wanted.startswith(".") and not segment.startswith("."):
            return None  # a glob does not match a dot-file (bash without dotglob)
        return "static" if fnmatch.fnmatchcase(wanted, _BRACES.sub("*", segment)) else None
    return "static" if segment == wanted else None


def _holds_run(segments: Sequence[str], run: Sequence[str], removes: bool) -> bool:
    """Whether the path is `run` (anywhere in it), inside it, or, removed, a folder above it."""
    for start in range(len(segments)):
        matched = 0
        static = False
        while matched < len(run) and start + matched < len(segments):
            kind = _match(segments[start + matched], run[matched])
            if kind is None:
                break
            static = static or kind == "static"
            matched += 1
        if not static:
            continue
        if matched == len(run):
            return True
        if removes and start + matched == len(segments):
            return True
    return False


def _under(segments: Sequence[str], place: Sequence[str], removes: bool) -> bool:
    """Whether the absolute path is `place`, inside it, or, removed, a folder above it."""
    if not segments:
        return removes  # the root folder, removed, holds everything
    if segments[0] == DYN:
        return False
    kind: str | None = None
    for index, wanted in enumerate(place):
        if index == len(segments):
            return removes and kind == "static"
        kind = _match(segments[index], wanted)
        if kind is None:
            return False
    # `cd "$X"; echo > f` lands somewhere unknown, not in the ledger
    return kind == "static"
