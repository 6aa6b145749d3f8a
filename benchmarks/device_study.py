"""Experiment 2 on a lent GPU: notebooks 03 and 04 at the ``gpu`` profile, offline, in minutes.

Three steps, two machines (our design: the paper is silent):

1. ``prepare`` (the CPU machine, a clean git checkout; ``make device-prepare``): tokenizes the
   offline corpus once for the profile's data settings into ``build/gpu/tokens.npz``
   (:mod:`paper_lib.data.token_file`, at most 60 MiB) and writes ``build/gpu/SOURCES.json``: the
   sources' commit and the sha256 of every file notebooks 03 and 04 read
   (:func:`paper_lib.pipeline.deps.inputs`). ``build/gpu`` then travels with the tree.
2. ``run`` (the GPU machine: no network, no ``.git``, no ``pip install``; ``make device-study``):
   checks the sources against ``SOURCES.json`` (so no git is needed there), runs
   ``benchmarks/gpu_check.py`` (EMA kernels, tokens/s, MFU, memory, host syncs), then notebooks 03
   and 04, each executed as the plain Python its jupytext source is (no papermill, Jupyter or IPython
   needed: ``display`` prints tables and text into the step's log) with ``profile`` set to
   the profile, its outputs stamped with the recorded commit. A time guard (``--budget-s``, default
   840 s = 14 minutes) gives each step what is left and stops a step that outruns it cleanly: its
   half-written outputs are removed, what finished before is kept. Everything lands under
   ``build/gpu/``; ``summary.json`` and one screen of text say what ran, how long, and the
   headline numbers. ``--pack FILE`` also writes it all as one ``.tar.gz`` (what a device's
   ``$OUT`` brings back). Exit status: 0 every step finished, 1 a step failed or was stopped, 2 a
   one-line error before anything ran (sources differ from the record, no ``SOURCES.json``).
3. ``publish DIR_OR_TAR`` (the CPU machine again; ``make device-publish RUN=...``): checks the run
   was made from the current, clean sources' commit and that every file is the one its stamp records
   (sha256, :func:`unverified`), then copies its notebooks' outputs to
   ``figures/gpu/<notebook>/`` (and ``gpu_check.csv`` to ``figures/gpu/bench/``) and writes
   ``figures/gpu/REPORT.md`` (``python -m paper_lib.claims report --profile gpu``). A run from
   another commit, an edited, missing or unrecorded file, or an archive that cannot be read is refused
   in one line (exit status 2), and nothing is published.

``--profile smoke --device cpu`` runs the same three steps at a tiny size on a CPU (the tests).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from paper_lib.pipeline import deps  # noqa: E402  (standard library only)
from paper_lib.pipeline.atomic import replace_dir, write_json  # noqa: E402

STUDY = ("03_spen_train", "04_predictor_ablation")
"""The notebooks of the study, in the order they run."""
GPU_CHECK_S = 240
"""At most this many seconds of the budget go to ``gpu_check.py``."""
RESERVE_S = 15
"""Seconds kept back from every step for the summary and the archive."""
NEEDS = ("numpy", "pandas", "scipy", "sklearn", "torch", "matplotlib", "seaborn", "tokenizers", "safetensors",
         "threadpoolctl", "tqdm", "tabulate")
"""The packages notebooks 03 and 04 import from the token file on (no corpus loaders, no Jupyter)."""
HEADLINE = {  # notebook -> the metrics printed in the summary (nats, perplexity, tokens/s)
    "03_spen_train": ("spen_val_ppl", "transformer_val_ppl", "ppl_ratio", "bigram_val_loss", "spen_val_loss",
                      "transformer_val_loss", "transformer_induction_score", "throughput_ratio"),
    "04_predictor_ablation": ("ppl_linear", "ppl_linear_attention", "ppl_softmax_attention", "ppl_transformer",
                              "bounded_spread", "induction_transformer"),
}


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _rel(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


# --------------------------------------------------------------------------- prepare (CPU side)

def data_settings(profile: str):
    """Notebook 03's data settings at ``profile``.

    Raises:
        ValueError: notebook 04's data settings differ (one token file serves both).
    """
    from paper_lib.experiments import predictor_ablation, spen_train

    s03, s04 = spen_train.settings_for(profile).data, predictor_ablation.settings_for(profile).data
    if s03 != s04:
        raise ValueError(f"notebooks 03 and 04 read different data at profile {profile} ({s03} vs {s04}); "
                         "one token file cannot serve both")
    return s03


def prepare(out: Path, profile: str, allow_dirty: bool = False) -> Path:
    """Write ``out/tokens.npz`` and ``out/SOURCES.json`` (see the module docstring); returns the record's path.

    Raises:
        ValueError: uncommitted sources or no commit git can give (unless ``allow_dirty``: then
            the record says so and ``publish`` refuses the run).
    """
    from paper_lib.data.lm_data import prepare_data
    from paper_lib.data.token_file import TOKEN_FILE_ENV, save_token_file
    from paper_lib.pipeline.provenance import check_clean, source_commit

    commit, reason = source_commit(ROOT)
    if not allow_dirty:
        check_clean(commit, "a device study", reason, root=ROOT)
    os.environ.pop(TOKEN_FILE_ENV, None)
    settings = data_settings(profile)
    tokens = save_token_file(prepare_data(settings), settings, out / "tokens.npz")
    record = {"git_commit": commit, "profile": profile, "notebooks": list(STUDY),
              "inputs": {nb: deps.inputs(ROOT / "notebooks" / f"{nb}.py", ROOT) for nb in STUDY},
              "tools": {p: _sha256(ROOT / p) for p in ("benchmarks/device_study.py", "benchmarks/gpu_check.py")},
              "tokens_sha256": _sha256(tokens)}
    path = write_json(out / "SOURCES.json", record)
    print(f"prepared {_rel(tokens)} ({tokens.stat().st_size / 2**20:.2f} MiB) and {_rel(path)} at commit {commit}")
    return path


# --------------------------------------------------------------------------- run (GPU side)

def check_sources(out: Path) -> dict:
    """``out/SOURCES.json``, after checking every recorded file still has its recorded sha256.

    Raises:
        FileNotFoundError: no record (``prepare`` first). ValueError: a file differs (named).
    """
    path = out / "SOURCES.json"
    if not path.is_file():
        raise FileNotFoundError(f"no {_rel(path)}: run `make device-prepare` on the CPU machine first")
    record = json.loads(path.read_text(encoding="utf-8"))
    want = {**{k: v for nb in record["inputs"].values() for k, v in nb.items()}, **record["tools"]}
    now = {**{k: v for nb in record["notebooks"] for k, v in deps.inputs(ROOT / "notebooks" / f"{nb}.py", ROOT).items()},
           **{p: _sha256(ROOT / p) for p in record["tools"]}}
    changed = sorted(k for k in set(want) | set(now) if want.get(k) != now.get(k))
    if changed:
        raise ValueError(f"{len(changed)} source file(s) differ from {_rel(path)} (commit {record['git_commit']}): "
                         f"{', '.join(changed[:5])}; run `make device-prepare` again from the sources to run")
    if _sha256(out / "tokens.npz") != record["tokens_sha256"]:
        raise ValueError(f"{_rel(out / 'tokens.npz')} differs from the one prepared at commit {record['git_commit']}")
    return record


PREAMBLE = '''# The device study runs this notebook as plain Python: display() prints tables and text.
import sys as _sys
import types as _types

try:
    import IPython as _ipython  # noqa: F401  (the real one, when installed, for the libraries that ask for it)
except ImportError:
    _ipython = _types.ModuleType("IPython")
    _ipython.version_info, _ipython.get_ipython = (8, 24, 0), lambda: None
    _sys.modules["IPython"] = _ipython


class Markdown:
    def __init__(self, data=""):
        self.data = data

    def __str__(self):
        return self.data


def display(*objs, **_kwargs):
    for obj in objs:
        print(obj.to_string() if hasattr(obj, "to_string") else str(obj), flush=True)


_display = _types.ModuleType("IPython.display")
_display.display, _display.Markdown = display, Markdown
_sys.modules["IPython.display"] = _ipython.display = _display
'''


def notebook_script(source: Path, profile: str, overrides: dict) -> str:
    """The jupytext ``py:percent`` ``source`` as one Python script: :data:`PREAMBLE` (``display``
    as a printout), then the source with ``profile`` and ``overrides`` set right after its
    parameters cell (what papermill injects).

    Raises:
        ValueError: the source has no ``# %% tags=["parameters"]`` cell.
    """
    lines = source.read_text(encoding="utf-8").splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("# %%") and '"parameters"' in line)
    except StopIteration:
        raise ValueError(f"{source} has no parameters cell (# %% tags=[\"parameters\"])") from None
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("# %%")), len(lines))
    injected = [f"profile = {profile!r}", f"overrides = {overrides!r}"]
    return PREAMBLE + "\n".join(lines[:end] + injected + lines[end:]) + "\n"


def _group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs (zombies waiting for their parent count as gone;
    without ``/proc``, whether the group can still be signalled)."""
    proc_dir = Path("/proc")
    if not proc_dir.is_dir():
        try:
            os.killpg(pgid, 0)
            return True
        except ProcessLookupError:
            return False
    for stat in proc_dir.glob("[0-9]*/stat"):
        try:
            fields = stat.read_text(encoding="utf-8", errors="replace").rsplit(")", 1)[1].split()
        except OSError:                 # the process ended while we looked
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":   # fields: state, ppid, pgrp, ...
            return True
    return False


