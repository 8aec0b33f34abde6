"""Which files a command writes or removes, from its name and its arguments. Pure.

Only what the arguments name: `rm` and `shred` remove every operand, `mv` its
sources, `mv`, `cp`, `install`, `rsync` and `scp` write their last operand (or
`-t DIR`) and each source's name inside it, `tee`,
`touch`, `chmod`, `ln` and the like every operand, `sed -i` its files, `dd` its
`of=`, and `curl`, `wget`, `tar`, `unzip` where their output option says.
`protected.py` judges what these names land on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from failgate_hooks.core.agent.shell_lexer import Word


class Restore(NamedTuple):
    """What a `git restore` or `git checkout` of paths writes them from.

    Such a write changes nothing where the work tree already holds what its source
    does, which the agent hook can check before the command runs: only when nothing
    earlier in the line can change the index, HEAD or the refs. `void` says why that
    check cannot stand for this command, and then it is judged as any write is.
    """

    source: str | None  # a revision, as written; None: the index
    removes_tracked: bool = False  # a path the index holds and the source lacks is removed
    void: str | None = None
    # `git reset A B` without `--`: A is a revision only when it names one, or else a path
    # (read as such in another target). When it names no tree, this reading is not git's.
    source_or_path: bool = False


class WriteTarget(NamedTuple):
    """A path a command would write or remove, and the directory it would be in then."""

    path: str  # as the shell would see it; DYN where it is computed
    cwd: str | None  # None: not known (a `cd` the scan cannot follow)
    removes: bool = False  # removes or moves it away: its folders count too
    git_pathspec: bool = False  # a pathspec of git's own, which never reaches into .git
    restore: Restore | None = None  # a git restore of paths, and what from
    index_only: bool = False  # git's index entries for it, not the work tree's file


# Commands that write the files they name: which operands, and whether they remove them.
_REMOVERS = frozenset({"rm", "rmdir", "unlink", "shred"})
_ALL_OPERANDS = frozenset({"tee", "touch", "truncate", "chmod", "chown", "chgrp", "mkdir",
                           "chattr", "setfacl", "mkfifo", "mknod", "ln"})  # fmt: skip
_RECURSIVE = frozenset({"chmod", "chown", "chgrp", "chattr", "setfacl"})
_LAST_OPERAND = frozenset({"cp", "install", "rsync", "scp"})
# Commands that write where an option says: a file, or the folder they extract into.
_OUTPUT_OPTION = {"curl": ("-o", "--output"), "wget": ("-O", "--output-document"),
                  "tar": ("-C", "--directory"), "unzip": ("-d",)}  # fmt: skip
WRITERS = _REMOVERS | _ALL_OPERANDS | _LAST_OPERAND | {"mv", "sed", "dd", "perl", *_OUTPUT_OPTION}


def written_by(name: str, args: Sequence[Word], cwd: str | None) -> list[WriteTarget]:
    """The files the command `name` writes or removes, run with `args` in `cwd`."""
    named_operands = operands(args)
    if name in _REMOVERS:
        targets = [(w, True) for w in named_operands]
    elif name == "mv" or name in _LAST_OPERAND:
        sources, destination = _copied(args, named_operands)
        moved = sources if name == "mv" else []
        targets = [(w, False) for w in destination] + [(w, True) for w in moved]
    elif name in _ALL_OPERANDS:
        # a recursive change of modes or owners reaches everything inside its folders
        recursive = name in _RECURSIVE and any(_recursive_flag(w.text) for w in args)
        targets = [(w, recursive) for w in named_operands]
    elif name == "sed" and any(w.text.startswith(("-i", "--in-place")) for w in args):
        targets = [(w, False) for w in named_operands[1:]]
    elif name in _OUTPUT_OPTION:
        named = _option_value(args, _OUTPUT_OPTION[name])
        targets = [(named, False)] if named else []
    elif name == "dd":
        targets = [(Word(w.text[3:], w.dynamic), False) for w in args if w.text.startswith("of=")]
    else:
        return []
    return [WriteTarget(w.text, cwd, removes=removes) for w, removes in targets]


def _copied(args: Sequence[Word], named_operands: list[Word]) -> tuple[list[Word], list[Word]]:
    """The sources of a copy or a move, and where it writes: the destination, and the name
    each source takes inside it when it is a folder (`cp -r x/hooks .git` writes .git/hooks)."""
    folder = _option_value(args, ("-t", "--target-directory"))
    if folder is not None:
        sources = [w for w in named_operands if w is not folder]
    elif named_operands:
        folder, sources = named_operands[-1], named_operands[:-1]
    else:
        return [], []
    inside = [
        Word(f"{folder.text}/{w.text.rstrip('/').rsplit('/', 1)[-1]}", folder.dynamic or w.dynamic)
        for w in sources
    ]
    return sources, [folder, *inside]


def _recursive_flag(text: str) -> bool:
    return text == "--recursive" or (
        text.startswith("-") and not text.startswith("--") and "R" in text
    )


def operands(args: Sequence[Word]) -> list[Word]:
    """The words that are not options (everything after a `--` is an operand)."""
    out: list[Word] = []
    options = True
    for word in args:
        if options and word.text == "--":
            options = False
        elif not options or not word.text.startswith("-") or word.text == "-":
            out.append(word)
    return out


def _option_value(args: Sequence[Word], names: tuple[str, ...]) -> Word | None:
    """The value of the first option among `names`: `-C DIR`, `--directory=DIR`, and a short
    one's value attached or after a cluster (`-C.git/hooks`, `-xvC DIR`), as getopt reads them."""
    for index, word in enumerate(args):
        text = word.text
        for name in names:
            if text == name and index + 1 < len(args):
                return args[index + 1]
            if text.startswith(name + "=") and name.startswith("--"):
                return Word(text.split("=", 1)[1], word.dynamic)
            if len(name) == 2 and text.startswith("-") and not text.startswith("--"):
                position = text.find(name[1], 1)
                if position > 0 and position + 1 < len(text):
                    return Word(text[position + 1 :], word.dynamic)
                if position > 0 and index + 1 < len(args):
                    return args[index + 1]
    return None
