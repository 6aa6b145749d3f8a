"""The thread helper (paper_lib.pipeline.threads), the runner's wait policy, and the benchmarks' command lines."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import torch
from threadpoolctl import threadpool_info

from paper_lib.pipeline import threads

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def restore_threads():
    """Put torch's and the BLAS pools' thread counts and the environment back after the test."""
    keys = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_WAIT_POLICY")
    env = {k: os.environ.get(k) for k in keys}
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)
    if threads._LIMITER is not None:
        threads._LIMITER.restore_original_limits()
    for key, value in env.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def test_set_threads_sets_torch_blas_openmp_and_environment(restore_threads):
    assert threads.set_threads(1) == 1
    assert torch.get_num_threads() == 1
    assert all(p["num_threads"] == 1 for p in threadpool_info())  # numpy/scipy BLAS and OpenMP pools
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    assert os.environ["OMP_NUM_THREADS"] == os.environ["OPENBLAS_NUM_THREADS"] == "1"
    assert threads.thread_report()["torch"] == 1


def test_default_threads(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert threads.default_threads("smoke") == 1
    assert threads.default_threads("cpu") == 2  # the profile's, whatever the machine's cores
    monkeypatch.setenv("OMP_NUM_THREADS", "3")  # torchrun's choice is kept
    assert threads.default_threads("cpu") == 3


@pytest.mark.parametrize("bad", [0, -2, 1.5, "2", True])
def test_bad_thread_count_is_one_line(bad):
    with pytest.raises(ValueError, match=r"^n_threads must be None \(automatic\) or an integer >= 1, got "):
        threads.set_threads(bad)


def test_tune_allocator_on_linux():
    assert threads.tune_allocator() is sys.platform.startswith("linux")


def test_runner_gives_the_kernel_a_passive_wait_policy():
    import inspect

    from paper_lib.pipeline import runner

    assert threads.WAIT_POLICY_ENV == {"OMP_WAIT_POLICY": "PASSIVE"}
    assert "WAIT_POLICY_ENV" in inspect.getsource(runner.run_notebook)


def test_n_threads_means_what_it_says_in_every_notebook():
    """A notebook whose own process computes takes ``n_threads`` and sets it once; one whose every
    job runs on one thread by design (05, 06, 07) has no such parameter, says so in its parameters
    cell, and runs on one thread itself; none sets torch's threads behind the helper's back."""
    single = ("05_associative_recall", "06_boundary_map", "07_update_recall")
    for nb in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py")):
        text = nb.read_text()
        assert "torch.set_num_threads" not in text, nb.name
        if nb.stem in single:
            assert "n_threads" not in text.replace("No n_threads:", ""), nb.name
            assert "# No n_threads: every job runs on one thread by design" in text, nb.name
            assert text.count("set_threads(JOB_THREADS)") == 1, nb.name
        else:
            assert "\nn_threads = None" in text and text.count("set_threads(n_threads, profile)") == 1, nb.name


def _bench(name: str):
    """Import ``benchmarks/<name>.py`` as a module (the benchmarks are scripts, not a package)."""
    import importlib

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


@pytest.mark.parametrize("script, arg", [("bench_ema", "--B"), ("bench_throughput", "--rounds"),
                                         ("bench_contention", "--repeats"), ("gpu_check", "--steps")])
def test_bad_benchmark_argument_is_one_line(script, arg, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", [f"{script}.py"])
    with pytest.raises(SystemExit) as exc:
        _bench(script).main([arg, "0"])
    assert exc.value.code == 2
    assert capsys.readouterr().err == f"{script}.py: error: argument {arg}: must be an integer >= 1, got 0\n"


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU skip path")
def test_gpu_check_skips_with_one_line_on_a_cpu(capsys):
    assert _bench("gpu_check").main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("gpu-check: skipped, no CUDA device") and out.count("\n") == 1


def test_gpu_check_ema_comparison_passes_on_the_cpu_and_names_its_rows():
    rows = _bench("gpu_check").check_ema(torch.device("cpu"), B=2, T=70, D=8)
    assert [(r["item"], r["metric"]) for r in rows] == [
        (f"causal={c}", m) for c in (False, True)
        for m in ("autocast_diff_traces", "max_abs_diff_traces", "max_abs_diff_grad_x")]
    assert all(r["passed"] and r["value"] < 1e-5 for r in rows)


def test_mfu_counts_spens_ffn_dense_and_its_active_share_over_the_kept_units():
    import pandas as pd

    from paper_lib.models.sparse_ffn import SparseFFN

    assert SparseFFN.sparse_gemms                                       # the default path is lever 4's
    df = pd.DataFrame({"d_model": [128, 128], "seq_len": [256, 256], "model": ["spen", "transformer"],
                       "tokens_per_s": [1e4, 1e4]})
    got = _bench("bench_throughput").add_mfu(df, 8192, peak=1e11)
    assert got.flops_per_token.iloc[0] == 6_856_704                    # the dense count, every GEMM dense
    assert got.active_flops_per_token.iloc[0] == 6_856_704 - 4 * 10 * 128 * (512 - 31)   # 4 blocks, k = 31
    assert got.active_flops_per_token.iloc[1] == got.flops_per_token.iloc[1]
    assert got.mfu.iloc[0] == round(6_856_704 * 1e4 / 1e11, 3) and SparseFFN.sparse_gemms


def test_gpu_check_counts_flops_and_knows_the_h200s_peak(monkeypatch):
    from paper_lib.models.sparse_ffn import SparseFFN

    monkeypatch.setattr(SparseFFN, "sparse_gemms", False)              # the model's definition (CUDA's path)
    bench = _bench("gpu_check")
    flops = _bench("_flops")
    assert flops.gpu_bf16_peak("NVIDIA H200") == 989e12 and flops.gpu_bf16_peak("NVIDIA H100 PCIe") == 756e12
    assert flops.gpu_bf16_peak("NVIDIA A100-SXM4-80GB") == 312e12 and flops.gpu_bf16_peak("Tesla T4") is None
    # SPEN's count at the benchmark sizes (6.86M per token, counted the same way as bench_throughput's)
    from paper_lib.models.factory import build_model
    sizes = _bench("bench_throughput").lm_sizes("spen", 128, 1024)
    res = flops.training_flops_per_token(lambda: build_model("spen", seed=0, **sizes), 256, sizes["vocab_size"])
    assert res["flops_per_token"] == 6_856_704 and res["attention_per_token"] == 0
    sizes = _bench("bench_throughput").lm_sizes("transformer", 128, 1024)
    res = flops.training_flops_per_token(lambda: build_model("transformer", seed=0, **sizes), 1024, sizes["vocab_size"])
    # 6 x matmul parameters (4 x 12 x 128^2 + 2048 x 128) + attention 14 L T d (flash: 2 forward, 5 backward), halved
    assert res["flops_per_token"] == 6 * (4 * 12 * 128**2 + 2048 * 128) + 7 * 4 * 1024 * 128
    assert callable(bench.flops_per_token)


def test_gpu_check_trains_at_the_paper_profiles_sizes():
    sizes = _bench("gpu_check")._paper_sizes("spen", 4096)
    assert (sizes["n_layer"], sizes["d_model"], sizes["vocab_size"], sizes["block_size"]) == (12, 768, 50257, 4096)


def test_throughput_bench_uses_notebook_03s_cpu_sizes():
    from dataclasses import asdict

    from paper_lib.experiments.spen_train import settings_for
    from paper_lib.lm_recipe import model_config

    s = settings_for("cpu")
    for kind in ("spen", "transformer"):
        want = {k: v for k, v in asdict(model_config(kind, s)).items() if k not in ("predictor", "n_head", "alphas")}
        if kind == "transformer":
            want["n_head"] = s.transformer.n_head
        assert _bench("bench_throughput").lm_sizes(kind, s.spen.d_model, 4096) == {**want, "block_size": 4096}
    assert _bench("bench_throughput").lm_sizes("transformer", 256, 1)["n_head"] == 2 * s.transformer.n_head


def test_machine_names_the_processor_torchs_dispatch_level_and_the_libraries():
    from importlib.metadata import version

    import numpy
    from threadpoolctl import threadpool_info

    from paper_lib.pipeline.threads import machine

    m = machine()
    assert set(m) == {"cpu", "cpu_capability", "versions"}
    assert m["cpu"] and isinstance(m["cpu"], str)
    assert m["cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    v = m["versions"]
    assert set(v) == {"torch", "numpy", "scipy", "scikit-learn", "pandas", "blas"}
    assert v["torch"] == torch.__version__ and v["numpy"] == numpy.__version__ and v["pandas"] == version("pandas")
    for lib in threadpool_info():                                       # every BLAS loaded, with its version
        if lib["user_api"] == "blas":
            assert f"{lib['internal_api']} {lib['version']} (" in v["blas"]
    assert v["blas"]