def _stop(proc: subprocess.Popen) -> None:
    """End ``proc`` and every process of its group: SIGTERM, then SIGKILL after 10 s; returns once
    none of them runs (the leader reaped, its children gone or zombies), or 5 s after SIGKILL."""
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if proc.poll() is not None and not _group_alive(proc.pid):
                return
            time.sleep(0.05)


def run_step(cmd: list[str], log: Path, timeout_s: float, env: dict, cwd: Path = ROOT) -> tuple[str, float]:
    """Run ``cmd`` with its output in ``log`` (and echoed), stopped after ``timeout_s`` seconds.
    Returns ``(status, wall seconds)``, status ``"done"``, ``"failed (exit N)"`` or ``"stopped by the time guard"``."""
    t0 = time.monotonic()
    with log.open("w", encoding="utf-8") as f:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True, encoding="utf-8", errors="replace")

        def copy() -> None:  # the output, line by line, to the log and to this terminal
            for line in proc.stdout:
                f.write(line)
                sys.stdout.write(line)
            sys.stdout.flush()

        reader = threading.Thread(target=copy, daemon=True)
        reader.start()
        try:
            proc.wait(max(timeout_s, 0))
        except subprocess.TimeoutExpired:
            _stop(proc)
            reader.join(5)
            return "stopped by the time guard", time.monotonic() - t0
        reader.join()
    return ("done" if proc.returncode == 0 else f"failed (exit {proc.returncode})"), time.monotonic() - t0


