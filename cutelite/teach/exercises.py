"""Auto-checks for the book's exercises: a reader's answer is compared with the expected one and the
checker prints one line, never raises:

    not answered yet      the answer is still None (or the answer box is empty)
    PASS                  right, in any spelling of the right value
    a specific hint       wrong: which mode's shape or stride differs, which entry, what kind of mistake

Each checker returns True only for a right answer, so a solution cell can `assert` it. The answer may be a
Python value or the text a reader types: both are read by cutelite.teach.answers, so `(8,4):(4,1)`,
`Layout((8, 4), (4, 1))` and `make_layout(make_shape(8,4), make_stride(4,1))` are the same answer, and a
list is as good as a tuple. The live page's answer box calls these very checkers with the typed text
(cutelite.teach.live); an unanswered check announces itself (cutelite.teach.announce) so the page can give
it that box. Standard library only.
"""

from ..int_tuple import fmt, idx2crd, is_int, is_tuple, product, product_each
from ..layout import (ComposedLayout, Layout, LayoutLeft, LayoutRight, coalesce, composition, get, make_layout,
                      rank, size)
from ..parse import parse_layout
from ..swizzle import Swizzle
from .announce import announce_exercise
from .answers import AnswerError, Word, canon, expected_value, read, shown

__all__ = ["check_value", "check_layout_answer", "check_offsets_answer", "check_swizzle_answer",
           "check_coordinates_answer", "check_owner_answer", "layout_hint", "offsets_hint", "value_hint",
           "check_lbo_sbo_answer", "check_expect_tx_answer", "check_phase_answer", "plain_shape",
           "check_partition_shape_answer", "check_copy_atom_answer", "check_tiled_mma_answer",
           "check_budget_answer", "check_wait_group_answer", "check_pipeline_stages_answer",
           "check_refused_answer",
           "check_setmaxnreg_answer", "swizzle_costs", "SWIZZLE_RANGE"]


def _report(name, ok, hint=None):
    print(f"PASS {name}" if ok else f"not yet {name}: {hint}")
    return ok


def _answer(name, answer, like=None):
    """The canonical value of `answer`; None, after printing why, when there is nothing to check (not
    answered yet, or text that cannot be read)."""
    try:
        value = read(answer, like)
    except AnswerError as e:
        _report(name, False, e)
        return None
    if value is None:
        print(f"{name}: not answered yet")
    return value


def _same(a, b):
    if isinstance(a, bool) != isinstance(b, bool):   # True is not the answer 1
        return False
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - an exotic value's __eq__: not the same
        return False


def _hint_for(got, hints):
    for wrong, hint in (hints or {}).items():
        if _same(got, expected_value(wrong)):
            return hint
    return None


# ---- values: numbers, tuples, words -------------------------------------------------------------------------
def check_value(answer, expected, name="answer", hints=None):
    """Check a value (int, tuple, word, layout as text, ...). hints maps a likely wrong answer to its hint,
    e.g. {64: "that is size(L); cosize is one past the largest offset"}; other wrong answers get a
    generic comparison (too large or small, how many entries, which entry, another order)."""
    if isinstance(expected, (Layout, ComposedLayout)):
        return check_layout_answer(answer, expected, name, hints)
    if answer is None:
        announce_exercise("value", name, expected, hints)
    want = expected_value(expected)
    got = _answer(name, answer, want)
    if got is None:
        return False
    if isinstance(want, Layout):
        return _check_layout(name, got, want, hints)
    if _same(got, want):
        return _report(name, True)
    return _report(name, False, _hint_for(got, hints) or value_hint(got, want))


def _kind(x):
    """A value's kind in words, without its entries: "a number", "a tuple of 2 entries (?, (?, ?))"."""
    if isinstance(x, bool):
        return "True or False"
    if is_int(x):
        return "a whole number"
    if isinstance(x, Word):
        return "a word"
    if isinstance(x, (Layout, ComposedLayout)):
        return "a layout"
    if isinstance(x, tuple):
        return f"a tuple of {len(x)} entries, {_pattern(x)}"
    return f"a {type(x).__name__}"


def _pattern(x):
    return "(" + ", ".join(_pattern(v) for v in x) + ("," if len(x) == 1 else "") + ")" \
        if isinstance(x, tuple) else "?"


