"""Text shaped like an instruction to an agent, and how export shows such a field. Pure.

A coding agent reads `failgate export`; a title or a note written to steer it
(ignore previous instructions, you must now run …) must not reach its context
as written. A field one of these rules matches is shown as a marker with the
field's hash instead. The rules are versioned like the credential rules: bump
DIRECTIVE_RULES_VERSION whenever a rule changes what it matches.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import NamedTuple

from failgate_hooks.core import sanitize
from failgate_hooks.core.credentials import redact

DIRECTIVE_RULES_VERSION = 2


class DirectiveRule(NamedTuple):
    """One shape of text addressed to an agent rather than to a person reading a risk."""

    name: str
    pattern: re.Pattern[str]


# Matched against normalised text (NFKC, casefolded, invisible characters removed,
# runs of whitespace made one space), so spacing, case and zero-width tricks do not
# hide a phrase. Narrow on purpose: a human note saying "the budget must scale" is
# a fact about a risk; "you must now run" is an order to whoever reads it.
DIRECTIVE_RULES: tuple[DirectiveRule, ...] = (
    DirectiveRule(
        "ignore-instructions",
        re.compile(
            r"\b(?:ignore|disregard|forget|override|bypass)\b(?: [\w'-]+){0,4}? "
            r"(?:instructions?|prompts?|rules|directions|directives|guidelines|guardrails"
            r"|polic(?:y|ies)|context|messages?)\b"
        ),
    ),
    DirectiveRule(
        "disregard",
        re.compile(
            r"\bdisregard (?:all|any|every|everything|the|previous|prior|above|earlier"
            r"|your|these|those|this|that)\b"
        ),
    ),
    DirectiveRule(
        "you-must-now",
        re.compile(
            r"\byou (?:must|should|shall|need to|have to|are to|will)"
            r" (?:now|immediately|instead|first|always|henceforth)\b"
            r"|\byou are (?:now )?(?:required|instructed|ordered|authori[sz]ed|permitted) to\b"
        ),
    ),
    DirectiveRule(
        "from-now-on",
        re.compile(r"\b(?:from now on|henceforth|going forward),? (?:you|the (?:ai|agent))\b"),
    ),
    DirectiveRule(
        "new-instructions",
        re.compile(
            r"\b(?:new|updated|real|actual|revised|additional|hidden|secret) "
            r"(?:instructions?|directives?|orders|task)\b ?:"
            r"|\binstructions? (?:for|to) (?:the |any |all )?(?:ai|assistant|agent|model|llm)s?\b"
        ),
    ),
    DirectiveRule(
        "system-prompt",
        re.compile(
            r"\bsystem ?prompts?\b|\bsystem message\b|\bdeveloper (?:message|mode)\b"
            r"|\bjailbreak|\bprompt injection\b"
        ),
    ),
    DirectiveRule(
        "as-an-ai",
        re.compile(
            r"\bas an? (?:ai|a\.i\.|language model|large language model|llm|(?:ai )?assistant"
            r"|(?:coding |ai )?agent)\b"
        ),
    ),
    DirectiveRule(
        "addressed-to-agent",
        re.compile(
            r"\b(?:dear|attention|note to(?: the)?|hey|hello|hi) (?:ai|assistant|agent|model|llm"
            r"|copilot|claude|chatgpt|gpt|codex|gemini|cursor)s?\b"
            r"|\b(?:ai|coding|llm) (?:agents?|assistants?) ?[:,] "
        ),
    ),
    DirectiveRule(
        "role-markup",
        re.compile(
            r"<\|(?:im_start|im_end|system|user|assistant|endoftext)\|>|\[/?inst\]|<<sys>>"
            r"|</?(?:system|instructions?|assistant)>|(?:^|\n) ?(?:system|assistant) ?:"
        ),
    ),
    DirectiveRule(
        "conceal",
        re.compile(
            r"\bdo not (?:tell|inform|mention|reveal|report|show|alert) (?:this )?(?:to )?"
            r"(?:the )?(?:user|human|reviewer|developer|operator|anyone)\b"
        ),
    ),
    DirectiveRule(
        "gate-bypass",
        # How to switch the gate off, written where an agent would read it as a hint.
        re.compile(r"--no-verify\b|\bskip=[\w,]*failgate\b|\bfailgate_trust_ledger=1\b"),
    ),
)

# Characters with no glyph (zero-width spaces and joiners, soft hyphen, BOM, tags
# that mirror no ASCII): removed before matching, so they cannot split a phrase.
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Cc", "Co", "Cs", "Mn"})
_SPACES = re.compile(r"[^\S\n]+")
_SPACING_CONTROLS = re.compile("[\t\x0b\x0c\r\x1c-\x1f\x85]")
_CSI = re.compile(r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?")
_BLANK_LINES = re.compile(r" ?\n[ \n]*")
# Tag characters U+E0020-U+E007E mirror printable ASCII: invisible to a person, read
# as their letters by a language model.
_TAGS_AS_ASCII = {tag: tag - 0xE0000 for tag in range(0xE0020, 0xE007F)}


def normalise(text: str, *, strip_sequences: bool = True) -> str:
    """`text` as the directive rules see it: what a reader sees, folded and spaced simply."""
    # With `strip_sequences`, escape sequences go whole, as the sanitiser removes them
    # before printing (string sequences such as OSC to their end); without, only CSI
    # sequences and controls go, so text an unterminated one would swallow is read too.
    text = _SPACING_CONTROLS.sub(" ", text)  # they separate words where they stood
    text = sanitize.clean(text) if strip_sequences else _CSI.sub("", text)
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(
        ch for ch in text if ch == "\n" or unicodedata.category(ch) not in _INVISIBLE_CATEGORIES
    )
    text = _SPACES.sub(" ", text)
    return _BLANK_LINES.sub("\n", text).strip()


def directive_rule(text: str) -> str | None:
    """The name of the first directive rule `text` matches, or None."""
    # Every reading counts: a directive hidden behind an escape sequence is still one,
    # and so is one written in tag characters, which a language model reads as ASCII.
    readings = [normalise(text), normalise(text, strip_sequences=False)]
    decoded = text.translate(_TAGS_AS_ASCII)
    if decoded != text:
        readings.append(normalise(decoded, strip_sequences=False))
    for seen in dict.fromkeys(readings):
        # A phrase broken over lines is still one phrase; role markup needs the breaks.
        flat = seen.replace("\n", " ")
        for rule in DIRECTIVE_RULES:
            if rule.pattern.search(seen if rule.name == "role-markup" else flat):
                return rule.name
    return None


def text_digest(text: str) -> str:
    """The first 16 hex of sha256 over the field's UTF-8 bytes, as parsed from the ledger."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def quarantined(text: str) -> str:
    """The marker shown instead of a directive-shaped field."""
    return f"[quarantined: directive-shaped text sha256:{text_digest(text)}]"


def shown(text: str) -> str:
    """A free-text field as export shows it: quarantined with its hash, or cleaned."""
    # Credentials are redacted too: a leaked secret waiting for its retraction must
    # not travel on into an agent's context.
    if directive_rule(text) is not None:
        return quarantined(text)
    return redact(sanitize.clean(text))