def run_notebook(name: str, out: Path, record: dict, timeout_s: float, env: dict, overrides: dict) -> tuple[str, float]:
    """Notebook ``name`` at the recorded profile into ``out/figures/<name>``, within ``timeout_s``."""
    from paper_lib.pipeline.atomic import fresh_dir
    from paper_lib.pipeline.provenance import RUN_ENV

    target = out / "figures" / name
    stage = fresh_dir(target)
    script = out / "scripts" / f"{name}.py"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(notebook_script(ROOT / "notebooks" / f"{name}.py", record["profile"], overrides), encoding="utf-8")
    run = {"notebook": name, "profile": record["profile"], "root": str(out.resolve()), "dir": str(target), "stage": str(stage),
           "git_commit": record["git_commit"], "published": False, "source": f"notebooks/{name}.py"}
    status, wall = run_step([sys.executable, str(script)], out / f"{name}.log", timeout_s,
                            {**env, RUN_ENV: json.dumps(run)}, cwd=ROOT / "notebooks")
    if status == "done":
        replace_dir(stage, target)
    else:
        shutil.rmtree(stage, ignore_errors=True)
    return status, wall


def headline(name: str, out: Path) -> list[str]:
    """Lines ``metric: mean (± ci95)`` of :data:`HEADLINE`'s metrics from ``out/figures/<name>/metrics.json``."""
    path = out / "figures" / name / "metrics.json"
    if not path.is_file():
        return []
    metrics = json.loads(path.read_text(encoding="utf-8"))["metrics"]
    return [f"      {key} {m['mean']:.4g}" + (f" ± {m['ci95']:.2g}" if m.get("ci95") else "") + f" (n={m['n']})"
            for key in HEADLINE.get(name, ()) if (m := metrics.get(key)) and m.get("mean") is not None]


