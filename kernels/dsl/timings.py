"""TFLOP/s of chapter 6's GEMM tile and chapter 7's best kernel, ours and the CuTe DSL's, and cuBLAS's, measured
in one process by `python -m kernels.dsl.bench` (chapter 9 shows them where it cannot measure).
RUN says where and how; ROWS maps a size to {row name of kernels.dsl.bench.KERNELS: TFLOP/s}."""

RUN = {'command': 'python -m kernels.dsl.bench --sizes 4096 8192 --out DIR',
 'date': '2026-11-25',
 'device': 'NVIDIA H100 80GB HBM3 (sm_90)',
 'method': 'GPU time (kernels.timing.gpu_time_ms), one process, Gaussian fp16 A and B, fp32 C',
 'versions': 'nvidia-cutlass-dsl 4.8.1, torch 2.11.0+cu130'}

ROWS = {4096: {'ch. 6 GEMM tile, CuTe DSL': 51.2,
        'ch. 6 GEMM tile, ours (Numba)': 51.3,
        'ch. 7 tc sm80 128x128x32 4st, CuTe DSL': 425.0,
        'ch. 7 tc sm80 128x128x32 4st, ours (Numba)': 415.2,
        'cuBLAS (torch.mm, fp16 in, fp32 out)': 732.6},
 8192: {'ch. 6 GEMM tile, CuTe DSL': 52.9,
        'ch. 6 GEMM tile, ours (Numba)': 52.7,
        'ch. 7 tc sm80 128x128x32 4st, CuTe DSL': 424.5,
        'ch. 7 tc sm80 128x128x32 4st, ours (Numba)': 409.6,
        'cuBLAS (torch.mm, fp16 in, fp32 out)': 760.1}}
