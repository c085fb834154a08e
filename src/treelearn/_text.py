"""Plain-text tables for the command line and the demos."""

from __future__ import annotations


def table(rows: list[tuple], header: tuple, left: tuple[int, ...] = (0,)) -> str:
    """Rows under a header; the columns in ``left`` left-aligned, the others right-aligned."""
    cells = [tuple(str(c) for c in header)] + [tuple(str(c) for c in r) for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = []
    for r in cells:
        lines.append("  ".join(c.ljust(w) if i in left else c.rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths, strict=True))))
    return "\n".join(line.rstrip() for line in lines)