def _now() -> float:
    """The time guard's clock (seconds): what the budget is counted on."""
    return time.monotonic()


def gpu_check_step(out: Path, env: dict, t_end: float) -> dict:
    """Run ``gpu_check.py`` within :data:`GPU_CHECK_S` (and the budget); its CSV lands in ``out``."""
    left = min(GPU_CHECK_S, t_end - _now() - RESERVE_S)
    status, wall = run_step([sys.executable, str(ROOT / "benchmarks" / "gpu_check.py"), "--budget-s",
                             str(max(1, int(left * 0.6)))], out / "gpu_check.log", left, env)
    for csv in (ROOT / "build").glob("*/figures/bench/gpu_check.csv"):
        shutil.copy2(csv, out / "gpu_check.csv")
    return {"step": "gpu_check", "status": status, "wall_s": round(wall, 1)}


def print_summary(summary: dict, out: Path) -> None:
    """The one screen: every step's status and seconds, and the finished notebooks' :data:`HEADLINE` numbers."""
    print(f"\n== device study, profile {summary['profile']}, {summary['device']}, sources {summary['git_commit']}")
    for s in summary["steps"]:
        print(f"  {s['step']:<24} {s['status']:<36} {s['wall_s']:>7.1f} s")
        if s["status"] == "done" and (lines := headline(s["step"], out)):
            print("\n".join(lines))


def write_pack(out: Path, pack: Path) -> None:
    """Everything under ``out`` but the token file, as one ``.tar.gz`` at ``pack`` (top folder ``gpu/``)."""
    with tarfile.open(pack, "w:gz") as tar:
        for p in sorted(out.iterdir()):
            if p.name != "tokens.npz":
                tar.add(p, arcname=f"gpu/{p.name}")
    print(f"  packed -> {pack} ({pack.stat().st_size / 2**20:.1f} MiB)")


