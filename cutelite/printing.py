"""Text output identical to C++ CuTe's ``print(layout)`` and ``print_layout(layout)``."""

from .layout import Layout, cosize, rank, size

__all__ = ["format_layout", "print_layout"]


def _num_digits(x):
    return len(str(int(x))) if x >= 0 else 1


def format_layout(layout):
    """The text of C++ ``print_layout``: the layout, then an M x N grid of offsets (rank-2 layouts only)."""
    if not (isinstance(layout, Layout) or hasattr(layout, "layout_b")):
        raise TypeError(f"format_layout/print_layout: expected a Layout or ComposedLayout, got {layout!r}")
    if rank(layout) != 2:
        raise ValueError(f"print_layout: needs a rank-2 layout, got {layout} of rank {rank(layout)}")
    width = _num_digits(int(cosize(layout))) + 2
    rows, cols = int(size(layout, 0)), int(size(layout, 1))
    rule = "    " + ("+" + "-" * width) * cols + "+"
    lines = [str(layout), "    " + "".join(f"  {n:>{width - 2}} " for n in range(cols))]
    for m in range(rows):
        lines.append(rule)
        lines.append(f"{m:>2}  " + "".join(f"| {layout(m, n):>{width - 2}} " for n in range(cols)) + "|")
    lines.append(rule)
    return "\n".join(lines) + "\n"


def print_layout(layout):
    """Print ``layout`` as C++ ``print_layout`` does: row index m, column index n, offset layout(m, n)."""
    print(format_layout(layout), end="")
