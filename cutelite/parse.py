"""Read layouts back from text: CuTe's printed form, and what a reader types into a widget.

    parse_layout("(_4,_8):(_1,_4)")      # static ints, as C++ prints them
    parse_layout("(4,_8):(_1,4)")        # dynamic ints print without the underscore
    parse_layout("Sw<3,3,3> o _0 o (_8,_64):(_64,_1)")   # a swizzled layout

Post: parse_layout(str(L)) == L, and str(parse_layout(str(L))) == str(L) (static/dynamic kept).

`parse_operand` reads the looser text of a widget's box, where a plain `4` means the static `_4`:
an int ("4"), a layout ("(4,8):(1,4)", or the pair "((4,8),(1,4))"), a tiler of layouts
("(3:3,(2,4):(1,8))"), a shape tuple ("(4,8)"), or "_". Nothing is ever eval'd: colon-free text goes
through ast.literal_eval (Python literals only), the rest through the small parser below.

Only ASCII digits are numbers; a value nests at most errors.MAX_DEPTH levels and its integers fit in 64
bits; an error message quotes at most about 200 characters of the text.
"""

import ast
import re

from .errors import INT_BITS, MAX_DEPTH, check_tree, quote
from .int_tuple import Dyn, congruent, is_int, is_tuple
from .layout import Layout, _, Underscore
from .layout import ComposedLayout
from .swizzle import Swizzle

__all__ = ["parse_layout", "parse_int_tuple", "parse_operand"]

_TOKEN = re.compile(r"\s*(Sw<|_-?\d+|-?\d+|[(),:<>]|o\b|_)\s*", re.ASCII)
_NUMBER = re.compile(r"_?-?\d+", re.ASCII)


def _need_text(text, op):
    if not isinstance(text, str):
        raise TypeError(f"{op}: expected text (a str), got {quote(text)} ({type(text).__name__})")


def _tokens(text, op):
    pos, out = 0, []
    text = text.strip()
    if not text:
        raise ValueError(f"{op}: empty text")
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"{op}: cannot read {quote(text[pos:], limit=40)} in {quote(text)}")
        out.append(m.group(1))
        pos = m.end()
    return out


class _Parser:
    """Recursive descent over the tokens. `plain` decides what an int without `_` is: Dyn or int; `op`
    is the function that parses, named in its errors."""

    def __init__(self, text, plain, op):
        self.text, self.plain, self.op = text, plain, op
        self.toks, self.i, self.depth = _tokens(text, op), 0, 0

    def fail(self, what):
        raise ValueError(f"{self.op}: {what} in {quote(self.text)}")

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, want=None):
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            self.fail(f"expected {want or 'more'} at token {self.i}, got {quote(tok)}")
        self.i += 1
        return tok

    def number(self, tok):
        """A number token: `_N` is static, `N` is `plain` (dynamic by default)."""
        digits = tok.lstrip("_-")
        if len(digits) > 19 or int(digits) >= 1 << (INT_BITS - 1):
            self.fail(f"{quote(tok, limit=40)} is outside the {INT_BITS}-bit integers of C++ CuTe")
        if tok.startswith("_"):
            return int(tok[1:])
        return self.plain(int(tok))

    def integer(self):
        """A plain int (a swizzle's parameter)."""
        tok = self.take()
        if not re.fullmatch(r"-?\d+", tok, re.ASCII):
            self.fail(f"expected an integer at token {self.i - 1}, got {quote(tok)}")
        return int(self.number(tok))

    def item(self):
        """An int, `_`, a tuple of items, or `shape:stride`; a swizzle `Sw<b,m,s> o off o layout`."""
        if self.peek() == "Sw<":
            return self.swizzled()
        left = self.tuple_or_int()
        if self.peek() == ":":
            self.take(":")
            right = self.tuple_or_int()
            if _has_layout(left) or _has_layout(right):
                self.fail("a shape:stride pair holds only ints")
            return Layout(left, right)
        return left

    def tuple_or_int(self):
        tok = self.take()
        if tok == "(":
            self.depth += 1
            if self.depth > MAX_DEPTH:
                self.fail(f"parentheses nest more than {MAX_DEPTH} levels deep (cutelite's limit)")
            items = [self.item()]
            while self.peek() == ",":
                self.take(",")
                items.append(self.item())
            self.take(")")
            self.depth -= 1
            return tuple(items)
        if tok == "_":
            return _
        if _NUMBER.fullmatch(tok):
            return self.number(tok)
        self.fail(f"unexpected {quote(tok)}")

    def swizzled(self):
        self.take("Sw<")
        bits = self.integer()
        self.take(",")
        base = self.integer()
        self.take(",")
        shift = self.integer()
        self.take(">")
        self.take("o")
        offset = self.number(self.take())
        self.take("o")
        inner = self.item()
        if not isinstance(inner, Layout):
            self.fail("a swizzle needs an inner layout")
        return ComposedLayout(Swizzle(bits, base, shift), offset, inner)

    def done(self, what):
        if self.peek() is not None:
            self.fail(f"unexpected {quote(self.peek())} after the {what}")


