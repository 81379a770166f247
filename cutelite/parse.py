"""Read layouts back from text: CuTe's printed form, and what a reader types into a widget.

    parse_layout("(_4,_8):(_1,_4)")      # static ints, as C++ prints them
    parse_layout("(4,_8):(_1,4)")        # dynamic ints print without the underscore
    parse_layout("Sw<3,3,3> o _0 o (_8,_64):(_64,_1)")   # a swizzled layout

Post: parse_layout(str(L)) == L, and str(parse_layout(str(L))) == str(L) (static/dynamic kept).

`parse_operand` reads the looser text of a widget's box, where a plain `4` means the static `_4`:
an int ("4"), a layout ("(4,8):(1,4)", or the pair "((4,8),(1,4))"), a tiler of layouts
("(3:3,(2,4):(1,8))"), a shape tuple ("(4,8)"), or "_". Nothing is ever eval'd: colon-free text goes
through ast.literal_eval (Python literals only), the rest through the small parser below.
"""

import ast
import re

from .int_tuple import Dyn, congruent, is_int, is_tuple
from .layout import Layout, _, Underscore
from .layout import ComposedLayout
from .swizzle import Swizzle

__all__ = ["parse_layout", "parse_int_tuple", "parse_operand"]

_TOKEN = re.compile(r"\s*(Sw<|_-?\d+|-?\d+|[(),:<>]|o\b|_)")


def _tokens(text):
    pos, out = 0, []
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"parse: cannot read {text[pos:]!r} in {text!r}")
        out.append(m.group(1))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


class _Parser:
    """Recursive descent over the tokens. `plain` decides what an int without `_` is: Dyn or int."""

    def __init__(self, text, plain):
        self.text, self.toks, self.i, self.plain = text, _tokens(text), 0, plain

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, want=None):
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            raise ValueError(f"parse: expected {want or 'more'} at token {self.i} of {self.text!r}, "
                             f"got {tok!r}")
        self.i += 1
        return tok

    def number(self, tok):
        if tok.startswith("_"):
            return int(tok[1:])
        return self.plain(int(tok))

    def item(self):
        """An int, `_`, a tuple of items, or `shape:stride`; a swizzle `Sw<b,m,s> o off o layout`."""
        if self.peek() == "Sw<":
            return self.swizzled()
        left = self.tuple_or_int()
        if self.peek() == ":":
            self.take(":")
            right = self.tuple_or_int()
            if _has_layout(left) or _has_layout(right):
                raise ValueError(f"parse: a shape:stride pair holds only ints, in {self.text!r}")
            return Layout(left, right)
        return left

    def tuple_or_int(self):
        tok = self.take()
        if tok == "(":
            items = [self.item()]
            while self.peek() == ",":
                self.take(",")
                items.append(self.item())
            self.take(")")
            return tuple(items)
        if tok == "_":
            return _
        if re.fullmatch(r"_?-?\d+", tok):
            return self.number(tok)
        raise ValueError(f"parse: unexpected {tok!r} in {self.text!r}")

    def swizzled(self):
        self.take("Sw<")
        bits = int(self.take())
        self.take(",")
        base = int(self.take())
        self.take(",")
        shift = int(self.take())
        self.take(">")
        self.take("o")
        offset = self.number(self.take())
        self.take("o")
        inner = self.item()
        if not isinstance(inner, Layout):
            raise ValueError(f"parse: a swizzle needs an inner layout, in {self.text!r}")
        return ComposedLayout(Swizzle(bits, base, shift), offset, inner)

    def done(self, what):
        if self.peek() is not None:
            raise ValueError(f"parse: unexpected {self.peek()!r} after the {what} in {self.text!r}")


def _has_layout(t):
    if is_tuple(t):
        return any(_has_layout(v) for v in t)
    return isinstance(t, (Layout, Underscore))


def parse_int_tuple(text, plain=Dyn):
    """An IntTuple from CuTe's text: `_4` is static (int), `4` is dynamic (Dyn), unless plain=int."""
    p = _Parser(text, plain)
    value = p.tuple_or_int()
    p.done("int tuple")
    if _has_layout(value):
        raise ValueError(f"parse_int_tuple: {text!r} is not an int tuple")
    return value


def parse_layout(text, plain=Dyn):
    """A Layout (or swizzled ComposedLayout) from CuTe's printed form, e.g. "(_4,_8):(_1,_4)".

    As in C++ printing, `_N` is a static int and `N` a dynamic one (plain=int reads `N` as static too).
    """
    p = _Parser(text, plain)
    value = p.item()
    p.done("layout")
    if not isinstance(value, (Layout, ComposedLayout)):
        raise ValueError(f"parse_layout: {text!r} is not a layout (write shape:stride)")
    return value


def parse_operand(text):
    """What a reader types for an operand: an int, `_`, a layout, or a tuple (tiler or shape).

    Plain ints are static here ("(4,8):(1,4)" is (_4,_8):(_1,_4)); write `dyn` values in CuTe's form
    through parse_layout instead. A pair of two congruent tuples, "((4,8),(1,4))", is read as
    (shape, stride); a pair of ints, "(4,8)", stays a tuple (a tiler or a shape).
    """
    text = text.strip()
    if not text:
        raise ValueError("parse_operand: empty text")
    if ":" not in text and "_" not in text and "Sw" not in text:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError) as e:
            raise ValueError(f"parse_operand: cannot read {text!r}: {e}") from None
        if not _is_int_tuple(value):
            raise ValueError(f"parse_operand: {text!r} must hold ints and tuples only")
        if (isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, tuple) for v in value)
                and congruent(value[0], value[1])):
            return Layout(value[0], value[1])
        return value
    p = _Parser(text, int)
    value = p.item()
    p.done("operand")
    return value


def _is_int_tuple(v):
    if isinstance(v, tuple):
        return len(v) > 0 and all(_is_int_tuple(x) for x in v)
    return is_int(v)
