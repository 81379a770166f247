"""The teaching layer: what the book shows on top of the engine (the modules of cutelite/ itself).

The engine (int_tuple, layout, swizzle, printing, parse, atoms, copy_atoms, tiled, bank_conflicts, explain,
tensor) imports with the standard library alone and runs in the reader's browser. Here:

    checks      check / check_close: the PASS lines of the chapters (NumPy for arrays)
    answers     a reader's answer, typed or a Python value, read as one value (standard library)
    exercises   the exercise checkers (standard library; also run by the live page)
    explorers   what each explorer computes from the text in its boxes, and what it refuses (standard library)
    softmax     the online softmax of one row, block by block, as attention kernels compute it (standard library)
    attention   attention's FLOPs and bytes, and the causal mask tile by tile (standard library)
    svg         pictures as SVG text (standard library): what the live page draws
    announce    the hidden elements a notebook leaves for the live page (standard library)
    live        the live page's bridge: view() and check(), run in the browser
    measured    GPU timings recorded for the chapters to print where no GPU is present
    viz         matplotlib figures of the notebooks
    widgets     ipywidgets explorers of the notebooks
"""
