"""Throughput of the OpenAI-compatible backend against a local server with 50 ms latency:
sequential requests (concurrency 1, the baseline) vs --concurrency 8 and 32, and a re-run from
the sqlite cache. Prints prompts/s and ratios against the baseline measured in this process.

    OMP_NUM_THREADS=1 python benchmarks/openai_concurrency.py [N_PROMPTS]
"""

from __future__ import annotations

import runpy
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from rubric.llm.base import Request  # noqa: E402
from rubric.llm.cache import CachedBackend, ResponseCache  # noqa: E402
from rubric.llm.openai_chat import OpenAIChat  # noqa: E402

server = runpy.run_path(str(ROOT / "tests" / "helpers" / "openai_server.py"))
LATENCY = 0.05


def slow_answer(user: str, system: str | None) -> str:
    time.sleep(LATENCY)
    return server["scripted_answer"](user, system)


def timed(backend: OpenAIChat, prompts: list[str], cache: ResponseCache | None = None) -> float:
    start = time.perf_counter()
    CachedBackend(backend, cache).generate([Request(p) for p in prompts])
    return time.perf_counter() - start


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 160
    with server["serve"](answer=slow_answer) as srv, tempfile.TemporaryDirectory() as tmp:
        base = None
        for concurrency in (1, 8, 32):
            prompts = [f"Break the query 'c{concurrency} q{i}' into questions. Generate 3" for i in range(n)]
            b = OpenAIChat(model="bench", base_url=srv.url, concurrency=concurrency, progress=False)
            seconds = timed(b, prompts)
            base = base or seconds
            print(f"concurrency {concurrency:>2}: {n / seconds:7.1f} prompts/s  x{base / seconds:5.1f}")
        cache = ResponseCache(Path(tmp) / "c.sqlite")
        prompts = [f"Break the query 'cached q{i}' into questions. Generate 3" for i in range(n)]
        timed(OpenAIChat(model="bench", base_url=srv.url, concurrency=32, progress=False), prompts, cache)
        seconds = timed(OpenAIChat(model="bench", base_url=srv.url, progress=False), prompts, cache)
        print(f"from cache    : {n / seconds:7.1f} prompts/s  x{base / seconds:5.1f}")


if __name__ == "__main__":
    main()
