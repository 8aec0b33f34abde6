"""Which files git's own commands rewrite or remove, from their pathspecs. Pure.

`rm` and `mv` remove what they name; `checkout` and `restore` rewrite what
their pathspecs name from a revision or the index (a `checkout` with one word
and no `--` may be a branch or a path: it is judged as a path, and a branch's
name names nothing protected); `clean` removes the untracked files under its
pathspecs, the whole folder when none is given; `stash` with untracked files
(`-u`, `-a`) takes them away, and `stash` with pathspecs reverts those;
`checkout-index` and `read-tree -u` write what the index or a tree holds. Some
write the index alone (`WriteTarget.index_only`, see `command_git_index.py` for
why that counts): `restore --staged`, `rm --cached`, `read-tree` without `-u`
and `stash apply --index` (or `pop`), which brings back an index unseen here. A
pathspec is git's, not the shell's: its magic (`:/ledger`, `:(top)`,
`:!build`) is read, an exclusion reaches everything but what it excludes, and a
wildcard reaches everything in the folder before it (git's `*` crosses `/` and
matches dot-files). `--pathspec-from-file` reaches the whole tree.

A plain `restore` or `checkout` of paths (and `read-tree REV`) also says what
it writes them from (`Restore`: the index, or a revision), so that the agent
hook can compare that with the work tree before it runs and let through one
that changes nothing protected (`git restore .`); `command_restores.py` says
when that may stand.

What moves the whole work tree to a commit (switching branches, `reset
--hard`, `checkout -f`, a `stash` of tracked changes) names no path and is not
judged here: it leaves every tracked file as a commit holds it, and an
uncommitted event file is untracked.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from failgate_hooks.core.agent.command_writes import Restore, WriteTarget
from failgate_hooks.core.agent.shell_lexer import Word

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
WHOLE_REPOSITORY = "/"  # the root of the repository is not known here: judged as all of it

# The options of a restore of paths whose writes the agent hook can check before it
# runs: each writes the paths from one source, the index or a revision, and nothing
# else. Any other (`--ours`, `--merge`, `-p`, `--recurse-submodules`, a prefix of a
# long name) leaves the command judged as any write is.
_PLAIN_RESTORE = {
    "checkout": frozenset({"-q", "--quiet", "-f", "--force", "--overlay", "--no-overlay",
                           "--progress", "--no-progress", "--ignore-skip-worktree-bits"}),
    "restore": frozenset({"-q", "--quiet", "-W", "--worktree", "-S", "--staged", "-s",
                          "--source", "--overlay", "--no-overlay", "--progress",
                          "--no-progress", "--ignore-skip-worktree-bits"}),
}  # fmt: skip
# A revision whose meaning does not depend on the folder git runs in (`HEAD:./x` does)
# nor on more than one name (`a..b`): a name, `~`, `^`, `@{…}`.
_PLAIN_REVISION = re.compile(r"[A-Za-z0-9@_][A-Za-z0-9._/@{}~^+-]*")


@dataclass
class ParsedOptions:
    flags: set[str]
    before: list[Word]  # operands before a `--`
    after: list[Word] | None  # operands after it; None when there is no `--`
    from_file: bool  # `--pathspec-from-file`: pathspecs this scan cannot see
    values: list[tuple[str, Word]] = field(default_factory=list)  # (option as written, value)


def git_writes(name: str, args: Sequence[Word], cwd: str | None) -> list[WriteTarget]:
    """What `git NAME ARGS`, run in `cwd`, rewrites or removes in the work tree."""
    if name == "stash":
        return _stash(args, cwd)
    if name in ("checkout-index", "read-tree"):
        return _from_the_index(name, args, cwd)
    parsed = parse_options(args, *_VALUES.get(name, ("", ())))
    paths = parsed.before + (parsed.after or [])
    if name == "checkout" and parsed.after is not None:
        paths = parsed.before[1:] + parsed.after  # the first word before `--` is a revision
    elif name == "clean":
        if given(parsed, "-n", "--dry-run"):
            return []
        paths = paths or [Word(".")]
    targets = targets_of(paths, parsed, cwd)
    staged = name == "restore" and given(parsed, "-S", "--staged")
    if (staged and not given(parsed, "-W", "--worktree")) or (
        name == "rm" and given(parsed, "", "--cached")
    ):
        targets = [t._replace(index_only=True) for t in targets]  # the index alone
    restore = _restore(name, args, parsed) if paths else None
    return [t._replace(restore=restore) for t in targets] if restore else targets


def voided(targets: Sequence[WriteTarget], why: str, *, first: bool = False) -> list[WriteTarget]:
    """The targets, each restore among them judged as any write is, for `why` (before
    the reason it already had, with `first`)."""
    return [
        t._replace(restore=t.restore._replace(void=why if first else t.restore.void or why))
        if t.restore
        else t
        for t in targets
    ]


def _restore(name: str, args: Sequence[Word], parsed: ParsedOptions) -> Restore | None:
    """Where a `checkout` or `restore` of paths writes them from, when it is plain enough
    for the agent hook to check: `git restore [-s REV] [-SW] PATHS`, `git checkout [--]
    PATHS` (a lone word without `--` is a path, or a branch, which writes no path) and
    `git checkout REV -- PATHS`. None for any other form."""
    if name not in _PLAIN_RESTORE or any(w.dynamic for w in args):
        return None
    if parsed.from_file or not parsed.flags <= _PLAIN_RESTORE[name]:
        return None
    overlay = "--overlay" in parsed.flags
    if name == "checkout":
        if parsed.after is None:
            return Restore(None) if len(parsed.before) == 1 else None  # `checkout A B`: which?
        if len(parsed.before) > 1:
            return None
        source = parsed.before[0].text if parsed.before else None
        no_overlay = "--no-overlay" in parsed.flags and source is not None
        if source is not None and not plain_revision(source):
            return None
        return Restore(source, removes_tracked=no_overlay)
    sources = [value.text for option, value in parsed.values if option in ("-s", "--source")]
    if len(sources) > 1 or not all(plain_revision(s) for s in sources):
        return None
    staged = "-S" in parsed.flags or "--staged" in parsed.flags
    source = sources[0] if sources else ("HEAD" if staged else None)  # --staged: from HEAD
    # what `--staged` alone takes out of the index stays in the work tree, untracked
    index_only = staged and not ("-W" in parsed.flags or "--worktree" in parsed.flags)
    return Restore(source, removes_tracked=source is not None and not overlay and not index_only)


def plain_revision(text: str) -> bool:
    return _PLAIN_REVISION.fullmatch(text) is not None and ".." not in text


def _from_the_index(name: str, args: Sequence[Word], cwd: str | None) -> list[WriteTarget]:
    """`checkout-index` writes the paths it names (all with `-a`, or those on its input
    with `--stdin`), under `--prefix` when given; `read-tree -u` writes a whole tree, and
    without `-u` only the index. Their paths are not pathspecs: no magic, no globs."""
    prefix = next((w.text.partition("=")[2] for w in args if w.text.startswith("--prefix=")), "")
    flags = {w.text for w in args if w.text.startswith("-")}
    if name == "read-tree":
        return _read_tree(args, flags, prefix, cwd)
    elif flags & {"-a", "--all", "--stdin"} or any(w.dynamic for w in args):
        paths = ["."]
    else:
        paths = [w.text for w in args if not w.text.startswith("-")]
    return [reached(posixpath.join(prefix, path) if prefix else path, cwd) for path in paths]


def _read_tree(
    args: Sequence[Word], flags: set[str], prefix: str, cwd: str | None
) -> list[WriteTarget]:
    """`read-tree` writes the index (under `--prefix` when given), and with `-u` the work
    tree too. `git read-tree [-q] REV` makes the index REV's tree, which the agent hook
    can compare with the work tree; any other form (a merge, `--empty`) is judged whole."""
    writes_tree = any(not f.startswith("--") and "u" in f[1:] for f in flags)  # -u, -mu
    # its prefix, as its paths, is relative to the top of the work tree
    target = reached(prefix, None) if prefix else reached(WHOLE_REPOSITORY, cwd)
    target = target._replace(index_only=not writes_tree)
    operands = [w for w in args if not w.text.startswith("-")]
    plain = flags <= {"-q", "--quiet"} and len(operands) == 1 and not operands[0].dynamic
    if plain and plain_revision(operands[0].text) and not writes_tree:
        return [target._replace(restore=Restore(operands[0].text))]
    return [target]


def _stash(args: Sequence[Word], cwd: str | None) -> list[WriteTarget]:
    sub = args[0].text if args and not args[0].text.startswith("-") else "push"
    if sub in ("apply", "pop") and given(parse_options(args[1:], "", ()), "", "--index"):
        # the index the stash recorded, unseen here, comes back beside the work tree's files
        return [reached(WHOLE_REPOSITORY, cwd)._replace(index_only=True)]
    if sub not in ("push", "save"):
        return []  # list, show, drop; what pop and apply write is in the stash, unseen here
    rest = args[1:] if args and args[0].text == sub else args
    parsed = parse_options(rest, *_VALUES["stash"])
    if sub == "save":  # its operands are the message
        parsed.before, parsed.after = [], None
    paths = parsed.before + (parsed.after or [])
    untracked = given(parsed, "-u", "--include-untracked") or given(parsed, "-a", "--all")
    if not paths and not parsed.from_file:
        paths = [Word(".")] if untracked else []
    return targets_of(paths, parsed, cwd)


def targets_of(paths: list[Word], parsed: ParsedOptions, cwd: str | None) -> list[WriteTarget]:
    targets = [pathspec(word, cwd) for word in paths]
    if parsed.from_file:
        targets.append(reached(WHOLE_REPOSITORY, cwd))
    return targets


def pathspec(word: Word, cwd: str | None) -> WriteTarget:
    """What one pathspec reaches, as a folder removed or rewritten with all it holds."""
    text, top, literal = word.text, False, False
    if text.startswith(":") and not word.dynamic:
        magic, text = _magic(text)
        top, literal = "top" in magic, "literal" in magic
        if "exclude" in magic or not text:
            return reached("." if not top and cwd else WHOLE_REPOSITORY, cwd)
    if not literal:
        parts = text.split("/")
        wild = next((i for i, part in enumerate(parts) if _GLOB & set(part)), None)
        if wild is not None:
            text = "/".join(parts[:wild]) or "."
    if top:  # relative to the repository's root, which may be above cwd: any folder
        return reached(text, None)
    return reached(text, cwd)


def reached(path: str, cwd: str | None) -> WriteTarget:
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


def given(parsed: ParsedOptions, short: str, long: str) -> bool:
    """Whether the flag is there, short or long, or as a prefix git takes for the long one."""
    return short in parsed.flags or any(
        f.startswith("--") and len(f) > 3 and long.startswith(f) for f in parsed.flags
    )


def parse_options(
    args: Sequence[Word], short_values: str, long_values: tuple[str, ...]
) -> ParsedOptions:
    """git's options as parse-options reads them: clusters of short flags, a short
    option's value attached or next, a long one's after `=` or next, and `--`."""
    parsed = ParsedOptions(set(), [], None, False)
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
            option, eq, inline = text.partition("=")
            parsed.flags.add(option)
            parsed.from_file = parsed.from_file or (
                len(option) > 4 and "--pathspec-from-file".startswith(option)
            )
            skip = not eq and (option in long_values or option == "--pathspec-from-file")
            if option in long_values and (eq or index + 1 < len(args)):
                value = Word(inline, word.dynamic) if eq else args[index + 1]
                parsed.values.append((option, value))
        elif text.startswith("-") and len(text) > 1 and not word.dynamic:
            for position, letter in enumerate(text[1:], start=1):
                parsed.flags.add(f"-{letter}")
                if letter in short_values:
                    skip = position == len(text) - 1 and index + 1 < len(args)
                    attached = text[position + 1 :]
                    if attached or skip:
                        value = Word(attached) if attached else args[index + 1]
                        parsed.values.append((f"-{letter}", value))
                    break
        else:
            parsed.before.append(word)
    return parsed