def _sortable(x):
    return isinstance(x, tuple) and all(is_int(v) for v in x)


def _how(got, want):
    """How the whole number got differs from want, without naming want."""
    if got == -want:
        return "the wrong sign"
    return "too large" if got > want else "too small"


def _others(got, want, i):
    """Whether the entries after the first wrong one, i, are right, in words (a count could read as a value)."""
    return "more entries differ after it" if any(not _same(g, w) for g, w in zip(got[i + 1:], want[i + 1:])) \
        else "the other entries are right"


def value_hint(got, want):
    """What differs between the canonical values got and want (a number, a tuple, a word), in words that
    never name want or any entry of it: too large or small, how many entries, which entry, another order."""
    if isinstance(want, Layout):
        return layout_hint(got, want)
    if is_int(want) and is_int(got):
        return f"{got} is {_how(got, want)}"
    if isinstance(want, tuple) and isinstance(got, tuple):
        if len(got) != len(want):
            return f"expected {_kind(want)}; you have {len(got)} entries"
        if _same(got, want[::-1]):
            return "the right entries in reverse order"
        if (_sortable(got) and _sortable(want) and sorted(got) == sorted(want)) or \
                (len(set(map(shown, got))) == len(got) and set(map(shown, got)) == set(map(shown, want))):
            return "the right entries in another order"
        if all(isinstance(g, tuple) and _same(g, w[::-1]) for g, w in zip(got, want) if isinstance(w, tuple)) \
                and any(isinstance(w, tuple) and len(w) > 1 for w in want):
            return "every entry is reversed: each pair's order matters (e.g. (row, col))"
        for i, (g, w) in enumerate(zip(got, want)):
            if not _same(g, w):
                if _kind(g) != _kind(w) and not (is_int(g) and is_int(w)):
                    return f"entry {i} should be {_kind(w)}; you have {shown(g)}"
                how = f"is {_how(g, w)}" if is_int(g) and is_int(w) and not isinstance(g, bool) else "is not right"
                return f"entry {i}, {shown(g)}, {how}; {_others(got, want, i)}"
    if _kind(got) != _kind(want) and not (is_int(got) and is_int(want)):
        return f"expected {_kind(want)}; you have {shown(got)}"
    return f"{shown(got)} is not it"


# ---- layouts ------------------------------------------------------------------------------------------------
def check_layout_answer(answer, expected, name="layout", hints=None):
    """Check a Layout answer: shapes, then strides mode by mode, then offsets. `hints` maps likely wrong
    layouts to their hints."""
    if answer is None:
        announce_exercise("layout", name, expected, hints)
    got = _answer(name, answer)
    if got is None:
        return False
    return _check_layout(name, got, canon(expected), hints)


def _check_layout(name, got, want, hints):
    if isinstance(got, tuple) and len(got) == 2 and all(isinstance(v, tuple) for v in got):
        try:
            got = Layout(*got)                       # (shape, stride), as the explorers read it
        except (TypeError, ValueError):
            pass                                     # not a layout: the hint says what it is
    hint = layout_hint(got, want)
    return _report(name, hint is None, hint if hint is None else _hint_for(got, hints) or hint)


def _compact_name(layout):
    for major, words in ((LayoutLeft, "column-major (LayoutLeft, CuTe's default)"),
                         (LayoutRight, "row-major (LayoutRight)")):
        if layout == make_layout(layout.shape, major):
            return words
    return None


def _leaves(t):
    return [v for x in t for v in _leaves(x)] if is_tuple(t) else [t]


