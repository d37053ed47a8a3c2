"""The one input rule and the one output rule of every file the workbench reads or writes.

Input (:func:`open_binary`, :func:`iter_lines`, :func:`read_text`; every reader uses them):

* ``-`` is standard input, and any readable path works: a pipe, a fifo, ``/dev/stdin``, a shell
  process substitution ``<(zcat run.gz)``. Each file is opened once and read once; gzip is
  recognised by its first two bytes, taken from the opened stream and put back (reopening would
  lose them on a pipe). A pipe or standard input read a second time by one command is an error,
  not an empty file.
* Text is UTF-8; a byte-order mark at the start (Windows editors write one) is dropped, since it
  would otherwise glue itself to the first query id. Errors name ``file:line``.

Output (:func:`open_output`; every writer uses it):

* ``-`` and ``/dev/stdout`` are standard output; a fifo, a device or a socket is written in
  place. A regular file is written to a temporary file next to it and renamed over it when
  complete (the ir_datasets convention), so a crash, a full disk, a user error, Ctrl-C or a
  SIGTERM never leaves a half file under the final name nor a temporary file behind; a link is
  followed and stays a link.
* An output must not be one of the command's inputs (:func:`check_output`): ``-o`` naming an
  input would replace it.
* A failed write is one :class:`UserError` naming the path and the operating system's reason.
* A command with several outputs writes them together (:func:`outputs_together`): each goes to
  its temporary file, and they are renamed into place only once all are complete, so a failure
  leaves none of them written.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import gzip
import io
import os
import signal
import stat
import sys
import tempfile
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Protocol

from rubric.errors import UserError

GZIP_MAGIC = b"\x1f\x8b"
STDIO = "-"
BUFFER = 1 << 20

PathLike = str | Path


def is_stdio(path: PathLike) -> bool:
    """``-``: standard input for a reader, standard output for a writer."""
    return str(path) == STDIO


def wants_gzip(path: PathLike) -> bool:
    """Output files are gzip-compressed exactly when their name ends in ``.gz``."""
    return str(path).endswith(".gz")


# --- reading -----------------------------------------------------------------------------------

# Pipes (and standard input) already read by this process, by identity: a second reader would see
# an empty file or wait forever for a writer, so it gets an error instead.
_consumed: dict[object, str] = {}


def _stdin_identity() -> object:
    try:
        st = os.fstat(sys.stdin.fileno())
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return STDIO
    return (st.st_dev, st.st_ino)


def _claim_once(key: object, path: PathLike) -> None:
    if key in _consumed:
        raise UserError(
            f"{path}: already read by this command ({_consumed[key]}); a pipe or standard input "
            "can be read only once, so give the other input as a file"
        )
    _consumed[key] = "standard input" if is_stdio(path) else f"as {path}"


def _read_error(path: PathLike, e: OSError) -> UserError:
    if isinstance(e, FileNotFoundError):
        return UserError(f"{path}: no such file")
    if isinstance(e, IsADirectoryError):
        return UserError(f"{path}: is a directory, expected a file")
    return UserError(f"{path}: cannot read ({e.strerror or e})")


class _Replay(io.RawIOBase):
    """A stream that cannot seek, with the bytes read to detect gzip put back in front."""

    def __init__(self, head: bytes, rest: IO[bytes]):
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        return self._rest.readinto(buffer)


def _open_source(path: PathLike) -> tuple[IO[bytes], bool]:
    """The opened file (or standard input) and whether this function owns (must close) it."""
    if is_stdio(path):
        _claim_once(_stdin_identity(), path)
        return sys.stdin.buffer, False
    try:
        st = os.stat(path)
    except OSError as e:
        raise _read_error(path, e) from None
    if stat.S_ISDIR(st.st_mode):
        raise UserError(f"{path}: is a directory, expected a file")
    identity = (st.st_dev, st.st_ino)
    if not stat.S_ISREG(st.st_mode) and (
        stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode) or identity == _stdin_identity()
    ):  # a regular file can be opened again; a pipe (or the terminal) cannot be read again
        _claim_once(identity, path)
    try:
        return open(path, "rb", buffering=BUFFER), True
    except OSError as e:
        raise _read_error(path, e) from None


@contextlib.contextmanager
def open_binary(path: PathLike, name: PathLike | None = None) -> Iterator[IO[bytes]]:
    """The decompressed bytes of a file, standard input (``-``) or a pipe; errors name the file
    (or ``name``: what the user called a file this command copied, see :func:`rereadable`)."""
    source, owned = _open_source(path)
    path = path if name is None else name
    try:
        if source.seekable():
            start = source.tell()
            head = source.read(2)
            source.seek(start)
            stream: IO[bytes] = source
        else:
            head = source.read(2)
            stream = io.BufferedReader(_Replay(head, source), BUFFER)
        if head == GZIP_MAGIC:
            stream = gzip.GzipFile(fileobj=stream, mode="rb")  # type: ignore[assignment]
        yield stream
    except (EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise UserError(f"{path}: damaged gzip file ({e or 'truncated'})") from None
    except UserError:
        raise
    except OSError as e:
        if isinstance(e, BrokenPipeError):
            raise
        raise UserError(f"{path}: cannot read ({e.strerror or e})") from None
    finally:
        if owned:
            source.close()


def _utf8_error(path: PathLike, data: bytes, e: UnicodeDecodeError, line_no: int | None = None) -> UserError:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return UserError(f"{path}: UTF-16 text; convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)")
    if line_no is None:
        line_no = data.count(b"\n", 0, e.start) + 1
        e_start = e.start - (data.rfind(b"\n", 0, e.start) + 1)
    else:
        e_start = e.start
    return UserError(f"{path}:{line_no}: not UTF-8 text ({e.reason} at byte {e_start} of the line)")


def decode_text(path: PathLike, data: bytes) -> str:
    """UTF-8 text of ``data`` without a leading byte-order mark; an error names file:line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _utf8_error(path, data, e) from None
    return text[1:] if text.startswith("\ufeff") else text


