"""Writing a file all at once or not at all.

Every file ensemblekit writes (models, predictions, scores, labels, plots) goes
through :func:`write_atomic`, so a failed or interrupted command never leaves a
half-written file, and an existing file is replaced only by a complete one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: str | os.PathLike, data: bytes, *, fsync: bool = False) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename.

    Parameters
    ----------
    path : str or os.PathLike
        Target file; replaced atomically if it exists.
    data : bytes
        The whole content.
    fsync : bool, default=False
        Flush the data to disk before the rename (model files), so a crash of
        the machine cannot leave an empty file under the target name.

    Raises
    ------
    OSError
        If the folder is missing or not writable, or the write or rename fails;
        the temporary file is removed and the target is left as it was.

    Notes
    -----
    The new file gets the usual permissions (``0o666`` less the umask), not
    the ``0o600`` of :func:`tempfile.mkstemp`.
    """
    target = Path(os.fspath(path))
    directory = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
