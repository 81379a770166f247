"""Run-time integers of generated code: Python source text, with constants folded.

While code is generated (a `cutejit` kernel traced, a layout written out by `kernels.layout_codegen`), every
value that is known when the code is built is a plain Python int and is folded away; a value known only when
the kernel runs (the thread index, a block coordinate, a loop counter, a leading dimension) is a `Sym`, the
text of a Python expression over the kernel's variables:

    >>> t = Sym("tid", invariant=True)
    >>> (t // 32) * 64 + 0
    Sym('((tid >> 5) * 64)')

Arithmetic with ints folds (x + 0, x * 1, x * 0, powers of two become shifts and masks). `invariant`
says the value depends only on the thread and block indices and the kernel's arguments, never on a loop
variable: such values are computed once, at the top of the kernel.
"""

__all__ = ["Sym", "src", "is_sym", "is_pow2"]


def is_pow2(n):
    return isinstance(n, int) and n > 0 and n & (n - 1) == 0


def is_sym(x):
    return isinstance(x, Sym)


def src(x):
    """Python source of an int or a Sym."""
    if isinstance(x, Sym):
        return x.src
    if isinstance(x, bool):
        return "True" if x else "False"
    if isinstance(x, int):
        return str(int(x))
    raise TypeError("cutejit: expected an int or a run-time value (Sym), got %r" % (x,))


def _check(x):
    if isinstance(x, (Sym, int)) and not isinstance(x, bool):
        return x
    raise TypeError("cutejit: arithmetic on a run-time value needs ints or run-time values, got %r" % (x,))


def _inv(*xs):
    return all(x.invariant if isinstance(x, Sym) else True for x in xs)


class Sym:
    """A run-time integer (or boolean) of the traced kernel: `src` is its Python text. A constant term is
    kept apart (`const`), so that (x + 3) - 1 folds to (x + 2)."""

    __slots__ = ("body", "const", "invariant")

    def __init__(self, text, invariant=False, const=0):
        self.body, self.const, self.invariant = text, const, invariant

    @property
    def src(self):
        if not self.const:
            return self.body
        return "(%s %s %d)" % (self.body, "+" if self.const > 0 else "-", abs(self.const))

    def __repr__(self):
        return "Sym(%r)" % self.src

    def __bool__(self):
        raise TypeError("cutejit: %s is known only when the kernel runs; branch on it with "
                        "`with k.if_(cond):`, not with Python's `if`" % self.src)

    def __index__(self):
        raise TypeError("cutejit: %s is known only when the kernel runs; it cannot size or index "
                        "anything at trace time" % self.src)

    # ---- arithmetic, folded ----
    def _bin(self, op, other, swap=False):
        other = _check(other)
        a, b = (other, self) if swap else (self, other)
        return Sym("(%s %s %s)" % (src(a), op, src(b)), _inv(a, b))

    def __add__(self, o):
        if isinstance(o, int) and not isinstance(o, bool):
            return Sym(self.body, self.invariant, self.const + o) if o else self
        return self._bin("+", o)

    def __radd__(self, o):
        if isinstance(o, int) and not isinstance(o, bool):
            return self + o
        return self._bin("+", o, True)

    def __sub__(self, o):
        if isinstance(o, int) and not isinstance(o, bool):
            return self + (-o)
        return self._bin("-", o)

    def __rsub__(self, o):
        return self._bin("-", o, True)

    def __mul__(self, o):
        _check(o)
        if isinstance(o, int):
            if o == 0:
                return 0
            if o == 1:
                return self
        return self._bin("*", o)

    __rmul__ = __mul__

    def __floordiv__(self, o):
        _check(o)
        if isinstance(o, int):
            if o == 1:
                return self
            if is_pow2(o):
                return self._bin(">>", o.bit_length() - 1)
        return self._bin("//", o)

    def __rfloordiv__(self, o):
        return self._bin("//", o, True)

    def __mod__(self, o):
        _check(o)
        if isinstance(o, int):
            if o == 1:
                return 0
            if is_pow2(o):
                return self._bin("&", o - 1)
        return self._bin("%", o)

    def __rmod__(self, o):
        return self._bin("%", o, True)

    def __and__(self, o):
        return self._bin("&", o)

    __rand__ = __and__

    def __or__(self, o):
        return self._bin("|", o)

    __ror__ = __or__

    def __xor__(self, o):
        return self if isinstance(o, int) and o == 0 else self._bin("^", o)

    __rxor__ = __xor__

    def __lshift__(self, o):
        return self if isinstance(o, int) and o == 0 else self._bin("<<", o)

    def __rshift__(self, o):
        return self if isinstance(o, int) and o == 0 else self._bin(">>", o)

    def __neg__(self):
        return Sym("(-%s)" % self.src, self.invariant)

    # ---- comparisons give run-time booleans ----
    def __lt__(self, o):
        return self._bin("<", o)

    def __le__(self, o):
        return self._bin("<=", o)

    def __gt__(self, o):
        return self._bin(">", o)

    def __ge__(self, o):
        return self._bin(">=", o)