def layout_hint(answer, expected):
    """Why layout `answer` is not `expected` (None when it is: same shape and stride; static or dynamic
    ints alike), never naming the expected layout or any of its extents or strides: the kind, the size,
    the rank, which mode's shape or stride differs and how (too large, too small, the wrong sign, the
    right strides in other modes)."""
    expected = canon(expected)
    if not isinstance(answer, Layout):
        if isinstance(answer, tuple) and _same(answer, canon(expected.shape)):
            return "that is the shape alone; a layout is shape:stride, the shape, a colon, then the strides"
        return f"expected a layout, shape:stride or Layout(shape, stride); you have {shown(answer)}"
    answer = canon(answer)
    if answer == expected:
        return None
    if size(answer) != size(expected):
        return f"size {size(answer)} is {_how(size(answer), size(expected))}: check the shape {fmt(answer.shape)}"
    if all(answer(i) == expected(i) for i in range(size(expected))):
        return (f"{answer} has the right offsets, in other modes (both coalesce to {coalesce(expected)}): "
                "group the modes as the question's shape does")
    if answer.shape == expected.shape and _compact_name(answer) and _compact_name(expected):
        return f"{answer} is {_compact_name(answer)}; the layout asked for is {_compact_name(expected)}"
    if rank(answer) != rank(expected):
        return f"rank {rank(answer)} is {_how(rank(answer), rank(expected))}: the shape {fmt(answer.shape)} " \
               f"has {'too many' if rank(answer) > rank(expected) else 'too few'} modes"
    for i in range(rank(expected)):
        a_mode, e_mode = get(answer, i), get(expected, i)
        if a_mode.shape != e_mode.shape:
            how = "the right size, nested otherwise" if size(a_mode) == size(e_mode) else \
                f"its size is {_how(size(a_mode), size(e_mode))}"
            return f"mode {i} has shape {fmt(a_mode.shape)}: {how}"
    got, want = _leaves(answer.stride), _leaves(expected.stride)
    if sorted(got) == sorted(want):
        return f"{answer} has the right strides in the wrong modes: which mode steps through memory fastest?"
    for i in range(rank(expected)):
        a_mode, e_mode = get(answer, i), get(expected, i)
        if a_mode.stride != e_mode.stride:
            pairs = list(zip(_leaves(a_mode.stride), _leaves(e_mode.stride)))
            j, (g, w) = next((j, p) for j, p in enumerate(pairs) if p[0] != p[1])
            where = f"sub-mode {j} of its stride {fmt(a_mode.stride)}" if len(pairs) > 1 else f"its stride {fmt(g)}"
            return f"mode {i} ({fmt(a_mode.shape)}): {where} is {_how(g, w)}"
    return f"{answer} is not the layout asked for"


# ---- offsets: a list in index order, or a grid as print_layout shows it -------------------------------------
def _grid_of(x):
    """x as a list of equal rows if it is a 2-D grid (a tuple of tuples of numbers), else None."""
    if isinstance(x, tuple) and x and all(isinstance(r, tuple) for r in x):
        rows = [list(r) for r in x]
        if len({len(r) for r in rows}) == 1 and not any(isinstance(v, tuple) for r in rows for v in r):
            return rows
    return None


def _flat(x):
    return [v for item in x for v in _flat(item)] if isinstance(x, tuple) else [x]


def _transpose(grid):
    return [list(col) for col in zip(*grid)]


def offsets_hint(answer, expected):
    """Why the offsets `answer` differ from `expected` (a Layout, or a sequence or array of offsets);
    None if they are the same. Never names an expected offset: which one differs, and how."""
    answer, expected = canon(answer), canon(expected)
    if isinstance(expected, Layout):
        exp1d = [expected(i) for i in range(size(expected))]
        exp2d = None
        if rank(expected) <= 2:
            exp2d = [exp1d] if rank(expected) == 1 else \
                [[expected(m, n) for n in range(size(expected, 1))] for m in range(size(expected, 0))]
    else:
        exp2d = _grid_of(expected)
        exp1d = [v for col in _transpose(exp2d) for v in col] if exp2d else _flat(expected)  # column-major
    if not isinstance(answer, tuple) or not all(is_int(v) for v in _flat(answer)):
        return f"expected the offsets as a list of numbers or a grid (a list of rows); you have {shown(answer)}"
    grid = _grid_of(answer)
    if grid is not None:
        if exp2d is None:
            return f"expected a flat list of offsets, you have a {len(grid)} x {len(grid[0])} grid"
        (rows, cols), (want_rows, want_cols) = (len(grid), len(grid[0])), (len(exp2d), len(exp2d[0]))
        if (rows, cols) != (want_rows, want_cols):
            if grid == _transpose(exp2d):
                return "your grid is transposed: rows are the first mode m, columns the second n"
            if rows != want_rows:
                return f"your grid has {rows} rows: {'too many' if rows > want_rows else 'too few'}"
            return f"your grid has {cols} columns: {'too many' if cols > want_cols else 'too few'}"
        diff = [(m, n) for m in range(rows) for n in range(cols) if grid[m][n] != exp2d[m][n]]
        if not diff:
            return None
        (m, n), more = diff[0], "more cells differ" if len(diff) > 1 else "the other cells are right"
        return f"({m},{n}), {grid[m][n]}, is {_how(grid[m][n], exp2d[m][n])}; {more}"
    ans = _flat(answer)
    if len(ans) != len(exp1d):
        return f"you have {len(ans)} offsets: {'too many' if len(ans) > len(exp1d) else 'too few'}"
    if ans == exp1d:
        return None
    if exp2d is not None and ans == [v for row in exp2d for v in row]:
        return "you listed them row by row; CuTe's 1-D index runs down the columns first (colexicographic)"
    if sorted(ans) == sorted(exp1d):
        return "right offsets, wrong order: index i runs through the first mode fastest"
    diff = [i for i, (a, e) in enumerate(zip(ans, exp1d)) if a != e]
    i, more = diff[0], "more offsets differ after it" if len(diff) > 1 else "the other offsets are right"
    return f"the offset at index {i}, {ans[i]}, is {_how(ans[i], exp1d[i])}; {more}"


