"""Data in failgate's Markdown, read back by GitHub's own renderer (cmark-gfm).

Each test renders what failgate writes, parses the HTML GitHub would show, and
checks that a hostile field stayed inside its table cell, its code span or its
fence, and reads back as the data it was.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from html.parser import HTMLParser

import cmarkgfm
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from failgate_hooks.core import sanitize
from failgate_hooks.core.ci import CiRun, CiTarget
from failgate_hooks.core.decide import decide
from failgate_hooks.core.events import Problem, Status, Verification
from failgate_hooks.core.export import ExportedEntity, ExportedEvent, ExportReport
from failgate_hooks.core.gates import (
    Assessment,
    Context,
    GateState,
    Policy,
    VerifierOutcome,
    VerifierResult,
)
from failgate_hooks.core.ids import short_id
from failgate_hooks.core.replay import ReplayReport, ReplayStep, StepState
from failgate_hooks.render import markdown
from failgate_hooks.render.export import render_export_markdown
from failgate_hooks.render.github import step_summary
from failgate_hooks.render.replay import render_receipt

# A pipe, backtick runs of one to three (a fence on a line of its own), newlines,
# HTML, an entity, a reference, a backslash before a pipe: each one breaks a
# table cell, a code span or a fence when it is not escaped.
HOSTILE = "a | b `` c\n```\nd <b>x</b> &amp; #1 \\| `"
ONE_LINE = sanitize.clean_line(HOSTILE)
WHEN = dt.datetime(2026, 11, 29, 23, 5, tzinfo=dt.UTC)


# --------------------------------------------------------------------------- reading HTML


@dataclass(eq=False)  # nodes are told apart by identity
class Node:
    tag: str
    children: list[Node | str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text for c in self.children)

    def all(self, tag: str) -> list[Node]:
        """Every node with `tag` below this one, in document order."""
        found = []
        for child in self.children:
            if isinstance(child, Node):
                found += [child] if child.tag == tag else []
                found += child.all(tag)
        return found

    def spans(self) -> list[str]:
        """The text of every inline code span below this one (not code blocks)."""
        return [code.text for code in self.all("code") if code not in self.blocks_code()]

    def blocks_code(self) -> list[Node]:
        return [code for pre in self.all("pre") for code in pre.all("code")]

    def blocks(self) -> list[str]:
        """The text of every fenced code block, without the newline the renderer adds."""
        return [code.text.removesuffix("\n") for code in self.blocks_code()]

    def rows(self) -> list[list[Node]]:
        """Each table row's cells, header rows included."""
        return [[c for c in row.children if isinstance(c, Node)] for row in self.all("tr")]


