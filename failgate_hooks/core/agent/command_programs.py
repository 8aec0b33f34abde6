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

from failgate_hooks.core.agent.command_options import (
    InterpreterOptions,
    interpreter_family,
    option_word,
    options_of,
)
from failgate_hooks.core.agent.command_rules import _DESCRIPTOR_SCRIPT
from failgate_hooks.core.agent.command_state import LineReader, ScanState
from failgate_hooks.core.agent.command_words import _MODULES, _OWN_COMMANDS, _shown
from failgate_hooks.core.agent.command_writes import WriteTarget, operands
from failgate_hooks.core.agent.shell_lexer import DYN, READ_REDIRECTS, Command, Word

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
    """Inline code an interpreter runs (`-c`, `-Bc`, `--eval=`, or what its input brings),
    and `-m failgate_hooks`."""
    family = interpreter_family(name)
    options = options_of(family)
    inline_code = _inline_code(state)
    # every word is read as an option, past the script too: code a script's argument holds
    # is judged by its names all the same, and an option this table lacks cannot hide code
    for index, word in enumerate(args):
        option = option_word(options, args, index)
        if option.module is not None:
            if (own := _OWN_COMMANDS.get(_MODULES.get(option.module.text, ""))) is not None:
                rest = args[index + 1 + option.takes_next :]
                state.findings.extend(f for f in [own(rest)] if f is not None)
            return
        for code in option.code:
            inline_code(code, f"{name}'s {_shown(word)}")
        if family == "perl" and re.fullmatch(r"-[a-zA-Z]*i.*", word.text):  # -i, -pi, -pi.bak
            state.writes.extend(WriteTarget(w.text, state.cwd) for w in operands(args))
    descriptor = _interpreter_descriptor(options, name, args, state)
    if descriptor is not None:
        program_input(cmd, descriptor, state, name, inline_code)
        return
    # the input of a script or of -c code is its data, judged by the names it holds all the
    # same: the program may run it (`exec(sys.stdin.read())`)
    state.code.extend(doc.body for doc in cmd.heredocs)
    state.code.extend(w.text for w in cmd.herestrings)


def _interpreter_descriptor(
    options: InterpreterOptions, name: str, args: list[Word], state: ScanState
) -> str | None:
    """The descriptor an interpreter reads its program from: its input when no script is
    named (or the script is `-`), or the one a script operand names. None when its program
    is on its command line (code, a module) or in a file."""
    index = 0
    while index < len(args):
        text = args[index].text
        if text == "-":
            return "0"
        run_word = index == 0 and text == options.run_word and not args[index].dynamic
        if not text.startswith("-") and not run_word:
            break  # the script, or a word the shell computes
        option = option_word(options, args, index)
        if option.unreadable:
            state.unreadable.append(f"{name}'s option {_shown(args[index])} cannot be read")
            return None
        if option.code or option.module is not None:
            return None
        index += 1 + option.takes_next
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