def check_offsets_answer(answer, expected, name="offsets", hints=None):
    """Check a list (index order) or 2-D grid (as print_layout shows it) of offsets against a Layout or a
    sequence of expected offsets. `hints` maps likely wrong lists to their hints."""
    if answer is None:
        announce_exercise("offsets", name, expected, hints)
    got = _answer(name, answer)
    if got is None:
        return False
    hint = offsets_hint(got, expected)
    return _report(name, hint is None, hint if hint is None else _hint_for(got, hints) or hint)


# ---- chapter 1: the coordinates of an index -----------------------------------------------------------------
def _lex_crd(idx, shape):
    """idx2crd in row-major (lexicographic) order: the last mode varies fastest (a likely mistake)."""
    if not is_tuple(shape):
        return idx
    out = []
    for s in reversed(shape):
        n = product(s)
        out.append(_lex_crd(idx % n, s))
        idx //= n
    return tuple(reversed(out))


def check_coordinates_answer(answer, index, shape, name="coordinates"):
    """The coordinates of the 1-D `index` in a `shape` of two modes (m, n), as a pair: (the 2-D coordinate,
    one int per mode; the natural coordinate, shaped like `shape`), both colexicographic (the first mode
    varies fastest). Hints for row-major order, for m and n swapped, for the pair in the other order, for
    one of the two alone."""
    flat, natural = idx2crd(index, product_each(shape)), idx2crd(index, shape)
    expected = (flat, natural)
    m, n0 = index % product(shape[0]), index // product(shape[0])
    hints = {(_lex_crd(index, product_each(shape)), _lex_crd(index, shape)):
             "that is row-major (lexicographic) order; CuTe's first mode varies fastest (colexicographic)",
             (flat, (natural[0], _lex_crd(n0, shape[1]))):
             f"the first coordinate is right; split n = {n0} over {fmt(shape[1])} first mode fastest too",
             ((n0, m), (n0, idx2crd(m, shape[1]))):
             f"m and n are swapped: m = {index} mod {product(shape[0])} (the first mode varies fastest)",
             (natural, flat): "the pair is in the other order: first (m, n), one int per mode, then the "
                              f"coordinate shaped like {fmt(shape)}",
             flat: f"give both coordinates as a pair: (m, n), then the one shaped like {fmt(shape)}",
             natural: f"give both coordinates as a pair: (m, n), then the one shaped like {fmt(shape)}"}
    hints.pop(expected, None)
    return check_value(answer, expected, name, hints)


# ---- chapter 2: the composition C++ refuses ----------------------------------------------------------------
def check_refused_answer(answer, A, candidates, name="refused"):
    """Which of `candidates` (layouts B as text, e.g. "4:2") C++ CuTe refuses to compose with the layout A:
    the one whose composition raises (cutelite raises where C++'s static_assert fails). The hint for each
    other candidate says that C++ compiles it, and whether its result is A o B."""
    refused, hints = [], {}
    for text in candidates:
        B = parse_layout(text, plain=int)
        try:
            R = composition(A, B)
        except ValueError:
            refused.append(text)
            continue
        hints[text] = (f"C++ compiles {text}, and R(i) == A(B(i)) for every i" if
                       all(R(i) == A(B(i)) for i in range(size(B))) else
                       f"C++ compiles {text} (its divisibility checks pass), though the result is not A o B")
    if len(refused) != 1:
        raise ValueError(f"check_refused_answer: exactly one of {candidates} must be refused; refused: {refused}")
    return check_value(answer, refused[0], name, hints)


