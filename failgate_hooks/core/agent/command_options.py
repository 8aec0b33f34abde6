"""Each interpreter's options, and a few wrappers', and what one option word gives it. Pure.

An interpreter reads a short option word letter by letter, as getopt does:
`python3 -Bc CODE` is `-B -c CODE`, `python3 -cCODE` is `-c CODE`, `perl -lne
CODE` is `-l -n -e CODE`, `ruby -W0e CODE` is `-W0 -e CODE`. A letter that
takes a value takes the rest of the word, or the next word when it ends it
(`-Werror::DeprecationWarning` holds no code). Long options take theirs as the
next word or after `=` (`node --eval=CODE`).

A word holding a code letter that the walk cannot reach, past a letter this
table does not know (which may take a value or not) or a part the shell
computes, is unreadable: what it runs is unknown.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from failgate_hooks.core.agent.shell_lexer import Word


class InterpreterOptions(NamedTuple):
    code: str = ""  # letters whose value is code to run: python's c, node's e
    flags: str = ""  # letters that take no value: the cluster goes on after them
    values: str = ""  # letters whose value is the rest of the word, or else the next word
    attached: str = ""  # letters whose value is the rest of the word alone (perl's -i.bak)
    digits: str = ""  # letters followed by optional digits, after which the cluster goes on
    module: str = ""  # the letter whose value is a module to run, the program (python's m)
    long_code: tuple[str, ...] = ()  # long options whose value is code (`--eval`)
    long_values: tuple[str, ...] = ()  # long options whose value is the next word
    code_word: str = ""  # a command word after which the operands are code (`deno eval`)
    run_word: str = ""  # the word before a script that says to run it (`deno run -`)


_INTERPRETERS = {
    "python": InterpreterOptions(code="c", flags="bBdEhiIOPqRsStuvVx?", values="WX",
                                 module="m", long_values=("--check-hash-based-pycs",)),
    # node has no clusters but its alias `-pe` (print and eval the next word): `-p` alone
    # takes the code, in a cluster it is a flag
    "node": InterpreterOptions(code="e", flags="chivp", values="rC",
                               long_code=("--eval", "--print", "-p"),
                               long_values=("--require", "--import", "--loader",
                                            "--experimental-loader", "--conditions",
                                            "--title")),
    "perl": InterpreterOptions(code="eE", flags="acnpsStTuUwWXhv", values="I",
                               attached="iMmxdDCFV", digits="l0"),
    "ruby": InterpreterOptions(code="e", flags="acdlnpsSUvwyh", values="IrCXE",
                               attached="Fix", digits="W0"),
    "php": InterpreterOptions(code="rBRE", flags="aCehilmnsvwH", values="cdz"),
    "deno": InterpreterOptions(code_word="eval", run_word="run"),
    "bun": InterpreterOptions(code="e", flags="p", values="r",
                              long_code=("--eval", "--print", "-p"),
                              run_word="run"),
    "expect": InterpreterOptions(code="c", flags="dinNv", values="bD"),
    "tclsh": InterpreterOptions(long_values=("-encoding",)),
}  # fmt: skip
_NONE = InterpreterOptions()
# Wrappers with an option whose value is a command line they hand a shell (`script -qc
# CMD`, `su -lc CMD`, `flock -xc CMD`): their short options cluster as getopt reads them.
WRAPPER_OPTIONS = {
    "flock": InterpreterOptions(code="c", flags="sxeunoFhV", values="wE",
                                long_code=("--command",)),
    "script": InterpreterOptions(code="c", flags="aefqhV", values="EIOBTm", attached="t",
                                 long_code=("--command",)),
    "su": InterpreterOptions(code="c", flags="fmplPhV", values="gGsw",
                             long_code=("--command", "--session-command")),
    "runuser": InterpreterOptions(code="c", flags="fmplPhV", values="gGswu",
                                  long_code=("--command", "--session-command")),
    "sg": InterpreterOptions(code="c"),
}  # fmt: skip


def interpreter_family(name: str) -> str:
    """`python3.12`, `pypy3` and `python` are one family; `nodejs` is node."""
    return re.sub(r"[0-9.]+$", "", name).replace("pypy", "python").replace("nodejs", "node")


def options_of(family: str) -> InterpreterOptions:
    return _INTERPRETERS.get(family, _NONE)


class OptionWord(NamedTuple):
    """What one word of an interpreter's command line gives it, read as an option."""

    code: tuple[Word, ...] = ()  # code to run, from this word or the ones after it
    module: Word | None = None  # a module to run: the program, and the end of the options
    takes_next: bool = False  # the next word is this option's value, not the script
    unreadable: bool = False  # a code letter the walk cannot reach: what runs is unknown


def option_word(options: InterpreterOptions, args: list[Word], index: int) -> OptionWord:
    """What `args[index]` gives the interpreter, when it is one of its options."""
    word = args[index]
    text = word.text
    following = args[index + 1 : index + 2]
    if options.code_word and text == options.code_word:
        return OptionWord(code=tuple(args[index + 1 :]))  # its options are judged too: harmless
    name, eq, value = text.partition("=")
    if text in options.long_code:
        return OptionWord(code=tuple(following), takes_next=True)
    if eq and name in options.long_code:
        return OptionWord(code=(Word(value, word.dynamic),))
    if text in options.long_values:
        return OptionWord(takes_next=True)
    if not text.startswith("-") or text.startswith("--"):
        return OptionWord()
    return _cluster(options, word, following)


def _cluster(options: InterpreterOptions, word: Word, following: list[Word]) -> OptionWord:
    """A short option word, read letter by letter as the interpreter does."""
    text = word.text
    position = 1
    while position < len(text):
        letter = text[position]
        rest = text[position + 1 :]
        if letter in options.code or letter in options.module:
            value = (Word(rest, word.dynamic),) if rest else tuple(following)
            if letter in options.module:
                return OptionWord(module=value[0] if value else None, takes_next=not rest)
            return OptionWord(code=value, takes_next=not rest)
        if letter in options.values:
            return OptionWord(takes_next=not rest)
        if letter in options.attached:
            return OptionWord()
        position += 1
        if letter in options.digits:
            while position < len(text) and text[position].isdigit():
                position += 1
        elif letter not in options.flags:
            # a letter this table does not know: it may take the rest as its value, or not
            unreached = word.dynamic or any(c in options.code for c in text[position:])
            return OptionWord(unreadable=unreached)
    return OptionWord()
