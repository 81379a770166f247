"""Auto-checks for the book's exercises: a reader's answer is compared with the expected one and the
checker prints one line, never raises:

    not answered yet      the answer is still None
    PASS                  right
    a specific hint       wrong: which mode's shape or stride differs, which offset, what kind of mistake

Each checker returns True only for a right answer, so a solution cell can `assert` it. Standard library
only (NumPy arrays are accepted as answers): the live page runs these very checkers in the browser. An
unanswered check announces itself (cutelite.teach.live) so the page can give it an answer box.
"""

from ..int_tuple import fmt, is_int, is_tuple
from ..layout import Layout, coalesce, rank, size, get

__all__ = ["check_value", "check_layout_answer", "check_offsets_answer", "check_swizzle_answer", "layout_hint",
           "offsets_hint", "check_lbo_sbo_answer", "check_expect_tx_answer", "check_phase_answer",
           "plain_shape", "check_partition_shape_answer", "check_copy_atom_answer", "check_tiled_mma_answer",
           "check_budget_answer", "check_wait_group_answer"]


def _report(name, ok, hint=None):
    if ok:
        print(f"PASS {name}")
    else:
        print(f"not yet {name}: {hint}")
    return ok


def _unanswered(name, answer, checker=None, expected=None, hints=None):
    if answer is None or answer is Ellipsis:
        print(f"{name}: not answered yet")
        if checker:
            from .live import announce_exercise
            announce_exercise(checker, name, expected, hints)
        return True
    return False


def _as_list(x):
    """NumPy arrays (and anything with tolist) as nested lists; other values unchanged."""
    return x.tolist() if hasattr(x, "tolist") and not isinstance(x, Layout) else x


def _same(a, b):
    if hasattr(a, "tolist") or hasattr(b, "tolist"):
        a, b = _as_list(a), _as_list(b)
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            return _nested(a) == _nested(b)
    return bool(a == b)


def _nested(x):
    """Lists and tuples alike, as nested lists (array_equal compares values, not container types)."""
    return [_nested(v) for v in x] if isinstance(x, (list, tuple)) else x


def check_value(answer, expected, name="answer", hints=None):
    """Check a value (int, tuple, string, ...). hints maps a likely wrong answer to its hint, e.g.
    {64: "that is size(L); cosize is one past the largest offset"}; other wrong answers get a
    generic comparison (too large/small, length, first differing element).
    """
    if isinstance(expected, Layout):
        return check_layout_answer(answer, expected, name)
    if _unanswered(name, answer, "value", expected, hints):
        return False
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
    if _unanswered(name, answer, "layout", expected):
        return False
    if isinstance(answer, str):
        from ..parse import parse_layout
        try:
            answer = parse_layout(answer)
        except ValueError as e:
            return _report(name, False, f"cannot read the text: {e}")
    hint = layout_hint(answer, expected)
    return _report(name, hint is None, hint)


def _grid_of(x):
    """x as a list of equal rows if it is a 2-D grid (list of lists or 2-D array), else None."""
    x = _as_list(x)
    if isinstance(x, (list, tuple)) and x and all(isinstance(r, (list, tuple)) for r in x):
        rows = [list(r) for r in x]
        if len({len(r) for r in rows}) == 1 and not any(isinstance(v, (list, tuple)) for r in rows for v in r):
            return rows
    return None


def _flat(x):
    x = _as_list(x)
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in _flat(item)]
    return [x]


def _transpose(grid):
    return [list(col) for col in zip(*grid)]


def offsets_hint(answer, expected):
    """Why the offsets `answer` differ from `expected` (a Layout or a sequence/array); None if equal."""
    if isinstance(expected, Layout):
        exp1d = [expected(i) for i in range(size(expected))]
        exp2d = None
        if rank(expected) <= 2:
            exp2d = [exp1d] if rank(expected) == 1 else \
                [[expected(m, n) for n in range(size(expected, 1))] for m in range(size(expected, 0))]
    else:
        exp2d = _grid_of(expected)
        exp1d = [v for col in _transpose(exp2d) for v in col] if exp2d else _flat(expected)  # column-major
    grid = _grid_of(answer)
    if grid is not None:
        if exp2d is None:
            return f"expected a flat list of {len(exp1d)} offsets, you have a {(len(grid), len(grid[0]))} grid"
        shape, want = (len(grid), len(grid[0])), (len(exp2d), len(exp2d[0]))
        if shape != want:
            if grid == _transpose(exp2d):
                return "your grid is transposed: rows are the first mode m, columns the second n"
            return f"the grid should be {want[0]} x {want[1]}, you have {shape[0]} x {shape[1]}"
        diff = [(m, n) for m in range(shape[0]) for n in range(shape[1]) if grid[m][n] != exp2d[m][n]]
        if not diff:
            return None
        m, n = diff[0]
        return f"({m},{n}) should be {exp2d[m][n]}, you have {grid[m][n]} ({len(diff)} cells differ)"
    ans = _flat(answer)
    if len(ans) != len(exp1d):
        return f"expected {len(exp1d)} offsets, you have {len(ans)}"
    if ans == exp1d:
        return None
    if exp2d is not None and ans == [v for row in exp2d for v in row]:
        return "you listed them row by row; CuTe's 1-D index runs down the columns first (colexicographic)"
    if sorted(ans) == sorted(exp1d):
        return "right offsets, wrong order: index i runs through the first mode fastest"
    i = next(i for i, (a, e) in enumerate(zip(ans, exp1d)) if a != e)
    return f"offset at index {i} should be {exp1d[i]}, you have {ans[i]}"