def read_text(path: PathLike) -> str:
    """The whole decompressed text of a file (fast path for column files like runs)."""
    with open_binary(path) as f:
        data = f.read()
    return decode_text(path, data)


def text_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line_number, line)`` of a text split at ``\\n`` only, as trec_eval splits (``str.splitlines``
    would also split at form feeds, ``\\x1c``, U+2028 and others found inside texts)."""
    for line_no, line in enumerate(text.split("\n"), start=1):
        yield line_no, line[:-1] if line.endswith("\r") else line


def iter_lines(path: PathLike, name: PathLike | None = None) -> Iterator[tuple[int, str]]:
    """``(line_number, line)`` for every line, without its line end (``\\n`` or ``\\r\\n``).

    Lines are decoded one by one so that a byte that is not UTF-8 is reported at its line;
    messages name ``name`` when given (the user's name of a copied input).
    """
    with open_binary(path, name) as f:
        path = path if name is None else name
        for line_no, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise _utf8_error(path, raw, e, line_no) from None
            if line_no == 1 and line.startswith("\ufeff"):
                line = line[1:]
            yield line_no, line.rstrip("\n").removesuffix("\r")


@contextlib.contextmanager
def open_text(path: PathLike) -> Iterator[IO[str]]:
    """A text stream (UTF-8, byte-order mark dropped) of a plain or gzip file, ``-`` or a pipe."""
    with open_binary(path) as f:
        text = io.TextIOWrapper(f, encoding="utf-8-sig")
        try:
            yield text
        except UnicodeDecodeError as e:
            raise UserError(f"{path}: not UTF-8 text ({e.reason})") from None
        finally:
            text.detach()


@contextlib.contextmanager
def rereadable(path: PathLike) -> Iterator[PathLike]:
    """A name under which this command can read ``path`` more than once.

    A regular file is its own name. Standard input, a pipe or a device can be read once only, so
    its bytes (compressed or not, as they come) are copied to a temporary file, deleted when the
    block ends; messages about the copy should still name ``path`` (``iter_lines(copy, path)``).
    Readers that need two passes (a survey of the whole file, then the work) use this.
    """
    if not is_stdio(path):
        try:
            regular = stat.S_ISREG(os.stat(path).st_mode)
        except OSError as e:
            raise _read_error(path, e) from None
        if regular:
            yield path
            return
    with tempfile.TemporaryDirectory(prefix="rubric-") as folder:
        copy = os.path.join(folder, "input")
        source, owned = _open_source(path)
        try:
            with open(copy, "wb") as out:
                while chunk := source.read(BUFFER):
                    out.write(chunk)
        except OSError as e:
            raise UserError(f"{path}: cannot copy to a temporary file ({e.strerror or e})") from None
        finally:
            if owned:
                source.close()
        yield copy


# --- which file is which -----------------------------------------------------------------------


def _identity(path: PathLike) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def is_input(output: PathLike, source: PathLike) -> bool:
    """Would writing ``output`` replace the input ``source``, or change what it reads? True for the
    same regular file after following links, and for any file inside an input directory, existing
    or new: a directory is read as a set of files (``--run runs/``), so a report written into it
    would be read by the next command as one more run. ``-`` and streams replace nothing."""
    if is_stdio(output) or is_stdio(source):
        return False
    try:
        if os.path.isdir(source):
            folder = os.path.realpath(source).rstrip(os.sep) + os.sep
            return os.path.realpath(output).startswith(folder)
    except (OSError, ValueError):
        return False
    target = _identity(output)
    return target is not None and _identity(source) == target


def same_output(a: PathLike, b: PathLike) -> bool:
    """Do two outputs name one target (``-`` twice, or one file by two names)?"""
    if is_stdio(a) or is_stdio(b):
        return is_stdio(a) and is_stdio(b)
    same = _identity(a)
    return os.path.realpath(a) == os.path.realpath(b) or (same is not None and same == _identity(b))


Labelled = tuple[str, PathLike]


def check_output(
    output: PathLike, inputs: Iterable[PathLike | Labelled] = (), name: str | None = None
) -> None:
    """Refuse an output that is one of the inputs: it would be replaced before it is read again.

    ``inputs`` are paths or ``(label, path)`` pairs, the label being the option that named the
    path; ``name`` is the output's option. Both only make the message clearer.
    """
    for item in inputs:
        label, source = item if isinstance(item, tuple) else ("", item)
        if is_input(output, source):
            where = f"{name} {output}" if name else str(output)
            what = f"{label} {source}".strip()
            raise UserError(f"{where}: is also an input of this command ({what}); write to another file")


@contextlib.contextmanager
def guarded_outputs(
    outputs: Sequence[Labelled], inputs: Iterable[PathLike | Labelled] = ()
) -> Iterator[None]:
    """The output rule for one job, checked before it does any work: an output that is one of
    its ``inputs`` (it would be replaced before it is read again), that is another of its
    ``outputs``, or that cannot be written is refused; with several outputs the block writes
    them together (:func:`outputs_together`: all or none).

    Labels are how the caller names its inputs and outputs (a command: its options; a library
    function: its parameters). Every command goes through it (:func:`rubric.cli.common.guard_outputs`)
    and so do the library's writers that know their inputs (``rubric.grade``).
    """
    sources = list(inputs)
    for i, (label, path) in enumerate(outputs):
        check_output(path, sources, name=label)
        for other_label, other in outputs[:i]:
            if same_output(path, other):
                raise UserError(f"{label} {path}: is also the output of {other_label}")
    for _, path in outputs:
        check_writable(path)
    if len(outputs) < 2:
        yield
        return
    with outputs_together():
        yield


# --- writing -----------------------------------------------------------------------------------


def _write_error(path: PathLike, e: OSError) -> UserError:
    if isinstance(e, IsADirectoryError):
        return UserError(f"{path}: is a directory, expected a file name")
    return UserError(f"{path}: cannot write ({e.strerror or e})")


class _Sink(io.RawIOBase):
    """Where an output's bytes go; an OS error becomes one :class:`UserError` naming the output.

    After a failure the sink swallows what the layers above still flush while they are closed.
    """

    def __init__(self, target: IO[bytes], name: PathLike, *, fsync: bool):
        self._target = target
        self._fsync = fsync
        self.name = name
        self.discard = False

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:  # type: ignore[override]
        if self.discard:
            return len(data)
        try:
            n = self._target.write(data)
        except BrokenPipeError:  # `rubric ... -o - | head`: the CLI exits quietly
            raise
        except OSError as e:
            raise _write_error(self.name, e) from None
        return len(data) if n is None else n

    def sync(self) -> None:
        """Everything on its way to the disk (fsync for files we own)."""
        try:
            self._target.flush()
            if self._fsync:
                os.fsync(self._target.fileno())
        except BrokenPipeError:
            raise
        except OSError as e:
            raise _write_error(self.name, e) from None


class _TextOutput:
    """The layers over a sink: text (UTF-8, ``\\n`` line ends), optionally gzip, a large buffer."""

    def __init__(self, sink: _Sink, *, compress: bool):
        self.sink = sink
        self.buffered = io.BufferedWriter(sink, BUFFER)
        # mtime=0 makes the bytes depend on the content only (reproducible outputs).
        self.gz = (
            gzip.GzipFile(filename="", mode="wb", fileobj=self.buffered, mtime=0, compresslevel=6)
            if compress
            else None
        )
        self.text = io.TextIOWrapper(self.gz or self.buffered, encoding="utf-8", newline="\n")  # type: ignore[arg-type]

    def finish(self) -> None:
        """Flush every layer down to the sink (gzip trailer included); errors name the output."""
        self.text.flush()
        self.text.detach()
        if self.gz is not None:
            self.gz.close()  # writes the trailer; a GzipFile never closes the file it was given
        self.buffered.flush()
        self.buffered.detach()
        self.sink.sync()

    def abandon(self) -> None:
        """Drop the layers after a failure without writing anything more."""
        self.sink.discard = True
        with contextlib.suppress(Exception):
            self.text.close()


@contextlib.contextmanager
def _text_output(sink: _Sink, *, compress: bool) -> Iterator[IO[str]]:
    out = _TextOutput(sink, compress=compress)
    try:
        yield out.text
        out.finish()
    except BaseException:
        out.abandon()
        raise


@contextlib.contextmanager
def _binary_output(sink: _Sink, *, compress: bool) -> Iterator[IO[bytes]]:
    """Bytes (a figure) straight to the sink through a buffer; ``compress`` is never asked for."""
    buffered = io.BufferedWriter(sink, BUFFER)
    try:
        yield buffered
        buffered.flush()
        buffered.detach()
        sink.sync()
    except BaseException:
        sink.discard = True
        with contextlib.suppress(Exception):
            buffered.close()
        raise


class Layers(Protocol):
    """What lies between a sink and the writer's caller: text (and gzip) or plain bytes."""

    def __call__(self, sink: _Sink, *, compress: bool) -> contextlib.AbstractContextManager[IO]: ...


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold SIGINT/SIGTERM for a few statements (creating or renaming the temporary file), so
    that the handler never runs between an OS call and the bookkeeping that cleans up after it."""
    sigs = {signal.SIGINT, signal.SIGTERM}
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    except (AttributeError, OSError, ValueError):  # no pthread_sigmask (Windows)
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


_STD_STREAMS = {
    **dict.fromkeys((STDIO, "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"), "stdout"),
    **dict.fromkeys(("/dev/stderr", "/dev/fd/2", "/proc/self/fd/2"), "stderr"),
}


def writes_in_place(path: PathLike) -> bool:
    """Outputs written directly, never replaced: ``-`` and the standard streams, fifos, devices,
    sockets, and files reached through an open descriptor (``/dev/fd/3`` after the shell's
    ``3>file``). They leave no file to resume from or to put a ``.partial`` file next to."""
    if str(path) in _STD_STREAMS:
        return True
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    except OSError as e:
        raise _write_error(path, e) from None
    if stat.S_ISDIR(st.st_mode):
        raise UserError(f"{path}: is a directory, expected a file name")
    if not stat.S_ISREG(st.st_mode):
        return True
    return str(path).startswith(("/dev/fd/", "/proc/"))


@contextlib.contextmanager
def _write_in_place(path: PathLike, *, compress: bool, layers: Layers = _text_output) -> Iterator[IO]:
    stream = _STD_STREAMS.get(str(path))
    if stream is not None:
        std = sys.stdout if stream == "stdout" else sys.stderr
        std.flush()  # what was printed before comes first
        name = "standard output" if is_stdio(path) else path
        with layers(_Sink(std.buffer, name, fsync=False), compress=compress) as f:
            yield f
        return
    try:
        target = open(path, "wb", buffering=0)
    except OSError as e:
        raise _write_error(path, e) from None
    with target, layers(_Sink(target, path, fsync=False), compress=compress) as f:
        yield f


def _make_parents(folder: Path) -> list[Path]:
    """Create the missing folders of an output; returns them (outermost first) for clean-up."""
    missing = []
    for parent in [folder, *folder.parents]:
        if os.path.lexists(parent):
            break
        missing.append(parent)
    missing.reverse()
    for parent in missing:
        try:
            parent.mkdir()
        except FileExistsError:
            pass
        except OSError as e:
            raise UserError(f"{parent}: cannot create folder ({e.strerror or e})") from None
    return missing


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _temp_prefix(final: Path) -> str:
    """Temporary files are named after their target and the writing process, so that one left by
    a killed process (``kill -9`` gives it no chance to clean up) is known and removed later."""
    return f".{final.name}.rubric-{os.getpid()}-"


def _remove_stale(final: Path) -> None:
    """Remove the temporary files of ``final`` left by processes of this machine that are gone."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(final.parent):
            name = entry.name
            head = f".{final.name}.rubric-"
            if not (name.startswith(head) and name.endswith(".tmp")):
                continue
            pid = name[len(head) :].partition("-")[0]
            if pid.isdigit() and not _alive(int(pid)):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process
    return True


class _Together:
    """The outputs of one command written together: complete temporary files waiting for their
    rename until every output is complete (:func:`outputs_together`)."""

    def __init__(self) -> None:
        self.pending: list[tuple[str, Path, PathLike, list[Path]]] = []  # tmp, final, name, folders

    def commit(self) -> None:
        with _signals_deferred():
            while self.pending:
                tmp, final, name, _ = self.pending.pop(0)
                try:
                    os.replace(tmp, final)
                except OSError as e:
                    self.abort()
                    with contextlib.suppress(OSError):
                        os.unlink(tmp)
                    raise _write_error(name, e) from None

    def abort(self) -> None:
        with _signals_deferred():
            for tmp, _, _, created in self.pending:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                for folder in reversed(created):
                    with contextlib.suppress(OSError):
                        folder.rmdir()
            self.pending.clear()


_together: contextvars.ContextVar[_Together | None] = contextvars.ContextVar("rubric_outputs", default=None)


@contextlib.contextmanager
def outputs_together() -> Iterator[None]:
    """Within the block, every regular file written by the output rule waits, complete, in its
    temporary file; all are renamed into place when the block ends without an error, none when it
    raises (an error, Ctrl-C) or the process dies. For commands with several outputs: a failure
    of the last must not leave the first written. An exit with a status (``SystemExit``: a
    command that reports failures after writing its outputs) still writes them."""
    batch = _Together()
    token = _together.set(batch)
    try:
        yield
    except SystemExit:
        _together.reset(token)
        batch.commit()
        raise
    except BaseException:
        _together.reset(token)
        batch.abort()
        raise
    _together.reset(token)
    batch.commit()


@contextlib.contextmanager
def _write_replacing(path: PathLike, *, compress: bool, layers: Layers = _text_output) -> Iterator[IO]:
    """A regular file: a temporary file in the same folder, renamed over the target when complete
    (or when the :func:`outputs_together` block it belongs to ends)."""
    final = Path(os.path.realpath(path))  # a link stays a link: its target is replaced
    try:
        mode = final.stat().st_mode & 0o7777  # the replaced file keeps its permissions
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    except OSError as e:
        raise _write_error(path, e) from None
    created = _make_parents(final.parent)
    tmp: str | None = None
    try:
        with _signals_deferred():
            try:
                _remove_stale(final)
                fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(final), suffix=".tmp", dir=final.parent)
            except OSError as e:
                raise _write_error(path, e) from None
        with io.FileIO(fd, "wb") as raw, layers(_Sink(raw, path, fsync=True), compress=compress) as f:
            yield f
        with _signals_deferred():
            try:
                os.chmod(tmp, mode)  # mkstemp creates 0600
                batch = _together.get()
                if batch is None:
                    os.replace(tmp, final)
                else:
                    batch.pending.append((tmp, final, path, created))
            except OSError as e:
                raise _write_error(path, e) from None
            tmp = None
            created = []
    finally:
        with _signals_deferred():
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            for folder in reversed(created):
                with contextlib.suppress(OSError):
                    folder.rmdir()