def _has_layout(t):
    if is_tuple(t):
        return any(_has_layout(v) for v in t)
    return isinstance(t, (Layout, Underscore))


def parse_int_tuple(text, plain=Dyn):
    """An IntTuple from CuTe's text: `_4` is static (int), `4` is dynamic (Dyn), unless plain=int."""
    _need_text(text, "parse_int_tuple")
    p = _Parser(text, plain, "parse_int_tuple")
    value = p.tuple_or_int()
    p.done("int tuple")
    if _has_layout(value):
        raise ValueError(f"parse_int_tuple: {quote(text)} is not an int tuple")
    return value


def parse_layout(text, plain=Dyn):
    """A Layout (or swizzled ComposedLayout) from CuTe's printed form, e.g. "(_4,_8):(_1,_4)".

    As in C++ printing, `_N` is a static int and `N` a dynamic one (plain=int reads `N` as static too).
    """
    _need_text(text, "parse_layout")
    p = _Parser(text, plain, "parse_layout")
    value = p.item()
    p.done("layout")
    if not isinstance(value, (Layout, ComposedLayout)):
        raise ValueError(f"parse_layout: {quote(text)} is not a layout (write shape:stride)")
    return value


def parse_operand(text):
    """What a reader types for an operand: an int, `_`, a layout, or a tuple (tiler or shape).

    Plain ints are static here ("(4,8):(1,4)" is (_4,_8):(_1,_4)); write `dyn` values in CuTe's form
    through parse_layout instead. A pair of two congruent tuples, "((4,8),(1,4))", is read as
    (shape, stride); a pair of ints, "(4,8)", stays a tuple (a tiler or a shape).
    """
    _need_text(text, "parse_operand")
    text = text.strip()
    if not text:
        raise ValueError("parse_operand: empty text")
    if not text.isascii():
        raise ValueError(f"parse_operand: {quote(text)} holds characters other than ASCII "
                         "(write digits as 0-9)")
    if ":" not in text and "_" not in text and "Sw" not in text:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError) as e:
            raise ValueError(f"parse_operand: cannot read {quote(text)}: {quote(str(e), limit=80)}") from None
        if not _is_int_tuple(value):
            raise ValueError(f"parse_operand: {quote(text)} must hold ints and tuples only")
        check_tree(value, "parse_operand", "the value", is_int, "be an int or a tuple of ints")
        if (isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, tuple) for v in value)
                and congruent(value[0], value[1])):
            return Layout(value[0], value[1])
        return value
    p = _Parser(text, int, "parse_operand")
    value = p.item()
    p.done("operand")
    return value


def _is_int_tuple(v):
    if isinstance(v, tuple):
        return len(v) > 0 and all(_is_int_tuple(x) for x in v)
    return is_int(v)
