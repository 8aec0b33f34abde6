"""Which files git's own commands rewrite or remove, from their pathspecs. Pure.

`rm` and `mv` remove what they name; `checkout` and `restore` rewrite what
their pathspecs name from a revision or the index (a `checkout` with one word
and no `--` may be a branch or a path: it is judged as a path, and a branch's
name names nothing protected); `clean` removes the untracked files under its
pathspecs, the whole folder when none is given; `stash` with untracked files
(`-u`, `-a`) takes them away, and `stash` with pathspecs reverts those;
`checkout-index` and `read-tree -u` write what the index or a tree holds. A
pathspec is git's, not the shell's: its magic (`:/ledger`, `:(top)`,
`:!build`) is read, an exclusion reaches everything but what it excludes, and a
wildcard reaches everything in the folder before it (git's `*` crosses `/` and
matches dot-files). `--pathspec-from-file` reaches the whole tree.

What moves the whole work tree to a commit (switching branches, `reset
--hard`, `checkout -f`, a `stash` of tracked changes) names no path and is not
judged here: it leaves every tracked file as a commit holds it, and an
uncommitted event file is untracked.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from failgate_hooks.core.command_writes import WriteTarget
from failgate_hooks.core.shell_lexer import Word

GIT_WRITERS = frozenset({"rm", "mv", "checkout", "restore", "clean", "stash", "checkout-index",
                         "read-tree"})  # fmt: skip

# Each command's options that take a value (short letters, long names).
_VALUES: dict[str, tuple[str, tuple[str, ...]]] = {
    "checkout": ("bB", ("--orphan", "--conflict")),
    "restore": ("s", ("--source", "--conflict")),
    "clean": ("e", ("--exclude",)),
    "stash": ("m", ("--message",)),
}
_GLOB = frozenset("*?[")
_WHOLE_REPOSITORY = "/"  # the root of the repository is not known here: judged as all of it


@dataclass
class _Parsed:
    flags: set[str]
    before: list[Word]  # operands before a `--`
    after: list[Word] | None  # operands after it; None when there is no `--`
    from_file: bool  # `--pathspec-from-file`: pathspecs this scan cannot see


def git_writes(name: str, args: Sequence[Word], cwd: str | None) -> list[WriteTarget]:
    """What `git NAME ARGS`, run in `cwd`, rewrites or removes in the work tree."""
    if name == "stash":
        return _stash(args, cwd)
    if name in ("checkout-index", "read-tree"):
        return _from_the_index(name, args, cwd)
    parsed = _parse(args, *_VALUES.get(name, ("", ())))
    paths = parsed.before + (parsed.after or [])
    if name == "checkout" and parsed.after is not None:
        paths = parsed.before[1:] + parsed.after  # the first word before `--` is a revision
    elif (
        name == "restore"
        and _given(parsed, "-S", "--staged")
        and not _given(parsed, "-W", "--worktree")
    ):
        return []  # the index alone
    elif name == "clean":
        if _given(parsed, "-n", "--dry-run"):
            return []
        paths = paths or [Word(".")]
    return _targets(paths, parsed, cwd)


def _from_the_index(name: str, args: Sequence[Word], cwd: str | None) -> list[WriteTarget]:
    """`checkout-index` writes the paths it names (all with `-a`, or those on its input
    with `--stdin`), under `--prefix` when given; `read-tree -u` writes a whole tree, and
    without `-u` only the index. Their paths are not pathspecs: no magic, no globs."""
    prefix = next((w.text.partition("=")[2] for w in args if w.text.startswith("--prefix=")), "")
    flags = {w.text for w in args if w.text.startswith("-")}
    if name == "read-tree":
        if not any(not f.startswith("--") and "u" in f[1:] for f in flags):  # -u, -mu
            return []
        paths = ["."]
    elif flags & {"-a", "--all", "--stdin"} or any(w.dynamic for w in args):
        paths = ["."]
    else:
        paths = [w.text for w in args if not w.text.startswith("-")]
    return [_reached(posixpath.join(prefix, path) if prefix else path, cwd) for path in paths]


def _stash(args: Sequence[Word], cwd: str | None) -> list[WriteTarget]:
    sub = args[0].text if args and not args[0].text.startswith("-") else "push"
    if sub not in ("push", "save"):
        return []  # list, show, drop; what pop and apply write is in the stash, unseen here
    rest = args[1:] if args and args[0].text == sub else args
    parsed = _parse(rest, *_VALUES["stash"])
    if sub == "save":  # its operands are the message
        parsed.before, parsed.after = [], None
    paths = parsed.before + (parsed.after or [])
    untracked = _given(parsed, "-u", "--include-untracked") or _given(parsed, "-a", "--all")
    if not paths and not parsed.from_file:
        paths = [Word(".")] if untracked else []
    return _targets(paths, parsed, cwd)


def _targets(paths: list[Word], parsed: _Parsed, cwd: str | None) -> list[WriteTarget]:
    targets = [pathspec(word, cwd) for word in paths]
    if parsed.from_file:
        targets.append(_reached(_WHOLE_REPOSITORY, cwd))
    return targets


def pathspec(word: Word, cwd: str | None) -> WriteTarget:
    """What one pathspec reaches, as a folder removed or rewritten with all it holds."""
    text, top, literal = word.text, False, False
    if text.startswith(":") and not word.dynamic:
        magic, text = _magic(text)
        top, literal = "top" in magic, "literal" in magic
        if "exclude" in magic or not text:
            return _reached("." if not top and cwd else _WHOLE_REPOSITORY, cwd)
    if not literal:
        parts = text.split("/")
        wild = next((i for i, part in enumerate(parts) if _GLOB & set(part)), None)
        if wild is not None:
            text = "/".join(parts[:wild]) or "."
    if top:  # relative to the repository's root, which may be above cwd: any folder
        return _reached(text, None)
    return _reached(text, cwd)


def _reached(path: str, cwd: str | None) -> WriteTarget:
    return WriteTarget(path, cwd, removes=True, git_pathspec=True)


def _magic(text: str) -> tuple[set[str], str]:
    """A pathspec's magic words and the path after them: `:(top,icase)x`, `:/x`, `:!x`."""
    if text.startswith(":("):
        close = text.find(")")
        if close < 0:
            return {"exclude"}, ""  # git refuses it; judged as everything
        words = {w.strip().split(":", 1)[0].lower() for w in text[2:close].split(",")}
        return words, text[close + 1 :]
    index = 1
    magic: set[str] = set()
    while index < len(text) and text[index] in "/!^":
        magic.add("top" if text[index] == "/" else "exclude")
        index += 1
    if index < len(text) and text[index] == ":":
        index += 1
    return magic, text[index:]


