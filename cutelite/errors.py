"""How the engine refuses input: the limits it checks before it does any work, and the text it quotes.

C++ CuTe refuses a bad layout when it compiles. cutelite refuses it when a function is called, with a
TypeError (a value of the wrong kind) or a ValueError (the right kind, a wrong value) whose message names
the operation and the value. Three limits stand in for what a C++ compiler enforces:

* integers fit in 64 bits (C++ CuTe's integers are C++ ints: ``Int<N>`` or a run-time ``int``/``int64_t``);
* an IntTuple nests at most MAX_DEPTH levels and a tuple has at most MAX_RANK modes (C++ builds both with
  templates, whose depth its compilers limit; real layouts nest 2 to 4 levels of a few modes), so that no
  operation runs out of Python's recursion stack or into a quadratic walk of a huge tuple;
* a message quotes at most about QUOTE characters of the input, however long the input is.

A fourth is the book's own: a picture (a grid of offsets, banks or owners) has at most MAX_CELLS cells,
so that drawing a huge layout is refused at once instead of filling the memory.
"""

__all__ = ["MAX_DEPTH", "MAX_RANK", "INT_BITS", "QUOTE", "MAX_CELLS", "OutOfRange", "quote", "check_tree",
           "check_depth", "check_cells"]

MAX_DEPTH = 32
MAX_RANK = 1024
INT_BITS = 64
QUOTE = 200
MAX_CELLS = 1 << 16


class OutOfRange(IndexError, ValueError):
    """A mode outside a layout's rank, a coordinate whose tuples do not match the shape's, an element outside
    a tensor's memory. (A coordinate's values are not checked: past its size a layout goes on along its last
    mode, as in C++.) An IndexError, as Python's own indexing raises, and a ValueError, so that
    ``except (TypeError, ValueError)`` catches every refusal of the engine."""


def check_cells(rows, cols, op):
    """ValueError naming `op` when a rows x cols picture has more than MAX_CELLS cells."""
    if rows * cols > MAX_CELLS:
        raise ValueError(f"{op}: a picture of {quote(rows)} x {quote(cols)} cells is too large to draw "
                         f"(at most {MAX_CELLS} cells)")


def quote(x, show=repr, limit=QUOTE):
    """show(x) (a str as it is) cut to about `limit` characters; safe for any input: a huge int or a
    tuple nested too deep to print is described instead of printed."""
    if isinstance(x, int) and not isinstance(x, bool) and x.bit_length() > INT_BITS:
        return f"an int of {x.bit_length()} bits"
    if _too_deep(x):
        return f"a {type(x).__name__} nested more than {MAX_DEPTH} levels deep"
    text = x if isinstance(x, str) else show(x)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def check_depth(x, op, what):
    """ValueError naming `op` when x holds tuples (of any kind) or lists nested more than MAX_DEPTH levels."""
    if _too_deep(x):
        raise _too_deep_error(op, what)


def _too_deep_error(op, what):
    return ValueError(f"{op}: {what} nests more than {MAX_DEPTH} levels deep (cutelite's limit; CuTe's layouts "
                      "nest a few levels)")


def _too_deep(x):
    """True when x holds tuples or lists nested more than MAX_DEPTH levels (found without recursion)."""
    stack = [(x, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (tuple, list)):
            if d >= MAX_DEPTH:
                return True
            stack.extend((w, d + 1) for w in v)
    return False


_END = object()


def check_tree(t, op, what, leaf_ok, expected):
    """Check every leaf of t (a leaf, or a tuple of trees) without recursion, in order.

    TypeError naming `op` at the first leaf for which leaf_ok is false ("{what} must {expected}");
    ValueError when t nests more than MAX_DEPTH levels, holds a tuple of more than MAX_RANK modes or an int
    outside 64 bits.
    """
    low, high = -(1 << (INT_BITS - 1)), 1 << (INT_BITS - 1)
    if type(t) is int and low <= t < high and leaf_ok(t):
        return                            # the commonest case: one int
    stack = [iter((t,))]
    while stack:
        x = next(stack[-1], _END)
        if type(x) is int and low <= x < high and leaf_ok(x):
            continue                      # the common leaf, checked first
        if x is _END:
            stack.pop()
        elif type(x) is tuple:
            if len(stack) > MAX_DEPTH:
                raise _too_deep_error(op, what)
            if len(x) > MAX_RANK:
                raise ValueError(f"{op}: {what} has a tuple of {len(x)} modes, more than cutelite's limit of "
                                 f"{MAX_RANK} (CuTe's tuples have a few)")
            stack.append(iter(x))
        elif not leaf_ok(x):
            raise TypeError(f"{op}: {what} must {expected}, got {quote(x)} ({type(x).__name__})")
        elif isinstance(x, int) and not low <= x < high:
            raise ValueError(f"{op}: {what} holds {quote(x)}, outside the {INT_BITS}-bit integers of C++ CuTe")
