"""A shell command string as the simple commands a POSIX shell would run. Pure: no I/O.

Enough of the shell's grammar to see what a command would run, in one pass over
the text: quotes (with ANSI-C `$'…'`), escapes and line continuations, `;`,
`&&`, `||`, pipes, subshells, command substitution (`$(…)`, backticks,
`<(…)`, `>(…)`), redirections and here-documents. Commands inside a
substitution come out as commands of their own. What the shell computes only
when it runs (a variable, a substitution's output, a glob, a brace) is marked,
never guessed: a word holding one is `dynamic`, and `DYN` stands in its text.

Text it cannot read (an unterminated quote, nesting too deep, more than the
budget of steps) raises `Unreadable`: the caller decides what that means.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Stands in a word's text for a part the shell computes when it runs.
DYN = "\x00"

# Steps of the scan (a word, an operator, a quoted run) before the text counts as
# unreadable: a long script takes a few thousand, and this bounds the time of the worst.
DEFAULT_BUDGET = 25_000
MAX_DEPTH = 24

_PLAIN = re.compile(r"[^\s'\"\\$`;&|()<>]+")
_BLANKS = re.compile(r"[ \t\r\f\v]+")
_DQ_SPECIAL = re.compile(r'[\\"$`]')
_BODY_SPECIAL = re.compile(r"[\\$`]")
_ANSI_C_BODY = re.compile(r"(?:[^'\\]|\\.)*'", re.DOTALL)
_BACKTICK_BODY = re.compile(r"(?:[^`\\]|\\.)*`", re.DOTALL)
_PARAMETER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")
_OPERATOR = re.compile(r";;&|;;|;&|&&|\|\||\|&|;|&|\|")
_REDIRECT = re.compile(r"&>>|&>|>>|>\||>&|<<<|<<-|<<|<>|<&|<\(|>\(|>|<")
_BRACES = re.compile(r"[{}]")
_BRACE_EXPANSION = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_ANSI_C_ESCAPE = re.compile(
    r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)"
)
_SIMPLE_ESCAPES = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n",
    "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip

# The redirections that write to the file they name.
WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
# The redirections that give a command something to read: standard input, unless a
# descriptor is written before them. Here-documents and here-strings are apart.
READ_REDIRECTS = frozenset({"<", "<&", "<>"})


class Unreadable(Exception):
    """The text cannot be read as commands; `reason` says why, for a person."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Word:
    """One word after quote removal: `DYN` where the shell computes a part."""

    text: str
    dynamic: bool = False  # holds an expansion, or a glob or brace the shell expands
    prefix: str = ""  # the leading characters before any quote or expansion


@dataclass
class Redirect:
    op: str
    target: Word | None  # None: a file descriptor is duplicated, no file named
    fd: str = ""  # the descriptor written before it (`3<file`); "" for the operator's own


@dataclass
class Heredoc:
    delimiter: str
    quoted: bool  # a quoted delimiter: the body is not expanded
    strip_tabs: bool
    body: str = ""


@dataclass
class Command:
    """One simple command: its words, redirections and here-documents."""

    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    heredocs: list[Heredoc] = field(default_factory=list)
    herestrings: list[Word] = field(default_factory=list)
    piped: bool = False  # its standard input is the output of the command before it
    end: str = ""  # what ended it: an operator (`;`, `&&`, `&`, `|`), a newline, `(` or `)`
    nested: bool = False  # it runs inside a substitution (`$(…)`, backticks, `<(…)`)

    def __bool__(self) -> bool:
        return bool(self.words or self.redirects)


@dataclass
class _Budget:
    left: int


def commands(text: str) -> list[Command]:
    """Every simple command in `text`, substitutions' commands included."""
    lexer = _Lexer(text, _Budget(DEFAULT_BUDGET), depth=0)
    lexer.run(stop=None)
    return lexer.out


