"""Ref names and ref globs are written in full (`refs/heads/main`), never short (`main`).

A push names its destination in full, and every ref a gate's scope or the
configuration lists is matched against that full name: a short `main` matches
nothing, so it would turn a gate off or protect nothing without a word. A short
name is therefore refused where it is written, and never expanded: `main` may
be a branch or a tag, and guessing wrong is the same silence. Pure.
"""

from __future__ import annotations

from failgate_hooks.core.sanitize import clip

REF_PREFIX = "refs/"
# The namespaces under refs/ a short name may already start with (`heads/main`).
_NAMESPACES = ("heads/", "tags/", "remotes/")
# How much of a refused name a message quotes.
_SHOWN = 120


def short_ref_problem(name: str) -> str | None:
    """Why `name`, a ref name or a ref glob, is not written in full, with the full
    form to write instead; None when it starts with refs/."""
    if name.startswith(REF_PREFIX):
        return None
    return (
        f"expected a full ref name starting with {REF_PREFIX}, got {clip(repr(name), _SHOWN)}: "
        f"a short name matches no ref, so write {full_forms(name)}"
    )


def full_forms(name: str) -> str:
    """The full names a short `name` may have meant, for a hint: both when it is unclear."""
    tail = clip(name.strip("/"), _SHOWN) or "main"
    if tail.startswith(_NAMESPACES):
        return REF_PREFIX + tail
    return f"{REF_PREFIX}heads/{tail} for branches, or {REF_PREFIX}tags/{tail} for tags"
