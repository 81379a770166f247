"""How the engine refuses input: the limits it checks before it does any work, and the text it quotes.

C++ CuTe refuses a bad layout when it compiles. cutelite refuses it when a function is called, with a
TypeError (a value of the wrong kind) or a ValueError (the right kind, a wrong value) whose message names
the operation and the value. Three limits stand in for what a C++ compiler enforces:

* integers fit in 64 bits (C++ CuTe's integers are C++ ints: ``Int<N>`` or a run-time ``int``/``int64_t``);
* an IntTuple nests at most MAX_DEPTH levels (C++'s template depth; real layouts nest 2 to 4), so that
  no operation runs out of Python's recursion stack;
* a message quotes at most about QUOTE characters of the input, however long the input is.
"""

__all__ = ["MAX_DEPTH", "INT_BITS", "QUOTE", "OutOfRange", "quote", "check_tree"]

MAX_DEPTH = 32
INT_BITS = 64
QUOTE = 200


class OutOfRange(IndexError, ValueError):
    """A coordinate, mode or index outside its range. An IndexError, as Python's own indexing raises, and
    a ValueError, so that ``except (TypeError, ValueError)`` catches every refusal of the engine."""


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
    ValueError when t nests more than MAX_DEPTH levels or holds an int outside 64 bits.
    """
    stack = [iter((t,))]
    while stack:
        x = next(stack[-1], _END)
        if x is _END:
            stack.pop()
        elif type(x) is tuple:
            if len(stack) > MAX_DEPTH:
                raise ValueError(f"{op}: {what} nests more than {MAX_DEPTH} levels deep (cutelite's limit; "
                                 "CuTe's layouts nest a few levels)")
            stack.append(iter(x))
        elif not leaf_ok(x):
            raise TypeError(f"{op}: {what} must {expected}, got {quote(x)} ({type(x).__name__})")
        elif isinstance(x, int) and not -(1 << (INT_BITS - 1)) <= x < (1 << (INT_BITS - 1)):
            raise ValueError(f"{op}: {what} holds {quote(x)}, outside the {INT_BITS}-bit integers of C++ CuTe")
