"""Prepare the next batch while the model runs on this one.

Building a batch (token ids to padded tensors, pinned-memory copy to the GPU) is host work that
would otherwise sit between two forward passes; PyTorch releases the GIL inside its kernels, so a
producer thread overlaps with the model. Order is kept, errors surface in the consumer, and a
consumer that stops early stops the producer.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
_DONE = object()


def prefetch(items: Iterable[T], depth: int = 2) -> Iterator[T]:
    """Yield ``items`` in order while a thread computes up to ``depth`` items ahead."""
    box: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(entry: tuple[bool, object]) -> bool:
        while not stop.is_set():
            try:
                box.put(entry, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((True, item)):
                    return
            put((True, _DONE))
        except BaseException as e:  # noqa: BLE001 - handed to the consumer, raised there
            put((False, e))

    worker = threading.Thread(target=produce, name="rubric-prefetch", daemon=True)
    worker.start()
    try:
        while True:
            ok, item = box.get()
            if not ok:
                raise item  # type: ignore[misc]
            if item is _DONE:
                return
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        worker.join()