class _Lexer:
    def __init__(self, text: str, budget: _Budget, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise Unreadable("it nests commands too deeply to read")
        self.text = text
        self.i = 0
        self.budget = budget
        self.depth = depth
        self.out: list[Command] = []
        self.pending: list[Heredoc] = []
        self.fd = ""  # a descriptor just read, which the redirection after it opens

    def tick(self) -> None:
        self.budget.left -= 1
        if self.budget.left < 0:
            raise Unreadable("it is too long or too intricate to read")

    def run(self, stop: str | None) -> None:
        """Read commands up to the end, or up to the `)` that closes a substitution."""
        text, n = self.text, len(self.text)
        cmd = Command()
        parens = 0
        while True:
            self.tick()
            blanks = _BLANKS.match(text, self.i)
            if blanks:
                self.i = blanks.end()
            if self.i >= n:
                if stop is not None:
                    raise Unreadable("a $(…) is not closed")
                self._end(cmd, "")
                self._heredoc_bodies()
                return
            c = text[self.i]
            if c == "\n":
                self.i += 1
                self._end(cmd, "\n")
                cmd = Command()
                self._heredoc_bodies()
            elif text.startswith("\\\n", self.i):
                self.i += 2
            elif c == "#":
                end = text.find("\n", self.i)
                self.i = n if end < 0 else end
            elif c == ")":
                self.i += 1
                if stop == ")" and parens == 0:
                    self._end(cmd, ")")
                    return
                parens = max(parens - 1, 0)
                self._end(cmd, ")")
                cmd = Command()
            elif c == "(":
                self.i += 1
                parens += 1
                self._end(cmd, "(")
                cmd = Command()
            elif (redirect := _REDIRECT.match(text, self.i)) is not None:
                self.i = redirect.end()
                self._redirect(redirect.group(), cmd)
            elif (operator := _OPERATOR.match(text, self.i)) is not None:
                self.i = operator.end()
                self._end(cmd, operator.group())
                cmd = Command(piped=operator.group() in ("|", "|&"))
            else:
                word = self._word()
                fd = not word.dynamic and word.text.isdigit() and word.prefix == word.text
                if fd and self.i < n and text[self.i] in "<>":
                    self.fd = word.text  # `2>file`: a file descriptor, not an argument
                    continue
                cmd.words.append(word)

    def _end(self, cmd: Command, end: str) -> None:
        if cmd:
            cmd.end, cmd.nested = end, self.depth > 0
            self.out.append(cmd)

    def _redirect(self, op: str, cmd: Command) -> None:
        fd, self.fd = self.fd, ""
        if op in ("<(", ">("):
            # the shell hands the command a path to read or write it through: a computed word
            self._nested()
            cmd.words.append(Word(DYN, dynamic=True))
            return
        blanks = _BLANKS.match(self.text, self.i)
        if blanks:
            self.i = blanks.end()
        if self.text.startswith(("<(", ">("), self.i):  # `< <(cmd)`: a computed file
            self.i += 2
            self._nested()
            cmd.redirects.append(Redirect(op, Word(DYN, dynamic=True), fd))
            return
        if self.i >= len(self.text) or self.text[self.i] in "\n;&|()<>":
            raise Unreadable(f"a {op} names nothing")
        target = self._word()
        if op in ("<<", "<<-"):
            quoted = target.prefix != target.text
            doc = Heredoc(target.text, quoted=quoted, strip_tabs=op == "<<-")
            cmd.heredocs.append(doc)
            self.pending.append(doc)
        elif op == "<<<":
            cmd.herestrings.append(target)
        elif op in (">&", "<&") and (target.text.isdigit() or target.text == "-"):
            cmd.redirects.append(Redirect(op, None, fd))
        else:
            cmd.redirects.append(Redirect(op, target, fd))

    def _heredoc_bodies(self) -> None:
        """Each pending here-document's body: the lines up to its delimiter."""
        for doc in self.pending:
            self.tick()
            tabs = "\t*" if doc.strip_tabs else ""
            line = re.compile(f"^{tabs}{re.escape(doc.delimiter)}$", re.MULTILINE)
            end = line.search(self.text, self.i)
            if end is None:  # unterminated: the shell reads to the end
                doc.body, self.i = self.text[self.i :], len(self.text)
            else:
                doc.body, self.i = self.text[self.i : end.start()], end.end() + 1
            if not doc.quoted:
                self._expansions(doc.body)
        self.pending.clear()

    def _expansions(self, body: str) -> None:
        """Text the shell expands as a double-quoted word, `"` aside (an unquoted
        here-document's body, the words inside a `${…}`): each `$(…)` and backquote in it
        runs when the shell expands it."""
        inner = _Lexer(body, self.budget, self.depth)
        n = len(body)
        while (special := _BODY_SPECIAL.search(body, inner.i)) is not None:
            self.tick()
            inner.i = special.start()
            if body[inner.i] == "\\":
                inner.i += 2  # `\$`, `\``: the character itself
            elif body[inner.i] == "$":
                inner._dollar(in_double_quotes=True)
            else:
                inner._backticks()
            inner.i = min(inner.i, n)
        self.out.extend(inner.out)

    def _word(self) -> Word:
        text, n = self.text, len(self.text)
        parts: list[str] = []
        prefix: list[str] = []
        plain = True  # no quote or expansion seen yet: what follows is still the prefix
        dynamic = False
        while self.i < n:
            self.tick()
            c = text[self.i]
            run = _PLAIN.match(text, self.i)
            if run is not None:
                chunk = run.group()
                parts.append(chunk)
                if plain:
                    prefix.append(chunk)
                if _expands(chunk):
                    dynamic = True
                self.i = run.end()
                continue
            if c == "\\":
                if text.startswith("\\\n", self.i):
                    self.i += 2
                    continue
                parts.append(text[self.i + 1 : self.i + 2])
                self.i += 2
            elif c == "'":
                end = text.find("'", self.i + 1)
                if end < 0:
                    raise Unreadable("a ' quote is not closed")
                parts.append(text[self.i + 1 : end])
                self.i = end + 1
            elif c == '"':
                self.i += 1
                quoted, computed = self._double_quoted()
                parts.append(quoted)
                dynamic = dynamic or computed
            elif c == "$":
                expanded, computed = self._dollar(in_double_quotes=False)
                parts.append(expanded)
                dynamic = dynamic or computed
            elif c == "`":
                self._backticks()
                parts.append(DYN)
                dynamic = True
            else:
                break  # a blank or an operator ends the word
            plain = False
        return Word("".join(parts), dynamic=dynamic, prefix="".join(prefix))

    def _double_quoted(self) -> tuple[str, bool]:
        text = self.text
        parts: list[str] = []
        dynamic = False
        while True:
            self.tick()
            special = _DQ_SPECIAL.search(text, self.i)
            if special is None:
                raise Unreadable('a " quote is not closed')
            parts.append(text[self.i : special.start()])
            self.i = special.start()
            c = text[self.i]
            if c == '"':
                self.i += 1
                return "".join(parts), dynamic
            if c == "\\":
                following = text[self.i + 1 : self.i + 2]
                if following == "\n":
                    self.i += 2
                elif following and following in '$`"\\':
                    parts.append(following)
                    self.i += 2
                else:
                    parts.append("\\")
                    self.i += 1
            elif c == "$":
                expanded, computed = self._dollar(in_double_quotes=True)
                parts.append(expanded)
                dynamic = dynamic or computed
            else:
                self._backticks()
                parts.append(DYN)
                dynamic = True

    def _dollar(self, *, in_double_quotes: bool) -> tuple[str, bool]:
        """What a `$` starts: a substitution, a parameter, a quote, or itself."""
        text = self.text
        following = text[self.i + 1 : self.i + 2]
        if following == "(":
            self.i += 2
            self._nested()
            return DYN, True
        if following == "{":
            start = self.i + 2
            self.i = self._closing_brace(start)
            # `${x:-$(cmd)}`: a word inside the braces is expanded, its substitutions run
            self._expansions(text[start : self.i - 1])
            return DYN, True
        if following == "'" and not in_double_quotes:
            body = _ANSI_C_BODY.match(text, self.i + 2)
            if body is None:
                raise Unreadable("a $' quote is not closed")
            self.i = body.end()
            return _ansi_c(body.group()[:-1]), False
        if following == '"' and not in_double_quotes:
            self.i += 2
            return self._double_quoted()
        name = _PARAMETER.match(text, self.i + 1)
        if name is not None:
            self.i = name.end()
            return DYN, True
        self.i += 1
        return "$", False

    def _closing_brace(self, start: int) -> int:
        """The index after the `}` that closes a `${`, nested braces counted."""
        depth = 1
        i = start
        while True:
            self.tick()
            found = _BRACES.search(self.text, i)
            if found is None:
                raise Unreadable("a ${ is not closed")
            depth += 1 if found.group() == "{" else -1
            i = found.end()
            if depth == 0:
                return i

    def _nested(self) -> None:
        """A `$(…)` or process substitution: its commands join the output."""
        inner = _Lexer(self.text, self.budget, self.depth + 1)
        inner.i = self.i
        inner.run(stop=")")
        self.i = inner.i
        self.out.extend(inner.out)

    def _backticks(self) -> None:
        body = _BACKTICK_BODY.match(self.text, self.i + 1)
        if body is None:
            raise Unreadable("a ` quote is not closed")
        self.i = body.end()
        source = re.sub(r"\\([`$\\])", r"\1", body.group()[:-1])
        inner = _Lexer(source, self.budget, self.depth + 1)
        inner.run(stop=None)
        self.out.extend(inner.out)


def _expands(chunk: str) -> bool:
    """Whether unquoted text holds a glob or a brace the shell would expand."""
    if "*" in chunk or "?" in chunk or "[" in chunk:
        return True
    return "{" in chunk and _BRACE_EXPANSION.search(chunk) is not None


def _ansi_c(body: str) -> str:
    """The text of a `$'…'` quote, its escapes decoded as bash does."""

    def decode(match: re.Match[str]) -> str:
        escape = match.group(1)
        if escape[0] in "xuU":
            return chr(min(int(escape[1:], 16), 0x10FFFF))
        if escape[0] in "01234567":
            return chr(int(escape, 8) & 0xFF)
        if escape[0] == "c":
            return chr(ord(escape[1]) & 0x1F)
        return _SIMPLE_ESCAPES.get(escape, "\\" + escape)

    return _ANSI_C_ESCAPE.sub(decode, body)