# ---- chapter 3: reading a TV layout backwards ---------------------------------------------------------------
def check_owner_answer(answer, tv, element, tile, name="(thread, value)"):
    """Which (thread, value) of the TV layout `tv` holds element (m, n) of a column-major M x N tile, as
    a pair of 1-D indices. Hints for (value, thread), for the 1-D (thread, value) index unsplit, for
    coordinates left in the TV layout's shape, and for the element's row-major index."""
    (m, n), (M, N) = element, tile
    threads, values = size(tv, 0), size(tv, 1)
    owner = {}
    for v in reversed(range(values)):
        for t in reversed(range(threads)):
            owner[tv(t, v)] = (t, v)                  # the smallest (thread, value) wins
    expected = owner.get(m + M * n)
    if expected is None:
        raise ValueError(f"check_owner_answer: no (thread, value) of {tv} reaches element {element}")
    t, v = expected
    hints = {(v, t): "that is (value, thread); the answer is (thread, value)",
             t + threads * v: f"that is the 1-D (thread, value) index; split it: thread = j % {threads}, "
                              f"value = j // {threads}",
             (idx2crd(t, get(tv, 0).shape), idx2crd(v, get(tv, 1).shape)):
             f"those are coordinates in the shapes {fmt(get(tv, 0).shape)} and {fmt(get(tv, 1).shape)}; "
             "give each as its 1-D index (first mode fastest)"}
    if m * N + n in owner and owner[m * N + n] != expected:
        hints[owner[m * N + n]] = (f"that is the owner of index {m * N + n} = {m}*{N} + {n}, row-major; "
                                   f"the tile's indices are column-major: m + {M}*n")
    hints.pop(expected, None)
    return check_value(answer, expected, name, hints)


# ---- chapters 4 and 7: a swizzle that removes bank conflicts ------------------------------------------------
SWIZZLE_RANGE = (range(0, 6), range(0, 6), range(-8, 9))   # the B, M and S an exercise's page can check


def swizzle_costs(cost):
    """The table a swizzle exercise's page needs: "B,M,S" -> [conflicts, wavefronts, ideal, ways] of
    cost(Swizzle(B, M, S)), or the error text, for every swizzle in SWIZZLE_RANGE."""
    table = {}
    bits, bases, shifts = SWIZZLE_RANGE
    for b in bits:
        for m in bases:
            for s in shifts:
                try:
                    r = cost(Swizzle(b, m, s))
                    table[f"{b},{m},{s}"] = [r.conflicts, r.wavefronts, r.ideal, r.ways]
                except ValueError as e:
                    table[f"{b},{m},{s}"] = str(e)
    return table


def check_swizzle_answer(answer, cost, name="swizzle"):
    """Exercise check: `answer` is (B, M, S), Sw<B,M,S>, Swizzle(B, M, S) or None; `cost(Swizzle)` returns
    the BankReport of the access. Prints 'not answered yet', PASS (conflict-free), or the conflicts the
    answer leaves."""
    if answer is None:
        announce_exercise("swizzle", name, costs=swizzle_costs(cost))
    got = _answer(name, answer)
    if got is None:
        return False
    if not (isinstance(got, tuple) and len(got) == 3 and all(is_int(x) for x in got)):
        return _report(name, False, "expected a swizzle (B, M, S): three whole numbers, e.g. (3, 3, 3), "
                                    f"Sw<3,3,3> or Swizzle(3, 3, 3); you have {shown(got)}")
    sw = "Sw<{},{},{}>".format(*got)
    if not all(x in r for x, r in zip(got, SWIZZLE_RANGE)):
        return _report(name, False, f"{sw} is outside the range this exercise checks: B and M from 0 to 5, "
                                    "S from -8 to 8")
    try:
        rep = cost(Swizzle(*got))
    except ValueError as e:
        return _report(name, False, e)
    if rep.conflicts == 0:
        print(f"PASS {name}: {sw} gives {rep.wavefronts} wavefronts, no conflicts")
        return True
    return _report(name, False, f"{sw} still needs {rep.wavefronts} wavefronts (ideal {rep.ideal}): the "
                                f"worst bank serves {rep.ways} words. Are the yyy bits the row bits, and are "
                                "there enough of them to tell the rows of one phase apart?")


