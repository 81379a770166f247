"""Chapter 10's kernels: fused attention, O = softmax(scale Q K^T [+ causal mask]) V with the log-sum-exp of
each row, written with the CuTe layer (kernels.cutejit).

fa2_mma: FlashAttention-2 on mma.sync (m16n8k16 on sm_80+, m16n8k8 on a T4): a CTA's Q tile in registers,
K and V tiles through shared memory, the online softmax between the two GEMMs.
`python -m kernels.attention.check` checks it against PyTorch on a GPU and times it.
"""
