"""kernels.dsl: the book's objects and two of its kernels in NVIDIA's CuTe DSL (chapter 9 and the "In the
CuTe DSL" boxes of chapters 1-6).

The CuTe DSL (`cutlass.cute`, PyPI nvidia-cutlass-dsl) traces Python into MLIR and compiles it; on a machine
without a GPU it still runs host code: layouts, the algebra, atoms, TiledMMAs, TiledCopys. Its functions
must live in source files (it reads their source), so every DSL snippet the book shows is a function of
`examples.py`, and the kernels are `gemm_tile.py` (chapter 6) and `tc_sm80.py` (chapter 7).

    from kernels.dsl import missing, box
    missing()              # None where the DSL runs here, else why it does not
    box("ch1_layouts")     # a folded box: the snippet's source and what the DSL printed (live or recorded)

Where the DSL is not installed the boxes show the output recorded from it (`snippets.json`, written by
`python -m kernels.dsl.record`), labelled as recorded. Importing this package does not import the DSL.
"""

from .host import VERSION, missing, run, trace  # noqa: F401
from .box import box, source  # noqa: F401, E402
