"""Memory the big buffers of a fit need, checked before they are allocated.

A fit that asks for more memory than the machine has is otherwise killed by the operating
system (no message, no traceback) or drives it into swap for minutes. The growers estimate
their big buffers first (:func:`treelearn.engine.build.grow` and the layouts) and
:func:`check` raises a ``MemoryError`` that names the size, the memory available, and what
to change, when the estimate does not fit.

The memory available is the least of: ``MemAvailable`` of ``/proc/meminfo``; the cgroup's
limit less its usage (containers); and the limit the ``TREELEARN_MEMORY_LIMIT`` environment
variable sets (bytes, or with a suffix ``K``, ``M``, ``G``, ``T``: ``TREELEARN_MEMORY_LIMIT=8G``;
``off`` turns the check off). Where none is known (not Linux, no variable) nothing is checked.
"""

from __future__ import annotations

import os
import re

ENV = "TREELEARN_MEMORY_LIMIT"
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def dense_shape(X) -> tuple[int, int] | None:
    """``(rows, columns)`` of a dense two-dimensional ``X``, else None: a sparse matrix or
    an input that is not yet an array, whose size the fit checks once it is validated."""
    shape = getattr(X, "shape", None)
    if shape is None or len(shape) != 2 or _is_sparse(X):
        return None
    return int(shape[0]), int(shape[1])


def _is_sparse(X) -> bool:
    import scipy.sparse as sp

    return sp.issparse(X)


def parse_size(text: str) -> int:
    """Bytes of a size such as ``"512M"``, ``"8G"`` or ``"1000000"`` (binary units)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", text, flags=re.IGNORECASE)
    if not m:
        raise ValueError(f"{ENV}={text!r} is not a size (e.g. 8G, 512M, 1000000, or off)")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def format_size(nbytes: float) -> str:
    """``nbytes`` in the largest binary unit that keeps it at least 1 (e.g. ``"3.2 GiB"``)."""
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{int(nbytes)} bytes"


def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_available() -> int | None:
    for limit_path, usage_path in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        limit = _read_int(limit_path)
        if limit is not None and limit < 1 << 60:  # v1 writes a huge number for "no limit"
            return max(limit - (_read_int(usage_path) or 0), 0)
    return None


def available() -> tuple[int | None, str]:
    """(bytes a fit may use, a phrase naming that number and its source); None when unknown
    or off."""
    env = os.environ.get(ENV, "").strip()
    if env.lower() == "off":
        return None, f"{ENV}=off"
    found = []
    if env:
        size = parse_size(env)
        found.append((size, f"the {format_size(size)} {ENV}={env} allows"))
    mem = _meminfo_available()
    if mem is not None:
        found.append((mem, f"the {format_size(mem)} of memory available"))
    cg = _cgroup_available()
    if cg is not None:
        found.append((cg, f"the {format_size(cg)} the container has free"))
    if not found:
        return None, "unknown"
    return min(found)


def check(nbytes: float, what: str, alternatives: str) -> None:
    """Raise ``MemoryError`` if ``nbytes`` (the estimate of ``what``) exceeds the memory
    available; the message names both and ``alternatives`` (what the user can change)."""
    limit, source = available()
    if limit is None or nbytes <= limit:
        return
    raise MemoryError(
        f"{what} needs about {format_size(nbytes)}, more than {source}. {alternatives} (To "
        f"check against another limit, or not at all, set {ENV}, e.g. {ENV}=64G or "
        f"{ENV}=off.)")