@contextlib.contextmanager
def open_output(
    path: PathLike,
    *,
    inputs: Iterable[PathLike | Labelled] = (),
    compress: bool | None = None,
) -> Iterator[IO[str]]:
    """Write text to ``path`` by the output rule (see the module docstring).

    ``-`` is standard output; a regular file is replaced all at once or not at all; ``compress``
    defaults to "the name ends in .gz"; ``inputs`` are refused as targets (:func:`check_output`).
    """
    if not str(path):
        raise UserError("'': not a file name")
    check_output(path, inputs)
    compress = wants_gzip(path) if compress is None else compress
    writer = _write_in_place if writes_in_place(path) else _write_replacing
    with writer(path, compress=compress) as f:
        yield f


def write_output_bytes(path: PathLike, data: bytes) -> None:
    """Write bytes (a figure) to ``path`` by the output rule, as :func:`open_output` writes text."""
    if not str(path):
        raise UserError("'': not a file name")
    writer = _write_in_place if writes_in_place(path) else _write_replacing
    with writer(path, compress=False, layers=_binary_output) as f:
        f.write(data)


def check_writable(path: PathLike) -> None:
    """Refuse, before any work, an output that cannot be written: a folder, or a file in a folder
    this process may not write (the error a write would end with, said before the work)."""
    if not str(path):
        raise UserError("'': not a file name")
    if writes_in_place(path):  # also refuses a folder
        return
    final = Path(os.path.realpath(path))
    folder = final.parent
    while not os.path.lexists(folder) and folder != folder.parent:
        folder = folder.parent  # missing folders are created in the first existing one
    if not os.path.isdir(folder):
        raise UserError(f"{path}: cannot write ({folder} is not a folder)")
    if not os.access(folder, os.W_OK | os.X_OK):
        try:
            read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
        except OSError:
            read_only = False
        reason = os.strerror(errno.EROFS if read_only else errno.EACCES)
        raise UserError(f"{path}: cannot write ({reason})")


