"""make_fragment_like on a Tensor: a fresh zero-filled owning tensor of the same dtype, laid out by the
layout make_fragment_like (whose text tests/oracle checks against compiled C++)."""

import numpy as np

from cutelite import Layout, make_fragment_like, make_tensor
from cutelite.layout import make_fragment_like as layout_fragment_like


def test_tensor_fragment_is_fresh_zeroed_memory_of_the_same_dtype():
    src = make_tensor(np.arange(64, dtype=np.float16), Layout(((2, 2), 4, 4), ((2, 1), 16, 4)))
    frag = make_fragment_like(src)
    assert frag.layout == layout_fragment_like(src.layout)
    assert frag.engine.dtype == np.float16
    assert not np.shares_memory(frag.engine, src.engine)
    assert frag.engine.size == 64 and not frag.engine.any()


def test_layout_and_shape_pass_through():
    lay = Layout((4, 8), (8, 1))
    assert make_fragment_like(lay) == layout_fragment_like(lay)
    assert make_fragment_like((4, 8)) == Layout((4, 8))