class _TreeBuilder(HTMLParser):
    VOID = frozenset({"br", "hr", "img", "input"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack = [Node("root")]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag)
        self.stack[-1].children.append(node)
        if tag not in self.VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def html_of(text: str) -> str:
    """`text` as GitHub renders it."""
    return cmarkgfm.github_flavored_markdown_to_html(text)


def parse(html: str) -> Node:
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    return builder.stack[0]


def read(text: str) -> Node:
    """`text` as GitHub renders it, as a tree; no raw HTML may get through."""
    html = html_of(text)
    assert "raw HTML omitted" not in html, text
    return parse(html)


def test_the_reader_sees_a_broken_row_span_and_fence() -> None:
    """Unescaped, the hostile field breaks every one: the tests below can fail."""
    row = parse(html_of(f"| x | y |\n|---|---|\n| {ONE_LINE} | z |\n")).rows()[1]
    assert [cell.text for cell in row] != [ONE_LINE, "z"]
    assert parse(html_of(f"`{ONE_LINE}`")).spans() != [ONE_LINE]
    assert parse(html_of(f"```text\n{HOSTILE}\n```\n")).blocks() != [HOSTILE]
    assert "raw HTML omitted" in html_of(ONE_LINE)


# --------------------------------------------------------------------------- the escapers

# Any text, as a user or a verifier could write it.
TEXT = st.text(max_size=40)


@given(TEXT)
@example("    four spaces would make a code block")
@example("- a list item")
@example("12) a numbered item")
@example("# a heading")
@example("---")
@example("+")
@example("see https://example.org/a_b#c and www.example.org|x")
@example("mail your token to security@evil.example")
@example("mailto:ops@evil.example or xmpp:ops@evil.example/desk")
@example("a\u2060@b.example")
@example(HOSTILE)
@settings(max_examples=300, deadline=None)
def test_text_reads_back_as_the_line_in_a_paragraph_and_in_a_cell(value: str) -> None:
    line = sanitize.clean_line(value).strip()
    assume(line.strip(" \t"))
    paragraph = read(markdown.text(value))
    assert shown(paragraph.all("p")[0]) == line
    row = read(f"| x | y |\n|---|---|\n| {markdown.text(value)} | z |\n")
    assert [shown(cell) for cell in row.rows()[1]] == [line.strip(" \t"), "z"]
    assert not paragraph.all("a") and not row.all("a")  # no field makes a link


def shown(node: Node) -> str:
    """What a reader sees of `node`: its text without the word joiners `text` adds."""
    return node.text.replace("\u2060", "")


@given(TEXT)
@example(" spaced ")
@example(" \xa0 ")
@example("`")
@example(HOSTILE)
@settings(max_examples=300, deadline=None)
def test_a_code_span_reads_back_as_the_line_in_a_paragraph_and_in_a_cell(value: str) -> None:
    line = sanitize.clean_line(value)
    assume(line)
    assert read(f"x {markdown.code(value)} y").spans() == [line]
    row = read(f"| x | y |\n|---|---|\n| {markdown.code(value, in_table=True)} | z |\n")
    cells = row.rows()[1]
    assert len(cells) == 2 and cells[0].spans() == [line] and cells[1].text == "z"


@given(TEXT)
@example(HOSTILE)
@example("````\n   ```\n~~~")
@settings(max_examples=300, deadline=None)
def test_a_fence_reads_back_as_the_text(value: str) -> None:
    body = sanitize.clean(value).rstrip("\n")
    assume(body)
    root = read("\n".join(markdown.fenced(value)) + "\nafter\n")
    assert root.blocks() == [body]
    assert root.all("p")[-1].text == "after"


def test_empty_data_is_shown_as_empty_not_as_markup() -> None:
    assert markdown.code("") == "(empty)"
    assert markdown.fenced("\n", empty="(no output)") == ["```text", "(no output)", "```"]


# --------------------------------------------------------------------------- the outputs


def ci_run() -> CiRun:
    item = Assessment(
        entity_key="ops:hostile",
        state=GateState.OPEN,
        reason="needs verifier",
        title=HOSTILE,
        status=Status.OBSERVED,
        event_ids=("20261129T230500Z-7f3a9c1e",),
        commit="9f2a1c4e" + "0" * 32,
        verification=Verification(command=("python3", "check.py")),
        notes=(HOSTILE,),
    )
    result = VerifierResult(
        ("python3", "check.py"), VerifierOutcome.FAILED, exit_code=1, output_tail=HOSTILE
    )
    decision = decide(
        [item],
        {"ops:hostile": result},
        context=Context("push", "refs/heads/main"),
        policy=Policy(protected_refs=("refs/heads/main",)),
        errors=[Problem(code="append-only", message=HOSTILE, path=f"ledger/{HOSTILE}.toml")],
    )
    target = CiTarget("github push", "HEAD", ("base",), HOSTILE, f"refs/heads/{ONE_LINE}")
    return CiRun(target, HOSTILE, "4d1e0b2a" + "0" * 32, decision, notes=(HOSTILE,))


def test_the_ci_step_summary_keeps_hostile_text_in_its_cells_and_spans() -> None:
    root = read(step_summary(ci_run()))
    header, row = root.rows()
    assert [cell.text for cell in header] == ["state", "gate", "title", "why"]
    assert [cell.text for cell in row] == [
        "open (blocking)",
        "ops:hostile",
        ONE_LINE.strip(),
        f"verifier python3 check.py exited 1; {ONE_LINE.strip()}",
    ]
    assert root.spans() == [sanitize.clean_line(short_id(HOSTILE))]
    compared = root.all("p")[0].text
    assert f"against {ONE_LINE.strip()} 4d1e0b2a0000 -> refs/heads/{ONE_LINE}" in compared
    items = [item.text.strip() for item in root.all("li")]
    assert items[:2] == [f"ledger/{ONE_LINE}.toml: {ONE_LINE}".strip(), ONE_LINE.strip()]
    # then what to do next, in the summary's last list
    assert items[2].startswith("`failgate try ops:hostile` runs ops:hostile's verifier"), items


def test_the_export_keeps_hostile_text_in_its_spans_and_fences() -> None:
    event = ExportedEvent(
        event_id=HOSTILE, path=f"ledger/ops/{HOSTILE}.toml", valid=False, problems=(HOSTILE,)
    )
    entity = ExportedEntity(
        entity_key=HOSTILE, state=GateState.INVALID, blocking=True, reason=HOSTILE,
        outcome="invalid", status=None, title=HOSTILE, heads=(HOSTILE,), command=None,
        notes=(HOSTILE,), problems=(), relaxations=(), events=(event,),
    )  # fmt: skip
    report = ExportReport("9f2a1c4e" + "0" * 32, "push", (), (entity,), ())
    root = read(render_export_markdown(report))
    assert root.all("h2")[0].spans() == [ONE_LINE]
    assert root.all("li")[-1].spans() == [ONE_LINE]  # the invalid file, named by its stem
    assert ONE_LINE in [span for li in root.all("li") for span in li.spans()]  # the heads
    clean = sanitize.clean(HOSTILE)
    assert root.blocks() == [clean, clean, clean, f"ledger/ops/{clean}.toml", clean]


def test_the_replay_receipt_keeps_hostile_text_in_its_cells_spans_and_fences() -> None:
    step = ReplayStep("9f2a1c4e" + "0" * 32, HOSTILE, StepState.HELD, 1, 0.5, HOSTILE, HOSTILE)
    report = ReplayReport(
        entity_key="ops:hostile", title=HOSTILE, trigger="push", parent=step.commit,
        repair=step.commit, ledger_rev=step.commit, ledger_rev_label=HOSTILE,
        command=("python3", HOSTILE), pinned=((HOSTILE, "ab" * 20),), timeout_s=5,
        steps=(step, step), changed_files=(HOSTILE,), expect_files=None, author=HOSTILE,
        date="2026-11-29T23:05:00+00:00", reasons=(HOSTILE,), failgate_version="0.1.0",
    )  # fmt: skip
    root = read(render_receipt(report))
    facts = {row[0].text: row[1] for row in root.rows()[1:13]}
    assert all(len(row) == 2 for row in root.rows()[:13])
    assert facts["sandbox"].text == "none: unsandboxed"
    assert facts["entity"].spans() == ["ops:hostile"]
    assert facts["entity"].text == f"ops:hostile {ONE_LINE.strip()}"
    assert facts["repair author"].spans() == [ONE_LINE]
    assert facts["ledger revision"].spans() == [step.commit, ONE_LINE]
    assert facts["pinned files"].spans() == [ONE_LINE, "ab" * 20]
    steps = root.rows()[13:]
    assert [len(row) for row in steps] == [5, 5, 5]
    assert steps[1][1].text == f"HELD: {ONE_LINE.strip()}"
    assert steps[1][4].text == ONE_LINE.strip()
    assert root.all("li")[0].spans() == [ONE_LINE]  # the changed file
    assert root.blocks() == [sanitize.clean(HOSTILE)] * 2
    assert f"REPLAY FAILED: {ONE_LINE.strip()}" in root.all("strong")[0].text