def run(out: Path, budget_s: float, device: str, skip_gpu_check: bool = False, overrides: dict | None = None,
        pack: Path | None = None) -> int:
    """The device side (see the module docstring); returns the exit status."""
    t_end = _now() + budget_s
    try:
        record = check_sources(out)
    except (FileNotFoundError, ValueError) as err:
        print(f"device-study: {err}", file=sys.stderr)
        return 2
    import importlib.util

    if missing := [m for m in NEEDS if importlib.util.find_spec(m) is None]:
        print(f"device-study: this Python ({sys.executable}) lacks {', '.join(missing)}; the study needs "
              f"{', '.join(NEEDS)} (carry a folder holding them on PYTHONPATH)", file=sys.stderr)
        return 2
    from paper_lib.data.token_file import TOKEN_FILE_ENV

    env = {**os.environ, TOKEN_FILE_ENV: str((out / "tokens.npz").resolve()), "MPLBACKEND": "Agg",
           "PYTHONUNBUFFERED": "1", "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    import torch

    cuda = device != "cpu" and torch.cuda.is_available()
    if device == "cuda" and not cuda:
        print("device-study: --device cuda, but torch sees no CUDA device", file=sys.stderr)
        return 2
    where = torch.cuda.get_device_name(0) if cuda else "CPU"
    print(f"device study at profile {record['profile']} on {where}, sources {record['git_commit']}, "
          f"budget {budget_s:.0f} s", flush=True)
    steps = [gpu_check_step(out, env, t_end) if cuda and not skip_gpu_check else
             {"step": "gpu_check", "status": "skipped (no CUDA device)" if not cuda else "skipped", "wall_s": 0}]
    for name in record["notebooks"]:
        left = t_end - _now() - RESERVE_S
        if left <= 0:
            steps.append({"step": name, "status": "not started: the time budget is spent", "wall_s": 0})
            continue
        status, wall = run_notebook(name, out, record, left, env, overrides or {})
        steps.append({"step": name, "status": status, "wall_s": round(wall, 1)})
    summary = {"git_commit": record["git_commit"], "profile": record["profile"], "device": where,
               "torch": torch.__version__, "budget_s": budget_s, "steps": steps,
               "files": {p.name: _sha256(p) for p in [out / "gpu_check.csv"] if p.is_file()}}
    write_json(out / "summary.json", summary)
    print_summary(summary, out)
    if pack is not None:
        write_pack(out, pack)
    return 0 if all(s["status"] in ("done",) or s["status"].startswith("skipped") for s in steps) else 1


# --------------------------------------------------------------------------- publish (CPU side)

def unverified(folder: Path, commit: str) -> str | None:
    """Why the outputs of one notebook in a device run, ``folder``, cannot be published (None: they can): every
    file but ``provenance.json`` must be recorded there with its sha256 and stamped ``commit``, ``metrics.json``
    (whence every verdict) among them, and every recorded file must be there. Our design."""
    if not folder.is_dir():
        return f"figures/{folder.name}/ is missing, though summary.json says it finished"
    try:
        stamps = json.loads((folder / "provenance.json").read_text(encoding="utf-8"))
        files = {p.name for p in folder.iterdir() if p.name != "provenance.json"}
    except (OSError, ValueError) as err:
        return f"{folder.name}/provenance.json cannot be read ({type(err).__name__})"
    for name in sorted({"metrics.json"} | set(stamps) | files):
        if name not in files:
            return f"{folder.name}/{name} is missing"
        if not isinstance(stamps.get(name), dict) or not (folder / name).is_file():
            return f"{folder.name}/{name} is not recorded in its provenance.json"
        if _sha256(folder / name) != stamps[name].get("sha256"):
            return f"{folder.name}/{name} differs from the sha256 its provenance.json records (edited or damaged)"
        if stamps[name].get("git_commit") != commit:
            return f"{folder.name}/{name} is stamped {stamps[name].get('git_commit')}, not {commit}"
    return None


def _unpacked(source: Path, tmp: str) -> Path:
    """The run's folder: ``source`` itself, or its ``--pack`` archive unpacked into ``tmp``.

    Raises:
        ValueError: the archive cannot be read (one line: a truncated or half-copied archive?)."""
    if not source.is_file():
        return source
    try:
        with tarfile.open(source) as tar:
            tar.extractall(tmp, filter="data")
    except (tarfile.TarError, EOFError, OSError, zlib.error) as err:
        why = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ValueError(f"cannot read {source} ({why}): a truncated or half-copied archive? copy it from the "
                         "device again") from None
    return Path(tmp) / "gpu"


def _refusal(run: Path, summary: dict, commit: str) -> str | None:
    """Why the device run in folder ``run`` (its ``summary``) cannot be published from ``commit``, or None."""
    if summary["git_commit"] != commit or commit.endswith("-dirty") or commit == "unknown":
        return (f"the run was made from {summary['git_commit']}, the sources here are at {commit}; only a run of "
                "the current, committed sources is published")
    problems = [why for nb in _done(summary) if (why := unverified(run / "figures" / nb, commit))]
    check = run / "gpu_check.csv"
    if (_sha256(check) if check.is_file() else None) != summary.get("files", {}).get(check.name):
        problems.append("gpu_check.csv differs from the sha256 summary.json records, or one of them lacks it")
    return f"{problems[0]}" + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "") if problems else None