def check_offsets_answer(answer, expected, name="offsets"):
    """Check a list (index order) or 2-D grid (as print_layout shows) of offsets against a Layout or
    an array of expected offsets."""
    if _unanswered(name, answer, "offsets", expected):
        return False
    try:
        hint = offsets_hint(answer, expected)
    except (TypeError, ValueError) as e:
        hint = f"expected numbers in a list or a grid: {e}"
    return _report(name, hint is None, hint)


def check_swizzle_answer(answer, cost, name="swizzle"):
    """Exercise check: `answer` is (B, M, S) or None; `cost(Swizzle)` returns the BankReport of the access.
    Prints 'not answered yet', PASS (conflict-free), or the conflicts the answer leaves."""
    from ..swizzle import Swizzle
    if answer is None:
        print(f"{name}: not answered yet")
        from .live import announce_exercise, swizzle_costs
        announce_exercise("swizzle", name, None, costs=swizzle_costs(cost))
        return False
    try:
        rep = cost(Swizzle(*answer))
    except ValueError as e:
        print(f"not yet {name}: {e}")
        return False
    if rep.conflicts == 0:
        print(f"PASS {name}: Sw<{','.join(map(str, answer))}> gives {rep.wavefronts} wavefronts, no conflicts")
        return True
    print(f"not yet {name}: Sw<{','.join(map(str, answer))}> still needs {rep.wavefronts} wavefronts "
          f"(ideal {rep.ideal}): the worst bank serves {rep.ways} words. Are the yyy bits the row bits, "
          f"and are there enough of them to tell the rows of one phase apart?")
    return False


# ---- chapter 8 (Hopper): checkers with the likely mistakes spelled out as hints --------------------------
def check_lbo_sbo_answer(answer, expected, name="(LBO, SBO)"):
    """(leading, stride) byte offsets of a GMMA descriptor, in 16-byte units, as a pair. Hints for the pair
    swapped, for bytes instead of 16-byte units, and for elements instead of 16-byte units."""
    lbo, sbo = expected
    hints = {(sbo, lbo): "swapped: LBO is the leading (K) direction, SBO the step between 8-row core-matrix groups",
             (16 * lbo, 16 * sbo): "those are bytes; the descriptor counts 16-byte units (bytes >> 4)",
             (8 * lbo, 8 * sbo): "those are 16-bit elements; the descriptor counts 16-byte units (8 halves)"}
    return check_value(tuple(answer) if isinstance(answer, list) else answer, tuple(expected), name, hints)


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
    return check_value(tuple(answer) if isinstance(answer, list) else answer, tuple(expected), name, hints)


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
    found = {(n_mma,) + rest: f"right counts, but the MMA mode keeps the atom's value shape {mma}, "
                              "not just its size",
             (mma,) + tuple(reversed(rest)): "the last two modes are swapped: (MMA, MMA_M, MMA_K) for A, "
                                             "(MMA, MMA_N, MMA_K) for B, (MMA, MMA_M, MMA_N) for C",
             tuple(_flat_ints(expected)): "flattened: the first mode is one mode, (MMA), holding the atom's "
                                          "values as a nested shape"}
    found.update({plain_shape(k): v for k, v in (hints or {}).items()})
    found.pop(expected, None)
    return check_value(plain_shape(answer) if is_tuple(answer) else answer, expected, name, found)


_COPY_HINTS = {
    "SM75_U32x4_LDSM_N": "ldmatrix without .trans gives each lane a pair of neighbours along a 16-byte row; "
                         "in an M-major tile those rows run along M, and the MMA wants K pairs",
    "SM75_U16x8_LDSM_T": "with .trans each lane gets two elements of one column of an 8x8 matrix: right for "
                         "rows that run along M, wrong when the rows already run along K",
    "UniversalCopy<uint128_t>": "a 128-bit copy moves 8 contiguous halves to ONE thread; the MMA fragment "
                                "spreads them over 4 lanes, which only ldmatrix does in one instruction",
    "UniversalCopy<uint16_t>": "that works, one half at a time: 8 loads where one ldmatrix row would do",
    "SM75_U16x4_LDSM_T": "right direction, but .x2 loads two 8x8 matrices: half of what a warp's atom needs",
    "SM75_U16x2_LDSM_T": "right direction, but .x1 loads one 8x8 matrix: a quarter of what a warp's atom needs",
}


def check_copy_atom_answer(answer, expected, name="copy atom"):
    """A copy op's name, as C++ writes it ("SM75_U16x8_LDSM_T"). Hints for the usual wrong choices."""
    if isinstance(answer, str):
        answer = answer.strip().removeprefix("cute::")
    return check_value(answer, expected, name, {k: v for k, v in _COPY_HINTS.items() if k != expected})


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
    if isinstance(answer, list):
        answer = tuple(tuple(x) if isinstance(x, list) else x for x in answer)
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
    return check_value(tuple(answer) if isinstance(answer, list) else answer, tuple(expected), name, hints)


def check_wait_group_answer(answer, stages, name="cp.async.wait_group count"):
    """The largest wait_group count that is still correct at the top of a STAGES-deep cp.async main loop
    (k-tile kt must have landed; the groups of k-tiles kt+1 .. kt+STAGES-2 may stay in flight): STAGES - 2.
    Hints for the other counts (0 is safe but not the largest)."""
    hints = {stages - 1: "that lets k-tile kt's own group stay in flight: the loop then reads a buffer "
                         "before its copy lands (the bug)",
             0: "safe, but not the largest: it also waits for the k-tiles after kt, so the copies no longer "
                "overlap the math",
             stages: "more groups than are ever in flight: the wait never waits"}
    return check_value(answer, stages - 2, name, hints)