# The former name, kept for callers written before the output rule covered streams.
atomic_write = open_output


def write_output(path: PathLike | None, text: str, *, inputs: Iterable[PathLike] = ()) -> None:
    """Write a whole text (a report) to ``path`` by the output rule; ``None`` (no ``-o``) is
    standard output, as ``-`` is. The one way every report reaches a file or the terminal."""
    with open_output(STDIO if path is None else path, inputs=inputs) as f:
        f.write(text)


def input_identity(path: PathLike) -> list[object] | None:
    """What identifies an input between two runs of a command (for resuming): its resolved path,
    size and modification time; ``None`` for ``-`` and pipes, whose content cannot be known
    again without reading it."""
    if is_stdio(path):
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return [os.path.realpath(path), st.st_size, st.st_mtime_ns]


def readable_again(path: PathLike, folder: PathLike) -> Path:
    """``path`` itself where it can be read more than once (a regular file); else its content,
    read once, in a file under ``folder`` named after it (``-`` -> ``stdin``). For commands that
    read an input several times (grading checks its inputs, then grades; workers each read it)."""
    if input_identity(path) is not None:
        return Path(path)
    name = "stdin" if is_stdio(path) else (Path(path).name or "input")
    copy = Path(folder) / name
    with open_binary(path) as source, open(copy, "wb") as target:
        while chunk := source.read(BUFFER):
            target.write(chunk)
    return copy
