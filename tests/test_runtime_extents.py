"""Layouts with a run-time extent compute as in C++ CuTe (tests/fixtures/runtime_extents_cpp.txt, made by
tests/fixtures/gen_runtime_extents.sh from compiled C++, n = 64 a run-time int).

coalesce merges two modes only when the first one's shape is static and shape * stride equals the next stride
at compile time, so (_192,n):(_1,_192) stays two modes though it is the function of one (NVIDIA/cutlass#3469
asks the DSL, which does the same, for the merge). right_inverse and a composition whose B has a run-time
extent compute in C++ (and in cutelite); the CuTe DSL 4.8.1 refuses both (cutlass#3471, #3470: chapter 2's
box shows its refusals).
"""

import pytest

from cutelite import Layout, coalesce, composition, dyn, right_inverse, size
from cutelite.basis import E
from cpp_fixture import blocks

CPP = {key: text.strip() for key, text in blocks("runtime_extents_cpp.txt").items()}
n = dyn(64)

CASES = {
    "coalesce((_192,_64):(_1,_192))": lambda: coalesce(Layout((192, 64), (1, 192))),
    "coalesce((_192,n):(_1,_192))": lambda: coalesce(Layout((192, n), (1, 192))),
    "coalesce((n,_192):(_1,n))": lambda: coalesce(Layout((n, 192), (1, n))),
    "right_inverse((_16,n):(_1,_16))": lambda: right_inverse(Layout((16, n), (1, 16))),
    "composition((_4096,_8192):(_1,_4096), (_32,n,_8,_128):(_1@0,_8@1,_1@1,_32@0))":
        lambda: composition(Layout((4096, 8192), (1, 4096)), Layout((32, n, 8, 128), (E(0), 8 * E(1), E(1), 32 * E(0)))),
    "composition((_64,_64):(_1,_64), (_8,n):(_1@0,_1@1))":
        lambda: composition(Layout((64, 64), (1, 64)), Layout((8, n), (E(0), E(1)))),
}


def test_every_recorded_case_is_tested():
    assert set(CPP) == set(CASES)


@pytest.mark.parametrize("key", sorted(CASES))
def test_a_run_time_extent_prints_as_cpp(key):
    assert str(CASES[key]()) == CPP[key]


def test_what_coalesce_leaves_apart_is_still_one_run():
    """The two modes it does not merge are, as a function, the one mode 12288:1 of the static case."""
    unmerged = coalesce(Layout((192, n), (1, 192)))
    assert [unmerged(i) for i in range(size(unmerged))] == list(range(192 * 64))
