"""A reader's answer as one value, whatever its spelling: what every exercise checker compares.

The notebook passes Python values, the live page's answer box passes the text typed into it; both go
through `read`, so the same answer gets the same verdict in both places. Equivalent spellings read the same:

    (8,4):(4,1)  (_8,_4):(_4,_1)  (8, 4) : (4, 1)  Layout((8, 4), (4, 1))
    make_layout(make_shape(8, 4), make_stride(4, 1))  make_layout((8, 4), LayoutRight)
    Layout<Shape<_8,_4>, Stride<_4,_1>>  cute::make_layout(...)  ((8, 4), (4, 1)) where a layout is expected
    cute.make_layout((8, 4), stride=(4, 1))               the CuTe DSL's spelling
    Sw<5,0,6>  Swizzle<5,0,6>{}  Swizzle(5, 0, 6)  S<5,0,6>  cute.make_swizzle(5, 0, 6)  -> the triple (5, 0, 6)
    [1, 3]  (1, 3)  1, 3  a NumPy array in a notebook       -> (1, 3)
    _24  Int<24>{}  4*1 + 16*8  dyn(24)                   -> an int
    "cute::SM75_U16x8_LDSM_T"  SM75_U16x8_LDSM_T         -> the word SM75_U16x8_LDSM_T

The value: ints (static and dynamic alike: an answer is a value, not a type), tuples for every sequence,
Layouts with plain int shapes and strides, words (Word) for names and other free text. Nothing is eval'd:
typed text goes through the small parser below (ints, + - * // %, tuples, lists, `shape:stride`, and a
few constructors by name, with C++'s `cute::` or the DSL's `cute.` in front, and the DSL's `stride=`).
Standard library only: the live page runs this in the browser.
"""

import re
from typing import NamedTuple

from ..int_tuple import is_int, is_tuple
from ..layout import ComposedLayout, Layout, LayoutLeft, LayoutRight, make_layout
from ..swizzle import Swizzle

__all__ = ["AnswerError", "Word", "read", "expected_value", "read_text", "canon", "shown", "MAX_TEXT", "MAX_DEPTH"]

MAX_TEXT = 1000  # characters: every answer in the book is much shorter
MAX_DEPTH = 64   # levels of nesting (a value and each tuple's entries one level below it), text and values alike
_TOO_LARGE = 10 ** MAX_TEXT   # a number this large takes more characters than an answer may have


class AnswerError(ValueError):
    """The answer cannot be read; the message says why, in words for the reader."""


class Word(str):
    """Free text as an answer ("garbage", "A.T", a copy atom's name): compared without case, spaces,
    quotes, a `cute::` prefix or a trailing `{}` / `()`."""

    def __new__(cls, text):
        text = re.sub(r"\s+", "", str(text))
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            text = text[1:-1]
        text = re.sub(r"^(cute::)+", "", text)
        text = re.sub(r"(\{\}|\(\))$", "", text)
        return super().__new__(cls, text)

    def __eq__(self, other):
        return isinstance(other, str) and self.casefold() == Word(other).casefold()

    def __hash__(self):
        return hash(self.casefold())


def canon(x):
    """A Python value as the canonical answer value (see the module docstring); values it does not know
    (a dict, a float, a Tensor) are returned as they are, for the checker to name. Raises AnswerError, in
    words, for a value nested more than MAX_DEPTH deep (a list that holds itself, too) or a number with more
    digits than an answer has characters: as read_text refuses such text."""
    return _canon(x, 1)


def _canon(x, depth):
    if depth > MAX_DEPTH:
        raise AnswerError("cannot read that answer: it is nested too deeply")
    if x is None or x is Ellipsis:
        return None
    if isinstance(x, Word):
        return x
    if isinstance(x, str):
        return read_text(str.__str__(x))
    if hasattr(x, "tolist") and not isinstance(x, (Layout, ComposedLayout)):  # NumPy arrays and scalars
        x = x.tolist()
    if isinstance(x, bool):
        return x
    if is_int(x):
        if not -_TOO_LARGE < int(x) < _TOO_LARGE:
            raise AnswerError(f"cannot read that answer: a number of more than {MAX_TEXT} digits")
        return int(x)
    if isinstance(x, (list, tuple)):
        return tuple(_canon(v, depth + 1) for v in x)
    if isinstance(x, Swizzle):
        return (x.bits, x.base, x.shift)
    if isinstance(x, Layout):
        return Layout._make(_ints(x.shape), _ints(x.stride))
    return x


def _ints(t):
    return tuple(_ints(v) for v in t) if is_tuple(t) else int(t) if is_int(t) else t


