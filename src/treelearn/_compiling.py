"""The Numba signature of a kernel's call, typed before the call.

A grower compiles its callees in the order it types them, so the kernels it types last wait
for all the others; :mod:`treelearn.engine.compiling` compiles those in a background process
meanwhile, and each layout lists them with their signatures, built here from the values the
grower will pass (:func:`signature`).

Why a module of its own, at the bottom of the package: it imports nothing of treelearn, so
the engine's modules can call it without an import circle. The compiling machinery used to
be one module that imported the engine (the exact grower, the search's ``Config``, the
linking) while seven engine modules imported it back, a circle of eight files; it is now
split by what it depends on: this module (nothing), :mod:`treelearn.engine.compiling` (the
notice and the background compilations, which know the engine's kernels) and
:mod:`treelearn._warmup` (the warm-up, which fits the estimators).
"""

from __future__ import annotations

from typing import Any


def signature(kernel: Any, values: dict[str, Any], scalars: dict[str, Any] | None = None
              ) -> tuple:
    """The Numba signature of a call of ``kernel`` whose parameters take ``values`` (typed as
    Numba types them) or, for the scalars a kernel computes itself, the Numba types of
    ``scalars`` (the engine's: :data:`treelearn.engine.nodes.SCALAR_TYPES`); a
    parameter in neither is a ``KeyError`` naming it (the caller's list has fallen behind the
    kernel)."""
    import inspect

    import numba

    if scalars is None:
        scalars = {}
    sig = []
    # a plain function without the compiler (NUMBA_DISABLE_JIT)
    for name in inspect.signature(getattr(kernel, "py_func", kernel)).parameters:
        if name in values:
            sig.append(numba.typeof(values[name]))
        elif name in scalars:
            sig.append(getattr(numba.types, scalars[name]))
        else:
            raise KeyError(f"no value or type for parameter {name!r} of {kernel.__name__}")
    return tuple(sig)
