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
        # mkstemp makes the file private (0600); the user expects what a plain open() gives
        os.chmod(tmp, _mode_for(path))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _mode_for(path: Path) -> int:
    """Permissions of the file replacing ``path``: those of the file there, else 0666 less the
    umask (what ``open(path, "w")`` would create)."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask; read from /proc where possible, because setting it to read it back
    briefly changes it for every thread."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return umask
