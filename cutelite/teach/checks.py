"""Visible checks for the book: every result a chapter could get wrong is compared, and the
comparison is printed, so a reader sees what was checked and that it passed. NumPy is imported only
to compare arrays."""

__all__ = ["check", "check_close"]


def _show(x):
    text = str(x)
    return text if len(text) <= 60 else text[:57] + "..."


def check(result, expected, what="result"):
    """Compare result with expected (==, or element-wise for arrays); print a PASS line or raise.

    Layouts compare by their printed text too, so static/dynamic differences are caught.
    """
    if hasattr(result, "__array__") or hasattr(expected, "__array__"):
        import numpy as np
        ok = np.array_equal(np.asarray(result), np.asarray(expected))
    else:
        ok = result == expected and str(result) == str(expected)
    if not ok:
        raise AssertionError(f"FAIL {what}: got {_show(result)}, expected {_show(expected)}")
    print(f"PASS {what}: {_show(result)} == {_show(expected)}")
    return True


def check_close(result, expected, what="result", rtol=1e-3, atol=1e-3):
    """Compare arrays within a tolerance (for floating-point kernels); print the largest error."""
    import numpy as np
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if not isinstance(tol, (int, float)) or isinstance(tol, bool) or not tol >= 0:
            raise ValueError(f"check_close: {name} must be a number >= 0, got {_show(tol)}")
    rtol, atol = float(rtol), float(atol)
    try:
        result, expected = np.asarray(result, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"check_close: {what}: the result and the expected value must be arrays of numbers "
                        f"({_show(e)})") from None
    if result.shape != expected.shape:
        raise AssertionError(f"FAIL {what}: shape {result.shape} != expected {expected.shape}")
    err = float(np.max(np.abs(result - expected))) if result.size else 0.0
    if not np.allclose(result, expected, rtol=rtol, atol=atol) or np.isnan(result).any():
        raise AssertionError(f"FAIL {what}: max |error| {err:.3g} (rtol={rtol}, atol={atol})")
    print(f"PASS {what}: {result.shape} matches NumPy, max |error| {err:.3g}")
    return True
