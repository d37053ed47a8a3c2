"""Opening and writing files: gzip by content, atomic replacement, clear errors.

Every reader in the project opens through :func:`open_text`, so a ``.gz`` file and a plain one are
interchangeable whatever their names, and a missing or unreadable file is a :class:`UserError`.
Every writer goes through :func:`atomic_write`: the data lands in a temporary file next to the
target and is renamed over it only when complete, so a crash or a user error never leaves a half
file under the final name (the ir_datasets convention).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from rubric.errors import UserError

GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path: str | Path) -> bool:
    """True when the file starts with the gzip magic bytes (its name does not matter)."""
    with open(path, "rb") as f:
        return f.read(2) == GZIP_MAGIC


def wants_gzip(path: str | Path) -> bool:
    """Output files are gzip-compressed exactly when their name ends in ``.gz``."""
    return str(path).endswith(".gz")


@contextlib.contextmanager
def open_text(path: str | Path) -> Iterator[IO[str]]:
    """Open a plain or gzip text file (UTF-8) for reading; errors name the file."""
    path = Path(path)
    if not path.exists():
        raise UserError(f"{path}: no such file")
    if path.is_dir():
        raise UserError(f"{path}: is a directory, expected a file")
    try:
        if is_gzip(path):
            with gzip.open(path, "rt", encoding="utf-8") as f:
                yield f
        else:
            with open(path, encoding="utf-8") as f:
                yield f
    except (EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise UserError(f"{path}: damaged gzip file ({e or 'truncated'})") from None
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def read_text(path: str | Path) -> str:
    """The whole decompressed text of a file (fast path for column files like runs)."""
    with open_text(path) as f:
        return f.read()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_write(path: str | Path, *, compress: bool | None = None) -> Iterator[IO[str]]:
    """Write text to ``path`` all at once or not at all.

    ``compress`` defaults to "the name ends in .gz". The temporary file lives in the target's
    directory so the final :func:`os.replace` is atomic on the same file system.
    """
    path = Path(path)
    compress = wants_gzip(path) if compress is None else compress
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    raw = os.fdopen(fd, "wb")
    try:
        if compress:
            # mtime=0 makes the bytes depend on the content only (reproducible outputs).
            gz = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6)
            text = io.TextIOWrapper(gz, encoding="utf-8", newline="\n")
        else:
            text = io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
        yield text
        text.flush()
        inner = text.detach()
        if compress:
            inner.close()  # writes the gzip trailer; a GzipFile never closes the file it was given
        raw.flush()
        os.fsync(raw.fileno())
        raw.close()
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; give the file normal permissions
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(Exception):
            raw.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
