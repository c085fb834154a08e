"""Bit counting in kernels: :func:`popcount` compiles to LLVM's population count.

The optimal trees' depth-two solver counts the rows of a cell as the set bits of bitmaps
(:mod:`treelearn.engine.optimal`); the histogram splitter lists a node's bins from its
bitmap, the index of a word's lowest set bit being the count of the bits below it
(:func:`treelearn.engine.hist.mask_order`). Python's ``int.bit_count`` is the twin: the same
function runs as written under ``NUMBA_DISABLE_JIT=1``.
"""

from __future__ import annotations

from numba import types
from numba.extending import intrinsic, overload


def popcount(x) -> int:
    """Set bits of a uint64 (as Python runs it: ``NUMBA_DISABLE_JIT=1``)."""
    return int(x).bit_count()


@intrinsic
def _ctpop(typingctx, x):
    """LLVM's population count of a uint64: one instruction where the processor has it (the
    parallel bit count in shifts and masks measured 1.8x slower in :func:`depth_two_bits`)."""
    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.int64(types.uint64), codegen


@overload(popcount)
def _popcount_compiled(x):
    return lambda x: _ctpop(x)