# ---- chapter 8 (Hopper): checkers with the likely mistakes spelled out as hints --------------------------
def check_lbo_sbo_answer(answer, expected, name="(LBO, SBO)", lbo_used=True):
    """(leading, stride) byte offsets of a GMMA descriptor, in 16-byte units, as a pair. With
    `lbo_used=False` (a K-major swizzled tile: one wgmma's 16 K elements lie inside one swizzled row, and PTX
    does not read the field) any LBO that fits the 14-bit field passes, as it does on the GPU, and the check
    is SBO's. Hints for the pair swapped, for bytes, and for elements instead of 16-byte units."""
    lbo, sbo = expected
    hints = {(sbo, lbo): "swapped: LBO is the leading (K) direction, SBO the step between 8-row core-matrix groups",
             (16 * lbo, 16 * sbo): "those are bytes; the descriptor counts 16-byte units (bytes >> 4)",
             (8 * lbo, 8 * sbo): "those are 16-bit elements; the descriptor counts 16-byte units (8 halves)"}
    if lbo_used:
        return check_value(answer, tuple(expected), name, hints)
    if answer is None:
        announce_exercise("lbo_sbo", name, tuple(expected), hints)
    got = _answer(name, answer, tuple(expected))
    if got is None:
        return False
    if not (isinstance(got, tuple) and len(got) == 2 and all(is_int(v) and not isinstance(v, bool) for v in got)):
        return _report(name, False, f"expected a pair (LBO, SBO) of whole numbers; you have {shown(got)}")
    got_lbo, got_sbo = got
    if got_sbo == sbo and 0 <= got_lbo < 1 << 14:
        print(f"PASS {name}: SBO = {sbo} units ({16 * sbo} bytes); LBO is not read for this layout, so any "
              f"value passes (CuTe writes {lbo})")
        return True
    if got_sbo == sbo:
        return _report(name, False, f"SBO is right; LBO is not read here, but {got_lbo} does not fit the "
                                    "descriptor's 14-bit field")
    hint = {16 * sbo: "SBO in bytes; the descriptor counts 16-byte units (bytes >> 4)",
            8 * sbo: "SBO in 16-bit elements; the descriptor counts 16-byte units (8 halves)"}.get(got_sbo)
    if hint is None and got_lbo == sbo:
        hint = "swapped: LBO is the leading (K) direction, SBO the step between 8-row core-matrix groups"
    return _report(name, False, hint or f"SBO {got_sbo} is not the step from one 8-row group to the next "
                                        "(LBO is not read for this layout: only SBO matters)")


def check_setmaxnreg_answer(answer, expected, launch_cap, name="registers a consumer thread can ask for"):
    """The largest `setmaxnreg.inc` count for the consumers of a block, beside its producer's count. Hints
    for the launch cap, for the count before rounding down to a multiple of 8, and for the next multiple of
    8 up (which does not fit)."""
    hints = {launch_cap: "that is the launch cap: setmaxnreg.inc can take what the producer's .dec gives back",
             expected + 8: "one step too many: the block's registers would pass 65,536",
             256: "setmaxnreg allows 256, but the register file does not have that many for every consumer"}
    for exact in range(expected + 1, expected + 8):
        hints.setdefault(exact, "setmaxnreg counts are multiples of 8: round down")
    hints.pop(expected, None)
    return check_value(answer, expected, name, hints)


def check_expect_tx_answer(answer, expected, box_a_bytes, name="expect_tx bytes"):
    """The bytes a stage's TMA copies announce. Hints for one box only, for elements instead of bytes."""
    hints = {box_a_bytes: "that is the A box only: both copies of the stage complete on the same mbarrier",
             expected - box_a_bytes: "that is the B box only: both copies of the stage complete on the same mbarrier",
             expected // 2: "that counts elements; expect_tx counts bytes (2 per fp16)",
             expected * 8: "that counts bits; expect_tx counts bytes"}
    return check_value(answer, expected, name, hints)


