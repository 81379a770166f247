"""kernels.harness, where no GPU is: the check poisons the output and refuses a kernel that leaves an element
unwritten or computes another product (the reference: NumPy), the SASS counts on a listing written here (the
format nvdisasm prints), and the baseline says why there is none without PyTorch or CuPy."""

import numpy as np
import pytest

import kernels

kernels.setup(verbose=False)

from numba import cuda  # noqa: E402  (after kernels.setup)

from kernels.harness import blas, check, cublas_baseline, rel_err, sass_counts  # noqa: E402

SASS = """
        /*0000*/                   MOV R1, c[0x0][0x28] ;                      /* 0x00000a0000017a02 */
        /*0010*/                   LDG.E.128 R4, desc[UR4][R2.64] ;            /* 0x000fe20000000f00 */
        /*0020*/                   LDG.E R8, desc[UR4][R2.64+0x10] ;           /* 0x000fe20000000f00 */
        /*0030*/                   HMMA.16816.F32 R12, R4, R6, R12 ;           /* 0x000fe20000000f00 */
        /*0040*/              @!P0 HMMA.16816.F32 R16, R4, R6, R16 ;           /* 0x000fe20000000f00 */
        /*0050*/                   BRA 0x50;                                   /* 0x000fc0000383ffff */
        /*0060*/              @!PT LDS RZ, [RZ] ;                              /* 0x000fc000000000ff */
"""


def test_sass_counts_instructions_not_padding():
    counts = sass_counts(SASS, ("HMMA", "LDG.E", "LDG.E ", "LDG.E.128", "LDS", "STL"))
    assert counts == {"HMMA": 2, "LDG.E": 2, "LDG.E ": 1, "LDG.E.128": 1, "LDS": 0, "STL": 0}


def test_rel_err_counts_an_unwritten_element_as_infinite():
    want = np.arange(1.0, 7.0).reshape(2, 3)
    assert rel_err(want, want) == 0.0
    assert rel_err(want * (1 + 1e-4), want) == pytest.approx(1e-4)
    C = want.copy()
    C[1, 2] = np.nan
    assert rel_err(C, want) == float("inf")


def _kernel(C, result):
    """A stand-in kernel: writes `result` into the device array C, but for its NaN (elements it never writes)."""
    return lambda: C.copy_to_device(np.where(np.isnan(result), C.copy_to_host(), result).astype(np.float32))


def test_check_poisons_the_output_first():
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((8, 4)), rng.standard_normal((4, 16))
    C = cuda.to_device(np.zeros((8, 16), np.float32))
    assert check(_kernel(C, A @ B), C, A @ B, "right") < 1e-6      # C now holds the right product ...
    lazy = A @ B
    lazy[1, 2] = np.nan
    with pytest.raises(AssertionError, match=r"check: lazy differs from the reference: relative error inf"):
        check(_kernel(C, lazy), C, A @ B, "lazy")                      # ... but is NaN before this run
    with pytest.raises(AssertionError, match=r"check: wrong differs .* \(tolerance 1e-03\)"):
        check(_kernel(C, 1.01 * A @ B), C, A @ B, "wrong")


def test_no_baseline_without_torch_or_cupy():
    lib, why = blas()
    if lib is not None:
        pytest.skip(f"{lib.__name__} is installed here")
    assert "neither torch nor CuPy" in why
    with pytest.raises(RuntimeError, match="cublas_baseline: neither torch nor CuPy"):
        cublas_baseline(np.ones((2, 2), np.float16), np.ones((2, 2), np.float16))