def _done(summary: dict) -> list[str]:
    return [s["step"] for s in summary["steps"] if s["step"] in STUDY and s["status"] == "done"]


def publish(source: Path, report: bool = True) -> int:
    """Publish a device run (a folder like ``build/gpu`` or the ``--pack`` archive); returns the exit status.
    Every file is checked first (:func:`unverified`; ``gpu_check.csv`` against ``summary.json``), and a run that
    fails a check is refused in one line with nothing published (exit status 2). ``report=False`` skips writing
    the profile's ``REPORT.md`` (the tests)."""
    from paper_lib.pipeline.profiles import get_profile
    from paper_lib.pipeline.provenance import source_commit

    with tempfile.TemporaryDirectory() as tmp:
        try:
            run = _unpacked(source, tmp)
            try:
                summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                raise ValueError("no readable summary.json: not a device study's output") from None
            commit, _ = source_commit(ROOT)
            profile = get_profile(summary["profile"])
            never = "" if profile.publishes else f"its profile {profile.name} never publishes"
            if why := _refusal(run, summary, commit) or never:
                raise ValueError(f"{source}: {why}")
        except ValueError as err:
            print(f"device-publish: {err}; nothing was published", file=sys.stderr)
            return 2
        for nb in _done(summary):
            target = ROOT / profile.figures / nb
            stage = target.parent / f".{target.name}.incoming"
            shutil.rmtree(stage, ignore_errors=True)
            shutil.copytree(run / "figures" / nb, stage)
            replace_dir(stage, target)
        if (run / "gpu_check.csv").is_file():
            (ROOT / profile.figures / "bench").mkdir(parents=True, exist_ok=True)
            shutil.copy2(run / "gpu_check.csv", ROOT / profile.figures / "bench" / "gpu_check.csv")
    published = _done(summary)
    print(f"published {', '.join(published) or 'nothing'} under {profile.figures}/ from {commit} ({summary['device']})")
    if published and report:
        return subprocess.call([sys.executable, "-m", "paper_lib.claims", "report", "--profile", profile.name], cwd=ROOT)
    return 0 if published else 1


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _cli import OneLineParser

    ap = OneLineParser(prog="device_study.py", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="CPU side: the token file and the record of the sources")
    p.add_argument("--profile", default="gpu")
    p.add_argument("--out", type=Path, default=ROOT / "build" / "gpu")
    p.add_argument("--allow-dirty", action="store_true", help="record uncommitted sources (the run is then never published)")
    r = sub.add_parser("run", help="device side: gpu_check, then notebooks 03 and 04")
    r.add_argument("--out", type=Path, default=ROOT / "build" / "gpu")
    r.add_argument("--budget-s", type=float, default=840.0, help="seconds for everything (default 840 = 14 minutes)")
    r.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    r.add_argument("--skip-gpu-check", action="store_true")
    r.add_argument("--overrides", type=json.loads, default={}, help="JSON: the notebooks' `overrides` parameter")
    r.add_argument("--pack", type=Path, help="also write everything as one .tar.gz here")
    q = sub.add_parser("publish", help="CPU side: a device run's outputs into figures/<profile>/ and its REPORT.md")
    q.add_argument("run", type=Path, help="the run's folder (build/gpu) or its --pack archive")
    args = ap.parse_args(argv)
    if args.command == "prepare":
        from paper_lib.pipeline.profiles import check_profile

        try:
            check_profile(args.profile)
            prepare(args.out, args.profile, args.allow_dirty)
        except ValueError as err:
            print(f"device-prepare: {err}", file=sys.stderr)
            return 2
        return 0
    if args.command == "run":
        if args.budget_s <= 0:
            ap.error(f"--budget-s must be > 0, got {args.budget_s}")
        return run(args.out, args.budget_s, args.device, args.skip_gpu_check, args.overrides, args.pack)
    return publish(args.run)


if __name__ == "__main__":
    sys.exit(main())
