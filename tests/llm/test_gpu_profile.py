"""benchmarks/gpu_profile.py, the GPU's prepared profiling command, run on CPU with a tiny T5."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load_script():
    spec = importlib.util.spec_from_file_location("gpu_profile", ROOT / "benchmarks" / "gpu_profile.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_busy_share_is_the_union_of_intervals_in_the_window():
    gp = load_script()
    assert gp.busy_share([(0, 2), (1, 3), (5, 6)], (0, 10)) == 0.4  # overlap counted once
    assert gp.busy_share([(-5, 1), (9, 20)], (0, 10)) == 0.2  # clipped to the window
    assert gp.busy_share([], (0, 10)) == 0.0
    assert gp.family("ampere_bf16_s16816gemm_bf16_128x64") == "matmul"
    assert gp.family("pytorch_flash::flash_fwd_kernel") == "attention"
    assert gp.family("Memcpy HtoD (Pinned -> Device)") == "copy"
    assert gp.family("void at::native::vectorized_elementwise_kernel<4, ...>") == "elementwise"


def test_profile_on_cpu_writes_phases_and_kernel_families(tmp_path):
    gp = load_script()
    out = tmp_path / "out"
    gp.main(["--shape", "tiny", "--passages", "2", "--out", str(out)])
    summary = json.loads((out / "profile-summary.json").read_text())
    assert summary["prompts"] == 20 and summary["device"] == "cpu" and summary["gpu_idle_share"] is None
    phases = {(p["phase"], p["thread"]): p for p in summary["phases"]}
    assert phases[gp.MODEL, "main"]["calls"] >= 1
    assert phases["build batch + copy to device", "prefetch"]["calls"] >= 1  # timed in its own thread
    decoder = phases[gp.DECODER, "main"]["seconds"]
    assert decoder == phases[gp.MODEL, "main"]["seconds"] - phases[gp.ENCODER, "main"]["seconds"]
    assert summary["families"]["matmul"] > 0
    text = (out / "profile-summary.md").read_text()
    assert "## Host phases" in text and "## Kernel families" in text and "prompts/s" in text
