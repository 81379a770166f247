"""Whether an exercise's hint names the answer: the expected value in any spelling a reader could copy, or,
for a layout or a list of numbers, the expected part that the reader's answer gets wrong. Shared by
tests/test_exercises.py (the checkers in CPython) and tests/test_book_html.py (the answer boxes in the
browser).
"""

import re

from cutelite import Layout, get, rank
from cutelite.int_tuple import fmt, is_int
from cutelite.teach.answers import AnswerError, Word, canon, expected_value, read


def _number(n):
    """A whole number standing alone in a text (static _n included), not as a digit of another number."""
    return re.compile(rf"(?<![\w.]){'_?' if n >= 0 else ''}{re.escape(str(n))}(?![\w.])")


def spellings(value):
    """The texts a hint could name `value` by (a canonical answer value)."""
    if isinstance(value, Word):
        return [str(value).casefold()]
    if isinstance(value, Layout):
        return [str(value), str(value).replace("_", "")]
    if is_int(value):
        return []                               # a number alone: see _number
    text = repr(value)
    return [text, text.replace(" ", ""), text.replace("(", "[").replace(")", "]"),
            text.replace("(", "[").replace(")", "]").replace(" ", "")]


def _flat(x):
    return [v for item in x for v in _flat(item)] if isinstance(x, tuple) else [x]


def _parts(x):
    """Every part of the value x a hint may quote: a layout's modes and their numbers, a tuple's numbers."""
    if isinstance(x, Layout):
        modes = [p for i in range(rank(x)) for p in (get(x, i).shape, get(x, i).stride)]
        return {fmt(p) for p in modes} | {fmt(v) for p in modes for v in _flat(p)}
    return set(_flat(x)) if isinstance(x, tuple) else {x}


def _wrong_parts(want, got):
    """The texts of the parts of `want` that `got` gets wrong: a layout's modes, a list's numbers."""
    if isinstance(want, Layout) and isinstance(got, Layout) and rank(got) == rank(want):
        return [fmt(p) for i in range(rank(want)) for p, q in ((get(want, i).shape, get(got, i).shape),
                                                                  (get(want, i).stride, get(got, i).stride))
                if p != q]
    if isinstance(want, tuple) and isinstance(got, tuple):
        w, g = _flat(want), _flat(got)
        if len(w) == len(g):
            return [n for n, m in zip(w, g) if is_int(n) and n != m]
    return []


def leak(hint, expected, answer):
    """The piece of `hint` that names `expected` (or its part that `answer` gets wrong); None if none.
    What the hint quotes of the reader's answer (all of it, or a mode or a number of it) does not count."""
    if "not yet " in hint:                      # the checker's line: "not yet NAME: hint"
        hint = hint.split("not yet ", 1)[1].split(": ", 1)[-1]
    want = canon(expected_value(expected))
    try:
        got = read(answer)
    except AnswerError:
        got = None
    for quote in sorted({str(answer), str(got), repr(got), repr(answer)}, key=len, reverse=True):
        if len(quote) > 2:
            hint = hint.replace(quote, " ")
    for text in spellings(want):
        if text in (hint.casefold() if isinstance(want, Word) else hint):
            return text
    parts = [want] if is_int(want) and not isinstance(want, bool) else _wrong_parts(want, got)
    quoted = _parts(got) if got is not None else set()
    for part in parts:
        if part in quoted:                      # the hint may be quoting that part of the answer
            continue
        alone = _number(part) if is_int(part) else re.compile(rf"(?<![\w.]){re.escape(part)}(?![\w.])")
        if alone.search(hint):
            return str(part)
    return None
