"""TFLOP/s of chapter 6's GEMM tile and chapter 7's best kernel, ours and the CuTe DSL's, and cuBLAS's, measured
in one process by `python -m kernels.dsl.bench` (chapter 9 shows them where it cannot measure).
RUN says where and how; ROWS maps a size to {row name of kernels.dsl.bench.KERNELS: TFLOP/s}.

Not yet measured: RUN is None and ROWS holds the sizes with no figures, until the script has run on a GPU
(its --out folder holds the file that replaces this one)."""

RUN = None

ROWS = {4096: {}, 8192: {}}
