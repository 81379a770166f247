"""Auto-checks for the book's exercises: a reader's answer is compared with the expected one and the
checker prints one line, never raises:

    not answered yet      the answer is still None
    PASS                  right
    a specific hint       wrong: which mode's shape or stride differs, which offset, what kind of mistake

Each checker returns True only for a right answer, so a solution cell can `assert` it.
"""

import numpy as np

from .int_tuple import fmt, is_int, is_tuple
from .layout import Layout, coalesce, rank, size, get
from .viz import layout_grid

__all__ = ["check_value", "check_layout_answer", "check_offsets_answer", "layout_hint", "offsets_hint"]


def _report(name, ok, hint=None):
    if ok:
        print(f"PASS {name}")
    else:
        print(f"not yet {name}: {hint}")
    return ok


def _unanswered(name, answer):
    if answer is None or answer is Ellipsis:
        print(f"{name}: not answered yet")
        return True
    return False


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    return bool(a == b)


def check_value(answer, expected, name="answer", hints=None):
    """Check a value (int, tuple, string, ...). hints maps a likely wrong answer to its hint, e.g.
    {64: "that is size(L); cosize is one past the largest offset"}; other wrong answers get a
    generic comparison (too large/small, length, first differing element).
    """
    if _unanswered(name, answer):
        return False
    if isinstance(expected, Layout):
        return check_layout_answer(answer, expected, name)
    if _same(answer, expected):
        return _report(name, True)
    for wrong, hint in (hints or {}).items():
        try:
            if _same(answer, wrong):
                return _report(name, False, hint)
        except (TypeError, ValueError):
            continue
    return _report(name, False, _value_hint(answer, expected))


def _value_hint(answer, expected):
    if is_int(expected) and is_int(answer):
        return f"{answer} is too {'large' if answer > expected else 'small'}"
    if isinstance(expected, (tuple, list)) and isinstance(answer, (tuple, list)):
        if len(answer) != len(expected):
            return f"expected {len(expected)} entries, you have {len(answer)}"
        for i, (x, y) in enumerate(zip(answer, expected)):
            if x != y:
                return f"entry {i} is {x!r}; look at it again"
    if type(answer) is not type(expected) and not (is_int(answer) and is_int(expected)):
        return f"expected a {type(expected).__name__}, you have a {type(answer).__name__}"
    return f"{answer!r} is not it"


def layout_hint(answer, expected):
    """Why layout `answer` is not `expected`: None when it is (same shape, stride and printed text)."""
    if not isinstance(answer, Layout):
        return f"expected a Layout (e.g. Layout({fmt_py(expected.shape)}, {fmt_py(expected.stride)})), " \
               f"you have {answer!r}"
    if answer == expected and str(answer) == str(expected):
        return None
    if answer == expected:
        return (f"right values, but {answer} prints differently from {expected}: "
                "static ints print _N, dynamic (dyn) ones N")
    if size(answer) != size(expected):
        return f"size {size(answer)} should be {size(expected)}: check the shape {fmt(answer.shape)}"
    if all(answer(i) == expected(i) for i in range(size(expected))):
        return (f"same offsets as the expected layout, different form: {answer} vs a layout of shape "
                f"{fmt(expected.shape)} (coalesced, both are {coalesce(expected)})")
    if answer.shape != expected.shape:
        if rank(answer) != rank(expected):
            return f"rank {rank(answer)} should be {rank(expected)}: shape {fmt(answer.shape)} vs {fmt(expected.shape)}"
        for i in range(rank(expected)):
            if get(answer, i).shape != get(expected, i).shape:
                return f"mode {i} has shape {fmt(get(answer, i).shape)}; it should be {fmt(get(expected, i).shape)}"
    for i in range(rank(expected)):
        a_mode, e_mode = get(answer, i), get(expected, i)
        if a_mode.stride != e_mode.stride:
            return (f"mode {i} ({fmt(a_mode.shape)}) has stride {fmt(a_mode.stride)}; it should be "
                    f"{fmt(e_mode.stride)}")
    return offsets_hint([answer(i) for i in range(size(answer))], expected)


def fmt_py(t):
    """Python literal text of an IntTuple (for hints that show code)."""
    return "(" + ", ".join(fmt_py(v) for v in t) + ("," if len(t) == 1 else "") + ")" if is_tuple(t) \
        else str(int(t))


def check_layout_answer(answer, expected, name="layout"):
    """Check a Layout answer: shapes, then strides mode by mode, then offsets, then printed form."""
    if _unanswered(name, answer):
        return False
    if isinstance(answer, str):
        from .parse import parse_layout
        try:
            answer = parse_layout(answer)
        except ValueError as e:
            return _report(name, False, f"cannot read the text: {e}")
    hint = layout_hint(answer, expected)
    return _report(name, hint is None, hint)


def offsets_hint(answer, expected):
    """Why the offsets `answer` differ from `expected` (a Layout or a sequence/array); None if equal."""
    if isinstance(expected, Layout):
        exp2d = layout_grid(expected) if rank(expected) <= 2 else None
        exp1d = np.array([expected(i) for i in range(size(expected))])
    else:
        exp1d = np.asarray(expected).ravel(order="F")
        exp2d = np.asarray(expected) if np.ndim(expected) == 2 else None
    ans = np.asarray(answer)
    if ans.ndim == 2:
        if exp2d is None:
            return f"expected a flat list of {exp1d.size} offsets, you have a {ans.shape} grid"
        if ans.shape != exp2d.shape:
            if ans.shape == exp2d.T.shape and np.array_equal(ans, exp2d.T):
                return "your grid is transposed: rows are the first mode m, columns the second n"
            return f"the grid should be {exp2d.shape[0]} x {exp2d.shape[1]}, you have {ans.shape[0]} x {ans.shape[1]}"
        diff = np.argwhere(ans != exp2d)
        if diff.size == 0:
            return None
        m, n = diff[0]
        return f"({m},{n}) should be {exp2d[m, n]}, you have {ans[m, n]} ({len(diff)} cells differ)"
    ans = ans.ravel()
    if ans.size != exp1d.size:
        return f"expected {exp1d.size} offsets, you have {ans.size}"
    if np.array_equal(ans, exp1d):
        return None
    if exp2d is not None and np.array_equal(ans, exp2d.ravel()):
        return "you listed them row by row; CuTe's 1-D index runs down the columns first (colexicographic)"
    if sorted(ans.tolist()) == sorted(exp1d.tolist()):
        return "right offsets, wrong order: index i runs through the first mode fastest"
    i = int(np.argmax(ans != exp1d))
    return f"offset at index {i} should be {exp1d[i]}, you have {ans[i]}"


def check_offsets_answer(answer, expected, name="offsets"):
    """Check a list (index order) or 2-D grid (as print_layout shows) of offsets against a Layout or
    an array of expected offsets."""
    if _unanswered(name, answer):
        return False
    try:
        hint = offsets_hint(answer, expected)
    except (TypeError, ValueError) as e:
        hint = f"expected numbers in a list or a grid: {e}"
    return _report(name, hint is None, hint)