def _given(parsed: _Parsed, short: str, long: str) -> bool:
    """Whether the flag is there, short or long, or as a prefix git takes for the long one."""
    return short in parsed.flags or any(
        f.startswith("--") and len(f) > 3 and long.startswith(f) for f in parsed.flags
    )


def _parse(args: Sequence[Word], short_values: str, long_values: tuple[str, ...]) -> _Parsed:
    """git's options as parse-options reads them: clusters of short flags, a short
    option's value attached or next, a long one's after `=` or next, and `--`."""
    parsed = _Parsed(set(), [], None, False)
    skip = False
    for index, word in enumerate(args):
        text = word.text
        if skip:
            skip = False
        elif parsed.after is not None:
            parsed.after.append(word)
        elif text == "--":
            parsed.after = []
        elif text.startswith("--"):
            option, eq, _ = text.partition("=")
            parsed.flags.add(option)
            parsed.from_file = parsed.from_file or (
                len(option) > 4 and "--pathspec-from-file".startswith(option)
            )
            skip = not eq and (option in long_values or option == "--pathspec-from-file")
        elif text.startswith("-") and len(text) > 1 and not word.dynamic:
            for position, letter in enumerate(text[1:], start=1):
                parsed.flags.add(f"-{letter}")
                if letter in short_values:
                    skip = position == len(text) - 1 and index + 1 < len(args)
                    break
        else:
            parsed.before.append(word)
    return parsed
