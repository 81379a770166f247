"""explain says in words why a result C++ accepts is not what its name promises.

The results themselves are compiled C++ CuTe's (tests/fixtures/limits_cpp.txt, made by gen_limits.sh); the
words are checked against the definitions, evaluated here by brute force with an evaluator of this file's
own: a layout maps the colexicographic coordinate of index i to the sum of coordinate times stride; A o B
is A(B(i)) (past size(A), C++ goes on along A's last mode); a left inverse gives back i from A(i); a
complement fills [0, size(A) * size(R)) together with A, each offset once.
"""

import random

import pytest

from cutelite import Layout, composition
from cutelite.explain import explain

with open(__file__.rsplit("/", 1)[0] + "/fixtures/limits_cpp.txt") as f:
    _blocks = f.read().split("== ")[1:]
CPP = {b.split("\n", 1)[0]: b.split("\n", 1)[1].strip() for b in _blocks}


def flat(t):
    return [y for x in t for y in flat(x)] if isinstance(t, tuple) else [t]


def offset(shape, stride, i, extend=False):
    """L(i) from the definition; with extend, the last flat mode has no end (C++'s composition past size)."""
    shp, std = flat(shape), flat(stride)
    total = 0
    for k, (s, d) in enumerate(zip(shp, std)):
        last = k == len(shp) - 1
        c, i = (i, 0) if last and extend else (i % s, i // s)
        total += c * d
    return total


def size(shape):
    n = 1
    for s in flat(shape):
        n *= s
    return n


def listed(values):
    return "[" + ",".join(str(v) for v in values) + "]"


def text(steps):
    return "\n".join(steps)


@pytest.mark.parametrize("a, b, cpp", [
    (((4, 6), (6, 1)), (8, 3), "composition((_4,_6):(_6,_1), _8:_3)"),
    (((4, 6), (1, 8)), (4, 3), "composition((_4,_6):(_1,_8), _4:_3)"),
    (((4, 6), (1, 8)), (6, 3), "composition((_4,_6):(_1,_8), _6:_3)"),
])
def test_composition_that_is_not_a_composition_says_which_stride_and_shape(a, b, cpp):
    r, steps = explain("composition", Layout(*a), Layout(*b))
    assert str(r) == CPP[cpp]
    n = b[0]
    got = [r(i) for i in range(n)]
    want = [offset(*a, b[1] * i, extend=True) for i in range(n)]
    assert got != want
    words = text(steps)
    assert f"check: R(i) == A(B(i)) for all i < {n}: False" in words
    shape0 = flat(a[0])[0]
    assert b[1] < shape0 and shape0 % b[1] and b[1] % shape0   # C++'s weak check passes, the strong one fails
    assert f"not A o B: B's stride {b[1]} and A's shape {shape0}" in words
    assert "divide neither one another" in words
    assert f"R's offsets {listed(got)} differ from A(B(i)) = {listed(want)}" in words


def test_composition_with_a_negative_int_says_it_has_no_elements():
    r, steps = explain("composition", Layout((4, 8)), -4)
    assert str(r) == CPP["composition((_4,_8):(_1,_4), -4)"]
    assert "not A o B: -4:_1 has a negative size, so it has no coordinates" in text(steps)


def test_composition_past_the_end_of_a_says_a_is_extended():
    r, steps = explain("composition", Layout(4), Layout(8))
    assert str(r) == CPP["composition(_4:_1, _8:_1)"]
    assert [r(i) for i in range(8)] == [offset(4, 1, i, extend=True) for i in range(8)]
    words = text(steps)
    assert "B reaches index 7, past A's last index 3" in words
    assert "check: R(i) == A(B(i)) for all i < 8: True" in words and "not A o B" not in words


def test_composition_whose_modes_do_not_add_up_says_so():
    a, b = ((2, 2), (10, 1)), ((2, 2), (1, 1))
    r, steps = explain("composition", Layout(*a), Layout(*b))
    got = [r(i) for i in range(4)]
    want = [offset(*a, offset(*b, i), extend=True) for i in range(4)]
    bad = next(i for i in range(4) if got[i] != want[i])
    coord = f"({bad % 2},{bad // 2})"
    words = text(steps)
    assert f"B{coord} = {offset(*b, bad)} carries from one mode of A into the next" in words
    assert f"A(B{coord}) = {want[bad]}, not R{coord} = {got[bad]}" in words


def test_left_inverse_of_a_layout_that_is_not_injective_names_the_collision():
    a = ((2, 2), (1, 1))
    r, steps = explain("left_inverse", Layout(*a))
    assert str(r) == CPP["left_inverse((_2,_2):(_1,_1))"]
    image = [offset(*a, i) for i in range(4)]
    first = next((image.index(o), i, o) for i, o in enumerate(image) if image.index(o) != i)
    words = text(steps)
    assert "check: R(A(i)) == i for all i < 4: False" in words
    assert f"not a left inverse: A is not injective: A({first[0]}) = A({first[1]}) = {first[2]}" in words


def test_complement_that_leaves_a_hole_says_which_offsets_and_why():
    a = ((2, 2), (1, 3))
    r, steps = explain("complement", Layout(*a))
    assert str(r) == CPP["complement((_2,_2):(_1,_3))"]
    cosize = offset(*a, 3) + 1
    reached = {offset(*a, i) for i in range(4)} | {r(j) for j in range(1)}
    missing = [o for o in range(cosize) if o not in reached]
    words = text(steps)
    assert f"and 4 >= {cosize}: False" in words
    assert f"offsets {listed(missing)} are reached by neither A nor R" in words
    assert "A's stride 3 is not a multiple of 2" in words


def test_divide_by_a_tile_that_does_not_divide_says_so():
    r, steps = explain("logical_divide", Layout(6), Layout(4))
    assert str(r) == CPP["logical_divide(_6:_1, _4:_1)"]
    words = text(steps)
    assert "size(A) = 6 is not a multiple of the tile's size 4" in words
    assert "check: R(i) == A(T(i)) for all i < 8: True" in words


def test_valid_results_say_nothing_is_wrong():
    for op, a, b in (("composition", Layout((10, 2), (16, 4)), Layout((5, 4), (1, 5))),
                     ("left_inverse", Layout((4, 8), (8, 1)), None),
                     ("complement", Layout((2, 2), (1, 6)), 24),
                     ("logical_divide", Layout((4, 2, 3), (2, 1, 8)), Layout(4, 2))):
        words = text(explain(op, a, b)[1])
        assert "False" not in words and "not a" not in words and "not A o" not in words, (op, words)


def test_the_verdict_on_compositions_is_the_brute_force_one():
    """Over random small layouts C++ accepts: explain's check says False, and gives a reason, exactly when
    R(i) != A(B(i)) for some i; the reason is a stride and a shape that divide neither one another, or B's
    modes carrying from one mode of A into the next, never a bare "differs"."""
    rng = random.Random(18)
    compared = disagreements = 0
    for _ in range(3000):
        a_shape = tuple(rng.choice([2, 3, 4, 6, 8]) for _ in range(rng.randint(1, 3)))
        a_stride = tuple(rng.choice([1, 2, 3, 4, 6, 8, 12, 16]) for _ in a_shape)
        b_shape = tuple(rng.choice([1, 2, 3, 4, 6, 8]) for _ in range(rng.randint(1, 2)))
        b_stride = tuple(rng.choice([0, 1, 2, 3, 4, 5, 6, 8]) for _ in b_shape)
        try:
            r = composition(Layout(a_shape, a_stride), Layout(b_shape, b_stride))
        except ValueError:
            continue   # C++ refuses it too (tests/test_cpp_oracle.py)
        _, steps = explain("composition", Layout(a_shape, a_stride), Layout(b_shape, b_stride))
        n = size(b_shape)
        exact = all(r(i) == offset(a_shape, a_stride, offset(b_shape, b_stride, i), extend=True) for i in range(n))
        words = text(steps)
        assert (f"for all i < {n}: {exact}" in words) and (("not A o B" in words) == (not exact)), words
        assert exact or "divide neither one another" in words or "carries from one mode of A" in words, words
        compared += 1
        disagreements += not exact
    assert compared > 1000 and disagreements > 50


def test_cutlass_2955_each_mode_fits_but_the_sum_carries():
    """NVIDIA/cutlass#2955: A = (6,2):(1,7), B = (3,2):(2,3) passes every divisibility check, and C++ returns
    (_3,_2):(_2,_3), which is not A o B: B(2,1) = 4 + 3 = 7 runs past A's first mode (6 elements)."""
    a, b = ((6, 2), (1, 7)), ((3, 2), (2, 3))
    r, steps = explain("composition", Layout(*a), Layout(*b))
    assert str(r) == CPP["composition((_6,_2):(_1,_7), (_3,_2):(_2,_3))"]
    assert offset(*b, 5) == 7 and offset(*a, 7) == 8 and r(2, 1) == 7
    words = text(steps)
    assert "check: R(i) == A(B(i)) for all i < 6: False" in words
    assert "each mode of B composes exactly on its own" in words
    assert "B(2,1) = 7 carries from one mode of A into the next, so A(B(2,1)) = 8, not R(2,1) = 7" in words


def test_composition_below_index_0_says_a_is_continued_there():
    r, steps = explain("composition", Layout((4, 3), (3, 1)), Layout(2, -1))
    words = text(steps)
    assert "B reaches index -1, below A's first index 0" in words
    assert [r(i) for i in range(2)] == [0, -3]          # A(-1): -1 = 0 * 4 + (-1) (C++ truncation), so -1 * 3
    assert "check: R(i) == A(B(i)) for all i < 2: True" in words