def check_phase_answer(answer, expected, name="(stage, parity)"):
    """(stage, parity) a consumer waits on. Hints for the flipped parity and for a stage off by the
    pipeline depth."""
    stage, parity = expected
    hints = {(stage, 1 - parity): "right stage, flipped parity: the first fill of a stage completes phase 0, "
                                  "so its consumer waits on parity 0; parity alternates with each reuse"}
    return check_value(answer, tuple(expected), name, hints)


# ---- chapter 6 (TiledMMA, TiledCopy) -------------------------------------------------------------------
def plain_shape(shape):
    """A CuTe shape as nested tuples of plain ints (what a reader types: ((2, 2, 2), 4, 2))."""
    return tuple(plain_shape(x) for x in shape) if is_tuple(shape) else int(shape)


def _flat_ints(t):
    return [v for x in t for v in _flat_ints(x)] if is_tuple(t) else [int(t)]


def check_partition_shape_answer(answer, expected, name="partition shape", hints=None):
    """The shape of a thread's partition_A/B/C, (MMA, MMA_M, MMA_K) as nested tuples of ints. `expected`
    may be a CuTe shape. Built-in hints: the MMA mode flattened to a count, the last two modes swapped,
    the whole shape flattened; `hints` adds more {wrong shape: hint}."""
    expected = plain_shape(expected)
    mma, rest = expected[0], expected[1:]
    n_mma = 1
    for v in _flat_ints(mma):
        n_mma *= v
    found = {(n_mma,) + rest: "right counts, but the MMA mode keeps the atom's value shape (a nested shape), "
                              "not just its size",
             (mma,) + tuple(reversed(rest)): "the last two modes are swapped: (MMA, MMA_M, MMA_K) for A, "
                                             "(MMA, MMA_N, MMA_K) for B, (MMA, MMA_M, MMA_N) for C",
             tuple(_flat_ints(expected)): "flattened: the first mode is one mode, (MMA), holding the atom's "
                                          "values as a nested shape"}
    found.update({plain_shape(k): v for k, v in (hints or {}).items()})
    found.pop(expected, None)
    return check_value(answer, expected, name, found)


_LDSM = {"SM75_U32x1_LDSM_N": (False, 1), "SM75_U32x2_LDSM_N": (False, 2), "SM75_U32x4_LDSM_N": (False, 4),
         "SM75_U16x2_LDSM_T": (True, 1), "SM75_U16x4_LDSM_T": (True, 2), "SM75_U16x8_LDSM_T": (True, 4)}
_LDSM_WAY = {False: "ldmatrix without .trans gives each lane a pair of neighbours along a 16-byte row: right "
                    "when those rows run along K, wrong when they run along M or N (the MMA wants K pairs)",
             True: "with .trans each lane gets two elements of one column of an 8x8 matrix: right for rows "
                   "that run along M or N, wrong when the rows already run along K"}
_UNIVERSAL = {"UniversalCopy<uint128_t>": "a 128-bit copy moves 8 contiguous halves to ONE thread; the MMA "
                                          "fragment spreads them over 4 lanes, which only ldmatrix does in one "
                                          "instruction",
              "UniversalCopy<uint16_t>": "that works, one half at a time: 8 loads where one ldmatrix row would do"}


def _copy_hints(expected):
    """Hints for the usual wrong copy ops when `expected` (an ldmatrix op) is right: the other direction,
    more or fewer 8x8 matrices than the atom call needs, a copy without ldmatrix."""
    trans, count = _LDSM[expected]
    hints = dict(_UNIVERSAL)
    for name, (t, n) in _LDSM.items():
        if t != trans:
            hints[name] = _LDSM_WAY[t]
        elif n != count:
            hints[name] = (f"right direction, but .x{n} loads {n} 8x8 matri{'x' if n == 1 else 'ces'}: "
                           f"{'more' if n > count else 'fewer'} than one atom call needs")
    return hints


def check_copy_atom_answer(answer, expected, name="copy atom"):
    """A copy op's name, as C++ writes it ("SM75_U16x8_LDSM_T", with or without cute::); `expected` is an
    ldmatrix op. Hints for the other direction, the other counts of 8x8 matrices, and copies without
    ldmatrix."""
    return check_value(answer, expected, name, _copy_hints(expected))


