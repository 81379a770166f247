"""Running CuTe DSL code from the book: is the DSL here, and what does a snippet print.

`trace` runs plain Python inside a DSL trace (the conformance test builds its cases that way).
A `@cute.jit` function prints twice over: Python's `print` runs while the DSL traces the function (the
values it knows then: static ones, `?` for dynamic ones), `cute.printf` and `cute.print_tensor` run in the
compiled code, through the C library's stdout. `run` captures both, in that order. DSL objects must not
outlive the traced function (touching one afterwards can crash the interpreter): snippets print, and
return plain Python values only.
"""

import contextlib
import ctypes
import importlib
import io
import os
import re
import sys
import tempfile

__all__ = ["VERSION", "missing", "run", "trace"]

VERSION = "4.8.1"       # the nvidia-cutlass-dsl release the book's recordings and requirements.txt use


def missing():
    """None when `cutlass.cute` of nvidia-cutlass-dsl imports here, else a sentence saying why not."""
    try:
        from importlib.metadata import version
        have = version("nvidia-cutlass-dsl")
    except Exception:
        have = None
    try:
        importlib.import_module("cutlass.cute")
    except Exception as e:   # not installed, or installed for another platform/CUDA: either way, not here
        return f"the CuTe DSL (nvidia-cutlass-dsl) does not import here: {type(e).__name__}: {e}"
    if have and have != VERSION:
        return None if have.split(".")[:2] == VERSION.split(".")[:2] else \
            f"nvidia-cutlass-dsl {have} is installed; the book's snippets are checked against {VERSION}"
    return None


@contextlib.contextmanager
def _c_stdout():
    """Redirect file descriptor 1 (the C library's stdout) into a temporary file; yields a reader."""
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        saved = os.dup(1)
        os.dup2(tmp.fileno(), 1)
        box = []
        try:
            yield box
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
            tmp.seek(0)
            box.append(tmp.read().decode(errors="replace"))


def run(fn, *args):
    """Call a DSL function; return what it printed: at trace time (print), then at run time (cute.printf).
    An exception's type and first line are printed as the snippet's last line, as a reader would see it;
    memory addresses are written 0x... (they change from run to run)."""
    trace = io.StringIO()
    with _c_stdout() as compiled, contextlib.redirect_stdout(trace):
        try:
            fn(*args)
        except Exception as e:
            print(f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}")
    return re.sub(r"0x[0-9a-f]{6,}", "0x...", trace.getvalue() + compiled[0])


def trace(fn, *args):
    """fn(*args) run while the DSL traces a host function (so its cute calls build real DSL objects),
    returning fn's result, which must be plain Python data."""
    from ._trace import inside
    result = []
    inside(lambda: result.append(fn(*args)))
    return result[0]
