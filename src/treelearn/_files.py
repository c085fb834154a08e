"""Writing files atomically: a complete new file or the old one, never half of either.

Everything that writes a file the user named (the explorer page, rendered graphs, and model
files to come) writes a temporary file beside it and renames it into place.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: Path) -> Iterator[str]:
    """Yield a temporary path beside ``path``; on success it replaces ``path``, on any error
    it is removed and ``path`` is left as it was."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp",
                               dir=path.parent if str(path.parent) else ".")
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