def check_tiled_mma_answer(answer, expected, atom_threads, atom_mnk, atom_layout_mnk, name="threads and tile"):
    """(threads, (M, N, K)) of a TiledMMA. Hints for counting atoms instead of threads, and for the tile
    without the permutation (atom extent x atom layout)."""
    threads, tile = expected
    n_atoms = threads // atom_threads
    no_perm = tuple(a * b for a, b in zip(atom_mnk, atom_layout_mnk))
    hints = {(n_atoms, tuple(tile)): f"{n_atoms} is the number of atoms; each atom is {atom_threads} threads",
             (threads, no_perm): "that is atom shape x atom layout; the permutation (Tile) sets the tile "
                                 "when it is larger",
             (threads, tuple(atom_mnk)): "that is one atom's shape; the TiledMMA covers more"}
    hints.pop((threads, tuple(tile)), None)
    return check_value(answer, (threads, tuple(tile)), name, hints)


# ---- chapter 7 (tiled GEMM): checkers with the likely mistakes spelled out as hints ----------------------
def check_budget_answer(answer, expected, stages, a_bytes, name="(smem bytes, accumulator registers)"):
    """(shared-memory bytes, accumulator registers per thread) of a GEMM configuration. Hints for elements
    instead of bytes, one stage only, the A tiles only (a_bytes: all stages of A), the B tiles only,
    registers per warp instead of per thread, and f16 accumulators."""
    smem, regs = expected
    hints = {(smem // 2, regs): "that counts elements: fp16 takes 2 bytes each",
             (smem // stages, regs): "that is one stage: every stage has its own A and B buffers",
             (a_bytes, regs): "that is the A tiles only: B's tiles share the same shared memory",
             (smem - a_bytes, regs): "that is the B tiles only: A's tiles share the same shared memory",
             (smem, 32 * regs): "that is per warp; a register is per thread (divide by the 32 lanes)",
             (smem, regs // 2): "the accumulators are f32: one 32-bit register each"}
    return check_value(answer, tuple(expected), name, hints)


def check_wait_group_answer(answer, stages, name="cp.async.wait_group count", groups=1):
    """The largest wait_group count that is still correct at the top of a STAGES-deep cp.async main loop
    whose k-tiles each commit `groups` groups (k-tile kt must have landed; the groups of k-tiles
    kt+1 .. kt+STAGES-2 may stay in flight): groups * (STAGES - 2). Hints for the other counts (0 is safe but
    not the largest)."""
    expected = groups * (stages - 2)
    hints = {n: "that lets a group of k-tile kt itself stay in flight: the loop then reads a buffer before its "
                "copy lands (the bug)" for n in range(expected + 1, expected + groups + 1)}
    hints[0] = ("safe, but not the largest: it also waits for the k-tiles after kt, so the copies no longer "
                "overlap the math")
    if groups > 1:
        hints[stages - 2] = "safe, but not the largest: wait_group counts groups, not k-tiles"
    hints[groups * stages] = "more groups than are ever in flight: the wait never waits"
    hints.pop(expected, None)
    return check_value(answer, expected, name, hints)


def check_pipeline_stages_answer(answer, wait_group, release_lag, name="stages"):
    """The fewest stages with which a consumer that waits with `wgmma.wait_group wait_group` and releases
    the stage of k-tile kt - release_lag runs without a broken rule or a deadlock. The answer runs in
    cutelite.pipeline's simulation: fewer stages get the first rule the model finds broken; more run, but
    are not the fewest."""
    from ..pipeline import simulate_pipeline

    def errors(stages):
        return simulate_pipeline(8, stages, 2, load_time=0.6, wait_group=wait_group, release_lag=release_lag).errors
    expected = next(s for s in range(1, 9) if not errors(s))
    if answer is None:
        announce_exercise("pipeline_stages", name, expected,
                          params={"wait_group": wait_group, "release_lag": release_lag})
    got = _answer(name, answer, expected)
    if got is None:
        return False
    if not (is_int(got) and not isinstance(got, bool) and 1 <= got <= 8):
        return _report(name, False, f"expected a number of stages from 1 to 8; you have {shown(got)}")
    if got < expected:
        return _report(name, False, f"with {got} stage{'s' if got > 1 else ''} the model reports: "
                                    f"{errors(got)[0]}")
    if got > expected:
        return _report(name, False, f"{got} stages run, but not the fewest: the model runs with fewer as well")
    print(f"PASS {name}: {got} stages run without a deadlock or a broken rule in the model")
    return True