def read(answer, like=None):
    """The canonical value of `answer` (a Python value or typed text); None when not answered (None, or
    empty text). Where `like` (the expected value) is a Word, text that cannot be read as a value is an
    answer in words ("A.T"). Raises AnswerError, in words, for text that cannot be read."""
    if isinstance(answer, str) and not isinstance(answer, Word):
        text = str.__str__(answer)
        if isinstance(like, Word):
            try:
                return read_text(text)
            except AnswerError:
                return Word(text)
        return read_text(text)
    try:
        return canon(answer)
    except AnswerError:
        raise
    except Exception as e:  # noqa: BLE001 - the reader's own object failed while it was read: say so, in words
        raise AnswerError(f"cannot read that answer: reading its {type(answer).__name__} raised "
                          f"{type(e).__name__}") from None


def expected_value(x):
    """The canonical value of an expected answer or a hint's key: as `read`, but text that does not read
    as a value is a Word ("A.T")."""
    if isinstance(x, str) and not isinstance(x, Word):
        try:
            return read_text(x)
        except AnswerError:
            return Word(x)
    return canon(x)


def shown(x):
    """How a hint shows a canonical value: Python's tuples, CuTe's layouts, words in quotes; a value that
    cannot be shown (a reader's object whose repr fails) by its type's name."""
    if isinstance(x, Word):
        return repr(str(x))
    if isinstance(x, (Layout, ComposedLayout)):
        return str(x)
    try:
        return repr(x)
    except Exception:  # noqa: BLE001 - a reader's own object: name its type instead
        return f"a {type(x).__name__}"


# ---- typed text --------------------------------------------------------------------------------------------
_TOKEN = re.compile(r"""\s*(?:
    (?P<num>[0-9]+)
  | (?P<name>(?:[A-Za-z_][A-Za-z0-9_]*(?:::|\.))*[A-Za-z_][A-Za-z0-9_]*)
  | (?P<str>'[^'\n]*'|"[^"\n]*")
  | (?P<op>//|\{\}|[()\[\]<>,:+\-*%{}=])
)""", re.X)

_PREFIX = re.compile(r"^((cute|std)::|(cutlass\.)?cute\.)+")   # C++'s namespaces, the DSL's module
_TUPLE = {"make_shape", "make_stride", "make_coord", "make_tuple", "make_step", "make_tile", "Shape",
          "Stride", "Coord", "Step", "Tile", "tuple"}
_INT = {"Int", "C", "dyn"}
_TAGS = {"LayoutLeft": LayoutLeft, "LayoutRight": LayoutRight, "GenColMajor": LayoutLeft,
         "GenRowMajor": LayoutRight}


def _tokens(text):
    pos, out = 0, []
    while pos < len(text):                          # text is stripped: no trailing spaces
        m = _TOKEN.match(text, pos)
        if not m:
            raise AnswerError(f"cannot read {_quote(text)}: {text[pos:].strip()[:20]!r} is not part of an answer "
                              "(whole numbers, tuples, layouts, names)")
        kind = m.lastgroup
        tok = m.group(kind)
        if kind == "name":
            tok = _PREFIX.sub("", tok)
        out.append((kind, tok))
        pos = m.end()
    return out


def _quote(text):
    return repr(text if len(text) <= 60 else text[:57] + "...")


def read_text(text):
    """The canonical value of typed text; None for empty text. Raises AnswerError in words."""
    text = text.strip()
    if not text:
        return None
    if len(text) > MAX_TEXT:
        raise AnswerError(f"that answer is {len(text)} characters long; answers here are at most {MAX_TEXT}")
    toks = _tokens(text)
    if len(toks) == 1 and toks[0][0] == "str":      # quotes do not matter: '3:2' is 3:2, 'A.T' is A.T
        inner = toks[0][1][1:-1]
        try:
            return read_text(inner) if inner.strip() else Word(inner)
        except AnswerError:
            return Word(inner)
    if len(toks) == 1 and toks[0][0] == "name" and not re.fullmatch(r"_[0-9]+", toks[0][1]) \
            and toks[0][1] != "None":
        return Word(toks[0][1])   # a bare name: an answer in words
    return canon(_Parser(text, toks).top())


class _Keyword(NamedTuple):
    """`name=value` in a call's arguments (the DSL's `stride=`)."""
    name: str
    value: object


