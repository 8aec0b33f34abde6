"""What a shell or an interpreter runs as its program, and where it reads it from. Pure.

Each runs one of three things: code on its command line (`sh -c CODE`, `python3
-c CODE`, `node -e CODE`), a script file or a module (`sh x.sh`, `python3 x.py`,
`python3 -m mod`: not in this text), or what arrives on a descriptor (`sh`, `sh
-s`, `sh -`, `at`, `python3`, `python3 -`, `ruby -`, `node /dev/stdin`, `perl
/dev/fd/3`). What arrives on a descriptor is read when the text holds it (a
here-document or a here-string: command lines for a shell, inline code for an
interpreter), and is unreadable when a pipe, a file, another descriptor or a
process substitution feeds it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from failgate_hooks.core.command_rules import (
    _CODE_FLAGS,
    _DESCRIPTOR_SCRIPT,
    _INTERPRETER_VALUES,
    _RUN_WORDS,
)
from failgate_hooks.core.command_state import LineReader, ScanState
from failgate_hooks.core.command_words import _MODULES, _OWN_COMMANDS, _shown
from failgate_hooks.core.command_writes import WriteTarget, operands
from failgate_hooks.core.shell_lexer import DYN, READ_REDIRECTS, Command, Word

# How a program's text that arrives on a descriptor is judged: the word, and what it is.
ReadText = Callable[[Word, str], None]


def read_shell(
    read: LineReader, args: list[Word], cmd: Command, state: ScanState, depth: int
) -> None:
    """`bash -c CODE`, a script file, or a shell that runs what arrives on a descriptor."""
    index = 0
    takes_code = reads_input = False
    while index < len(args) and not args[index].dynamic:
        text = args[index].text
        index += 1
        if text in ("-", "--"):
            break  # the end of the options: what follows is the script and its arguments
        if not text.startswith(("-", "+")):
            index -= 1
            break
        if text.startswith("--"):
            index += text in ("--rcfile", "--init-file")
            continue
        takes_code = takes_code or (text[0] == "-" and "c" in text)
        reads_input = reads_input or (text[0] == "-" and "s" in text)  # the operands are $1…
        index += sum(text.count(flag) for flag in "oO")  # `-o pipefail`, `-eo pipefail`
    if takes_code:
        read.code_string(args[index : index + 1], state, depth, what="a shell's -c")
        return
    descriptor: str | None = "0"
    if not reads_input and index < len(args):
        descriptor = script_descriptor(args[index], "a shell", state)
    if descriptor is not None:
        program_input(cmd, descriptor, state, "a shell", shell_text(read, state, depth))


def read_interpreter(name: str, args: list[Word], cmd: Command, state: ScanState) -> None:
    """Inline code an interpreter runs (`-c`, `-e`, or what its input brings), and `-m
    failgate_hooks`."""
    family = re.sub(r"[0-9.]+$", "", name).replace("pypy", "python").replace("nodejs", "node")
    inline_code = _inline_code(state)
    for index, word in enumerate(args):
        text = word.text
        if family == "python" and text == "-m" and index + 1 < len(args):
            if (own := _OWN_COMMANDS.get(_MODULES.get(args[index + 1].text, ""))) is not None:
                state.findings.extend(f for f in [own(args[index + 2 :])] if f is not None)
            return
        if _code_flag(family, text) and index + 1 < len(args):
            inline_code(args[index + 1], f"{name}'s {text}")
        if family == "perl" and re.fullmatch(r"-[a-zA-Z]*i.*", text):  # -i, -pi, -pi.bak
            state.writes.extend(WriteTarget(w.text, state.cwd) for w in operands(args))
    descriptor = _interpreter_descriptor(family, name, args, state)
    if descriptor is not None:
        program_input(cmd, descriptor, state, name, inline_code)
        return
    # the input of a script or of -c code is its data, judged by the names it holds all the
    # same: the program may run it (`exec(sys.stdin.read())`)
    state.code.extend(doc.body for doc in cmd.heredocs)
    state.code.extend(w.text for w in cmd.herestrings)


def _code_flag(family: str, text: str) -> bool:
    """Whether an interpreter's option gives it code to run (`-c`, `-e`, perl's `-ne`)."""
    return text in _CODE_FLAGS.get(family, ()) or (
        family == "perl" and text.startswith("-") and text[-1:] in ("e", "E")
    )


def _interpreter_descriptor(
    family: str, name: str, args: list[Word], state: ScanState
) -> str | None:
    """The descriptor an interpreter reads its program from: its input when no script is
    named (or the script is `-`), or the one a script operand names. Inline code given is
    read here as a script's name: a file's, so its input is data."""
    values = _INTERPRETER_VALUES.get(family, ())
    index = 0
    while index < len(args) and not args[index].dynamic:
        text = args[index].text
        if text == "-":
            return "0"
        if not text.startswith("-"):
            if index > 0 or text != _RUN_WORDS.get(family):
                break
        elif text in values:
            index += 1
        index += 1
    if index >= len(args):
        return "0"
    return script_descriptor(args[index], name, state)


def _inline_code(state: ScanState) -> ReadText:
    """How an interpreter's code is judged, from its command line or its input: by the names
    and the pushes it holds; code the shell computes is unreadable, as a shell's -c is."""

    def judge(word: Word, what: str) -> None:
        if word.dynamic:
            state.unreadable.append(f"{what} runs code computed by the shell")
        state.code.append(word.text)

    return judge


def shell_text(read: LineReader, state: ScanState, depth: int) -> ReadText:
    """Text a shell reads as its commands: command lines, read one level deeper."""
    return lambda word, what: read.code_string([word], state, depth, what)


def script_descriptor(script: Word, who: str, state: ScanState) -> str | None:
    """The descriptor a script operand names (`/dev/stdin`, `/dev/fd/3`); None for a file."""
    if script.text == DYN:
        state.unreadable.append(f"{who} runs a script the shell computes (a <(…), a variable)")
        return None
    if (named := _DESCRIPTOR_SCRIPT.fullmatch(script.text)) is None:
        return None  # a script file: its commands are not in this text
    descriptor = named.group(1) or "0"
    if not descriptor.isdigit():
        state.unreadable.append(f"{who} reads its commands from a descriptor it computes")
        return None
    return descriptor


def program_input(
    cmd: Command, descriptor: str, state: ScanState, who: str, read_text: ReadText
) -> None:
    """What a program reading descriptor `descriptor` runs: here-documents are read, the rest
    is not.

    Every here-document and here-string is read, whichever descriptor it feeds: reading
    one the program ignores costs nothing, and which one it reads last is the shell's to say.
    """
    for doc in cmd.heredocs:
        read_text(Word(doc.body), f"{who}'s here-document")
    for word in cmd.herestrings:
        read_text(word, f"{who}'s <<<")
    opened = [r for r in cmd.redirects if r.op in READ_REDIRECTS and (r.fd or "0") == descriptor]
    if cmd.piped and descriptor == "0":
        state.unreadable.append(f"{who} reads its commands from a pipe")
    elif opened:
        source = _shown(opened[-1].target) if opened[-1].target else "another descriptor"
        state.unreadable.append(f"{who} reads its commands from {source}")
    elif descriptor != "0" and not cmd.heredocs and not cmd.herestrings:
        state.unreadable.append(f"{who} reads its commands from descriptor {descriptor}")