class _Parser:
    """Recursive descent: top := item (',' item)* ; item := sum (':' sum)? ; sum := product (+|- product)* ;
    product := unary (*|//|% unary)* ; unary := -unary | atom ; atom := int | _N | 'word' | name args? |
    ( items ) | [ items ]; args := ( items ) | < items > , either followed by an optional {}; in args an item
    may be `name=item` (a keyword)."""

    def __init__(self, text, toks):
        self.text, self.toks, self.i, self.depth = text, toks, 0, 0

    def peek(self):
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def fail(self, why):
        raise AnswerError(f"cannot read {_quote(self.text)}: {why}")

    def take(self, want=None):
        if self.i >= len(self.toks):
            self.fail(f"it ends early (expected {want!r})" if want else "it ends early")
        kind, tok = self.toks[self.i]
        if want is not None and tok != want:
            self.fail(f"expected {want!r} where it has {tok!r}")
        self.i += 1
        return kind, tok

    def top(self):
        items, trailing = self.items(end=None)
        self.no_keywords(items, "outside a call")
        if self.peek() == "o":
            self.fail("that is a swizzled layout; the answers here are a swizzle alone (Sw<B,M,S>), "
                      "a layout or numbers")
        if self.peek() is not None:
            self.fail(f"unexpected {self.peek()!r}")
        return items[0] if len(items) == 1 and not trailing else tuple(items)

    def items(self, end):
        """Comma-separated items up to `end` (not taken), and whether a comma ends them."""
        out = []
        if self.peek() == end:
            return out, False
        while True:
            out.append(self.item())
            if self.peek() != ",":
                return out, False
            self.take(",")
            if self.peek() == end:
                return out, True

    def enter(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail("it is nested too deeply")

    def item(self):
        self.enter()
        if self.peek() is not None and self.toks[self.i][0] == "name" and self.i + 1 < len(self.toks) \
                and self.toks[self.i + 1][1] == "=":
            name = self.take()[1]
            self.take("=")
            value = _Keyword(name, self.item())
            self.depth -= 1
            return value
        left = self.sum()
        if self.peek() == ":":
            self.take(":")
            right = self.sum()
            try:
                left = Layout(left, right)
            except (TypeError, ValueError) as e:
                self.fail(f"{shown(canon(left))}:{shown(canon(right))} is not a layout ({e})")
        self.depth -= 1
        return left

    def sum(self):
        value = self.product()
        while self.peek() in ("+", "-"):
            op = self.take()[1]
            rhs = self.product()
            value = self.arith(op, value, rhs)
        return value

    def product(self):
        value = self.unary()
        while self.peek() in ("*", "//", "%"):
            op = self.take()[1]
            rhs = self.unary()
            value = self.arith(op, value, rhs)
        return value

    def arith(self, op, a, b):
        if not (is_int(a) and is_int(b)):
            self.fail(f"{op} works on whole numbers here")
        if op in ("//", "%") and b == 0:
            self.fail("it divides by zero")
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        return a // b if op == "//" else a % b

    def unary(self):
        if self.peek() != "-":
            return self.atom()
        self.take("-")
        self.enter()
        value = self.unary()
        self.depth -= 1
        if not is_int(value):
            self.fail("a minus sign needs a number")
        return -value

    def atom(self):
        kind, tok = self.take()
        if kind == "num":
            return int(tok)
        if kind == "str":
            return Word(tok)
        if tok in ("(", "["):
            end = ")" if tok == "(" else "]"
            items, trailing = self.items(end)
            self.take(end)
            self.no_keywords(items, "inside a tuple")
            if tok == "(" and len(items) == 1 and not trailing:
                return items[0]   # (x) is x, as in Python
            return tuple(items)
        if kind == "name":
            return self.named(tok)
        self.fail(f"unexpected {tok!r}")

    def named(self, name):
        if re.fullmatch(r"_[0-9]+", name):        # a static int as CuTe prints it, _8
            self.braces()
            return int(name[1:])
        if name in _TAGS:
            self.braces()
            return _TAGS[name]
        if name == "None":
            return None
        args = self.args()
        if args is None:
            self.fail(f"{name!r} is not a value here")
        keywords = {a.name: a.value for a in args if isinstance(a, _Keyword)}
        args = [a for a in args if not isinstance(a, _Keyword)]
        if name == "make_layout" and set(keywords) <= {"stride"} and len(args) == 1:   # the DSL's spelling
            args += list(keywords.values())
        elif keywords:
            self.fail(f"{name}(...) takes no keyword {next(iter(keywords))}= here")
        if name in _TUPLE:
            return tuple(args)
        if name in _INT and len(args) == 1 and is_int(args[0]):
            return args[0]
        if name in ("Layout", "make_layout") and 1 <= len(args) <= 2:
            try:
                return make_layout(*args) if name == "make_layout" else Layout(*args)
            except (TypeError, ValueError) as e:
                self.fail(f"{name}({', '.join(shown(canon(a)) for a in args)}) is not a layout ({e})")
        if name in ("Swizzle", "Sw", "S", "make_swizzle") and len(args) == 3 and all(is_int(a) for a in args):
            return tuple(args)
        self.fail(f"{name}(...) is not something an answer here can use")

    def args(self):
        """The arguments of a call f(...) or a template T<...> (then an optional {}); None if neither."""
        if self.peek() not in ("(", "<"):
            return None
        end = ")" if self.take()[1] == "(" else ">"
        items, _ = self.items(end)
        self.take(end)
        if self.peek() in ("(", "{}"):      # Int<8>{} or Int<8>()
            if self.peek() == "(":
                self.take("(")
                self.take(")")
            else:
                self.take("{}")
        return items

    def no_keywords(self, items, where):
        for item in items:
            if isinstance(item, _Keyword):
                self.fail(f"{item.name}= {where}")

    def braces(self):
        if self.peek() == "{}":
            self.take("{}")
