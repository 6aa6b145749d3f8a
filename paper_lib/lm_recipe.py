"""One language-model recipe: the settings, the run and the command line of SPEN and the Transformer.

Notebooks 03 and 04 and ``python -m paper_lib.lm_recipe`` train their language models through
this module and nothing else (our design: the paper gives no training recipe):

- :class:`LMSettings`, typed and nested as notebooks 01/02's settings are: ``data`` (:class:`LMData`:
  corpora, character limits, dev split, tokenizer, vocabulary), ``spen`` (:class:`~paper_lib.models.spen.SPENConfig`),
  ``transformer`` (:class:`~paper_lib.models.transformer.TransformerConfig`), ``train``
  (:class:`~paper_lib.train.TrainConfig`), the Transformer's learning rate, the evaluation budget and the
  seeds. A reader reaches every field: ``{"spen": {"alphas": [0.5, 0.05]}}``, ``{"train": {"lr": 1e-3}}``,
  ``{"transformer": {"n_head": 4}}``.
- :func:`configure_lm` applies a profile and a reader's overrides and checks that the two models
  are matched (same ``n_layer``, ``d_model``, ``block_size``; both take ``data.vocab_size``).
- :func:`lr_for` is the one place that decides each model's learning rate, :func:`train_config` the one
  place that makes a run's :class:`~paper_lib.train.TrainConfig`, :func:`run_lm` the one function that
  trains and evaluates one model (its splits checked first), measuring what its :class:`Evaluation` names.
- :func:`main` is the command line (torchrun-aware; see its docstring).

Layering: ``experiments`` -> ``lm_recipe`` -> ``train``, ``evaluate``, ``models``, ``data``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd
import torch
import torch.distributed as dist

from .data.corpus import CorpusNeedsNetworkError
from .data.lm_data import check_splits, prepare_data
from .evaluate import evaluate
from .in_context import in_context_score, induction_score
from .models.factory import build
from .models.lm import CausalLM, count_params
from .models.spen import SPENConfig
from .models.transformer import TransformerConfig
from .pipeline.atomic import write_json, write_text
from .pipeline.profiles import PROFILE_NAMES
from .pipeline.settings import check_seeds, configure, setting
from .pipeline.threads import set_threads
from .predictors import PREDICTORS
from .probes import layer_identity
from .profile_settings import PROFILE_SETTINGS
from .train import TrainConfig, rank_and_world, train

MODELS: tuple[str, ...] = ("spen", "transformer")
"""The two language models of the recipe."""
MATCHED: tuple[str, ...] = ("n_layer", "d_model", "block_size")
"""Sizes the two models must share (and the vocabulary, ``data.vocab_size``)."""


@dataclass
class LMData:
    """Corpus, evaluation texts and tokenizer of the language models (:func:`paper_lib.data.lm_data.prepare_data`)."""

    corpus: str = "wiki_sample"          # training/validation source (paper_lib.data.corpus)
    val_corpus: str | None = None        # None: the corpus's own held-out articles
    ood_corpus: str = "lee_background"   # out-of-domain evaluation text (news)
    min_chars: int = setting(2000, low=0)  # characters; shorter articles dropped
    max_train_chars: int | None = None   # characters of training text read (None: all)
    max_val_chars: int | None = None     # characters of each evaluation text read (None: all)
    dev_every: int = setting(20, low=2)  # every n-th training article is the dev text (choices are made on it)
    tokenizer: str = "bpe"               # bpe (trained on the training split) | gpt2
    vocab_size: int = 2048               # tokens; both models take it (8192 leaves 2.1M of 5.5M parameters in the embedding)


def _cpu_spen() -> SPENConfig:  # notebook 03's cpu sizes (our design); alphas and top-k are the paper's
    return SPENConfig(vocab_size=2048, n_layer=4, d_model=128, d_bottleneck=48, d_ff=512, block_size=128)


def _cpu_transformer() -> TransformerConfig:  # matched to _cpu_spen: 2 heads = d_model // 64
    return TransformerConfig(vocab_size=2048, n_layer=4, d_model=128, n_head=2, d_ff=512, block_size=128)


def _cpu_train() -> TrainConfig:  # 600 steps x 16 x 128 tokens; lr 2e-3 from the recorded sweep
    return TrainConfig(steps=600, batch_size=16, seq_len=128, lr=2e-3, warmup_steps=30, log_every=10)


@dataclass
class LMSettings:
    """Everything one language-model study needs; the defaults are notebook 03's ``cpu`` profile.

    ``train.seed`` is not a setting: each run takes its seed from ``seeds``. ``train.lr`` is
    SPEN's peak learning rate, and the Transformer's unless ``lr_transformer`` is set.
    """

    data: LMData = field(default_factory=LMData)
    spen: SPENConfig = field(default_factory=_cpu_spen)
    transformer: TransformerConfig = field(default_factory=_cpu_transformer)
    train: TrainConfig = field(default_factory=_cpu_train)
    lr_transformer: float | None = setting(None, low=0, low_open=True)  # peak lr of the Transformer (None: train.lr)
    eval_tokens: int = 32768             # tokens per evaluation text
    induction_len: int | None = setting(None, low=2)  # random tokens repeated in the induction test (None: train.seq_len // 2)
    seeds: tuple[int, ...] = (0, 1)      # one run per seed and model


def configure_lm(default: LMSettings, section: str, profile: str, overrides: Mapping[str, Any] | None = None):
    """``default`` with the profile's ``section`` and a reader's ``overrides`` applied, checked.

    The models' ``vocab_size`` follows ``data.vocab_size`` (the tokenizer's size replaces it when
    a model is built).

    Raises:
        ValueError: one line: an unknown or ill-typed setting (:func:`paper_lib.pipeline.settings.configure`),
            an override of ``spen.vocab_size``/``transformer.vocab_size``/``train.seed`` (the message
            names the setting to use), models that are not matched, or ``train.seq_len`` above ``block_size``.
    """
    for key, use in (("spen.vocab_size", "data.vocab_size"), ("transformer.vocab_size", "data.vocab_size"),
                     ("train.seed", "seeds")):
        group, name = key.split(".")
        if isinstance((overrides or {}).get(group), Mapping) and name in overrides[group]:
            raise ValueError(f"{section}.{key} is not a setting of its own; set {use}")
    s = check_seeds(configure(default, section, profile, overrides, PROFILE_SETTINGS))
    v = s.data.vocab_size
    s = replace(s, spen=replace(s.spen, vocab_size=v), transformer=replace(s.transformer, vocab_size=v))
    for name in MATCHED:
        a, b = getattr(s.spen, name), getattr(s.transformer, name)
        if a != b:
            raise ValueError(f"{section}: spen.{name}={a} but transformer.{name}={b}; the two models must be matched "
                             f"({', '.join(MATCHED)} and data.vocab_size): set both")
    if s.train.seq_len > s.spen.block_size:
        raise ValueError(f"{section}.train.seq_len={s.train.seq_len} exceeds the models' block_size={s.spen.block_size}")
    if 2 * induction_length(s) - 1 > s.spen.block_size:
        raise ValueError(f"{section}.induction_len={induction_length(s)}: twice it must fit the models' "
                         f"block_size={s.spen.block_size}")
    return s


def induction_length(s: LMSettings) -> int:
    """Tokens of the induction test's random span: ``s.induction_len``, or half of ``train.seq_len``
    (the repeated span then fits one training window)."""
    return s.induction_len or max(2, s.train.seq_len // 2)


def lr_for(kind: str, s: LMSettings) -> float:
    """Peak learning rate of ``kind``: ``train.lr`` for SPEN, ``lr_transformer`` (or ``train.lr``) for the Transformer."""
    if kind == "transformer" and s.lr_transformer is not None:
        return s.lr_transformer
    return s.train.lr


def train_config(kind: str, s: LMSettings, seed: int, lr: float | None = None, steps: int | None = None) -> TrainConfig:
    """The :class:`TrainConfig` of one run: ``s.train`` with ``seed``, the model's learning rate (:func:`lr_for`,
    or ``lr``) and, for a shorter run (``steps``, the sweep), warmup scaled to at most a tenth of it (>= 1 step)."""
    cfg = replace(s.train, seed=seed, lr=lr_for(kind, s) if lr is None else lr)
    if steps is not None:
        cfg = replace(cfg, steps=steps, warmup_steps=max(1, min(s.train.warmup_steps, steps // 10)))
    return cfg


def model_config(kind: str, s: LMSettings, vocab_size: int | None = None, predictor: str | None = None,
                 block_size: int | None = None):
    """The config of ``kind`` (``"spen"`` or ``"transformer"``), with the tokenizer's ``vocab_size``,
    SPEN's ``predictor`` and a longer ``block_size`` where given.

    Raises:
        ValueError: an unknown ``kind`` (the allowed ones named).
    """
    if kind not in MODELS:
        raise ValueError(f"unknown model {kind!r}; allowed: {', '.join(MODELS)}")
    changes = {k: v for k, v in (("vocab_size", vocab_size), ("block_size", block_size)) if v is not None}
    if predictor is not None and kind == "spen":
        changes["predictor"] = predictor
    return replace(getattr(s, kind), **changes)


def build_lm(kind: str, s: LMSettings, vocab_size: int | None = None, seed: int = 0, predictor: str | None = None,
             block_size: int | None = None) -> CausalLM:
    """A freshly initialised ``kind`` of the recipe (``torch.manual_seed(seed)`` first; :func:`model_config`)."""
    return build(model_config(kind, s, vocab_size, predictor, block_size), seed=seed)


@dataclass(frozen=True)
class Evaluation:
    """What one run of :func:`run_lm` measures besides training (our design: the paper is silent).

    Attributes:
        at: steps at which the loss on ``data[split]`` is measured during training (a
            token-scaling curve).
        split: the text those measurements, the in-context scores and the layer probe read.
        final_splits: texts evaluated after training (on rank 0 only under torchrun).
        induction: also the in-context scores (:mod:`paper_lib.in_context`), at every ``at`` step
            and after training: the induction score on :func:`induction_length` random tokens
            repeated, and the early-minus-late score of ``split``.
        layer_probe: after training, :func:`probe_layers` on ``split``'s windows (``"layers"``).
    """

    at: tuple[int, ...] = ()
    split: str = "val"
    final_splits: tuple[str, ...] = ("val", "ood")
    induction: bool = False
    layer_probe: bool = False


def run_lm(kind: str, s: LMSettings, data: dict, seed: int, evaluation: Evaluation = Evaluation(), *,
           predictor: str | None = None, lr: float | None = None, steps: int | None = None,
           out_dir: str | Path | None = None, resume: bool = True, device=None, progress: bool = True) -> dict:
    """Train one model of the recipe on ``data["train"]`` and evaluate it (the one run function).

    Args:
        kind: ``"spen"`` or ``"transformer"``; ``predictor``: SPEN's reader (default ``s.spen.predictor``).
        evaluation: what is measured (:class:`Evaluation`).
        lr, steps: a short run's rate and length (the sweep; :func:`train_config`).
        out_dir, resume: checkpoints and log (:func:`paper_lib.train.train`); ``progress``: its bar.
        device: where the model trains (default: the first GPU when torch sees one, else the CPU).

    Returns:
        ``{"model", "seed", "lr", "params", "history" (DataFrame), "train_tokens_per_s", "final_loss",
        "scaling": [{"step", "tokens", "val_loss"(, "induction_score", "in_context_score")}],
        <split>: evaluate(...) for each final split(, "induction": induction_score(...), "in_context": float)
        (, "layers": probe_layers(...))}``; losses and scores in nats per token.
    """
    cfg, vocab, e = train_config(kind, s, seed, lr, steps), data["tokenizer"].get_vocab_size(), evaluation
    check_splits(data, cfg.seq_len, ("train", *e.final_splits, *((e.split,) if e.at or e.layer_probe else ())))
    model = build_lm(kind, s, vocab, seed, predictor)
    model = model.to(device or ("cuda" if torch.cuda.is_available() else "cpu"))  # bf16 autocast on CUDA: train
    marks = set(e.at)
    points, last, copies = [], {}, {}                               # copies: step -> induction_score(...)
    induction_len = induction_length(s) if e.induction else None

    def on_step(done: int) -> None:
        if done in marks:
            last[done] = evaluate(model, data[e.split], cfg.seq_len, max_tokens=s.eval_tokens)
            points.append({"step": done, "tokens": done * cfg.batch_size * cfg.seq_len, "val_loss": last[done]["loss"]})
            if induction_len:
                copies[done] = induction_score(model, vocab, induction_len)
                points[-1].update(induction_score=copies[done]["induction_score"],
                                  in_context_score=in_context_score(last[done]["token_loss"], cfg.seq_len))

    res = train(model, data["train"], cfg, out_dir=out_dir, resume=resume, progress=progress,
                desc=f"{predictor or kind} lr {cfg.lr:g} seed {seed}", on_step=on_step if marks else None)
    out = {"model": kind, "seed": seed, "lr": cfg.lr, "params": count_params(model), "history": res.history,
           "train_tokens_per_s": res.tokens_per_s, "final_loss": res.final_loss, "scaling": points, "train": cfg}
    if rank_and_world()[0] == 0:
        for split in e.final_splits:
            reuse = split == e.split and cfg.steps in last          # measured at the last step already
            out[split] = last[cfg.steps] if reuse else evaluate(model, data[split], cfg.seq_len, max_tokens=s.eval_tokens)
        if induction_len:                                            # measured at the last step already, or now
            out["induction"] = copies.get(cfg.steps) or induction_score(model, vocab, induction_len)
            if e.split in out:
                out["in_context"] = in_context_score(out[e.split]["token_loss"], cfg.seq_len)
        if e.layer_probe:
            out["layers"] = probe_layers(model, data[e.split], cfg.seq_len)
    return out


def probe_layers(model, ids, seq_len: int, n_train: int = 32, n_test: int = 16) -> pd.DataFrame:
    """:func:`paper_lib.probes.layer_identity` of a trained ``model`` (the current token, lag 0, and
    the one before, lag 1, at every layer of its residual stream) on the first ``n_train + n_test``
    non-overlapping windows of ``seq_len`` tokens of ``ids`` (probes fitted on the first ``n_train``,
    scored on the rest). Our design: the paper is silent (notebook 03's token identity by layer).

    Raises:
        ValueError: ``ids`` shorter than ``(n_train + n_test) * seq_len`` tokens.
    """
    n = n_train + n_test
    if len(ids) < n * seq_len:
        raise ValueError(f"probe_layers needs {n * seq_len} tokens ({n} windows of {seq_len}), got {len(ids)}")
    windows = torch.as_tensor(np.asarray(ids[: n * seq_len], dtype=np.int64)).view(n, seq_len)   # (n, T)
    model.eval()
    streams = [x.float().cpu().numpy() for x in model.residual_stream(windows.to(next(model.parameters()).device))]
    ids_np = windows.numpy()
    return layer_identity([x[:n_train] for x in streams], ids_np[:n_train], [x[n_train:] for x in streams],
                          ids_np[n_train:])


# --------------------------------------------------------------------------- the command line

def recipe_for(profile: str = "cpu", overrides: Mapping[str, Any] | None = None) -> LMSettings:
    """The recipe at ``profile`` (the ``lm`` section of :mod:`paper_lib.profile_settings`), for the command line."""
    return configure_lm(LMSettings(), "lm", profile, overrides)


def _int_at_least(low: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {value}")
        return value
    return parse


def _json_dict(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"must be a JSON object, e.g. '{{\"train\": {{\"lr\": 1e-3}}}}' ({err})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"must be a JSON object, got {text!r}")
    return value


def parser() -> argparse.ArgumentParser:
    """The argument parser (choices and types reject bad values with one line, exit status 2)."""
    ap = argparse.ArgumentParser(prog="python -m paper_lib.lm_recipe",
                                 description="Train SPEN or the matched Transformer with the language-model recipe.",
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--profile", default="cpu", choices=PROFILE_NAMES)
    ap.add_argument("--model", default="spen", choices=MODELS)
    ap.add_argument("--out", default=None, help="run folder (log.csv, checkpoints/, metrics.json)")
    ap.add_argument("--seed", type=_int_at_least(0), default=0)
    ap.add_argument("--overrides", type=_json_dict, default=None,
                    help="settings as JSON, e.g. '{\"spen\": {\"alphas\": [0.5, 0.05]}, \"train\": {\"lr\": 1e-3}}'")
    ap.add_argument("--steps", type=_int_at_least(1), default=None, help="train.steps (optimizer steps)")
    ap.add_argument("--batch-size", type=_int_at_least(1), default=None, help="train.batch_size (global, sequences)")
    ap.add_argument("--corpus", default=None, help="data.corpus (e.g. c4, a .jsonl file)")
    ap.add_argument("--predictor", default=None, choices=sorted(PREDICTORS), help="spen.predictor")
    ap.add_argument("--no-resume", action="store_true", help="start over, replacing what --out holds")
    ap.add_argument("--threads", type=_int_at_least(1), default=None,
                    help="CPU threads per process for torch, BLAS and OpenMP (default: paper_lib.pipeline.threads)")
    return ap


def _overrides(args: argparse.Namespace) -> dict:
    """``--overrides`` with the shortcut flags merged in (a flag wins over the same key in the JSON)."""
    over = json.loads(json.dumps(args.overrides or {}))
    for group, key, value in (("train", "steps", args.steps), ("train", "batch_size", args.batch_size),
                              ("data", "corpus", args.corpus), ("spen", "predictor", args.predictor)):
        if value is not None:
            if not isinstance(over.get(group, {}), dict):
                raise ValueError(f"lm.{group} takes a dict of its fields, got {over[group]!r}")
            over.setdefault(group, {})[key] = value
    return over


def main(argv: list[str] | None = None) -> int:
    """``python -m paper_lib.lm_recipe --profile paper --model spen --out runs/spen`` (torchrun-aware).

    Under ``torchrun`` (``WORLD_SIZE`` > 1) it joins the process group (NCCL on GPUs, gloo on CPU)
    and trains with DDP; rank 0 evaluates and writes ``metrics.json``. A rerun never overwrites a
    result with less: with the same ``--out`` and settings a finished run (``metrics.json``
    present) says "already complete" and leaves every file as it is; other settings in that
    folder are a one-line error; an interrupted run resumes from its checkpoint. ``--no-resume``
    starts over.

    Returns the exit status: 0 done (or already complete), 2 a one-line error on stderr (bad input, a
    diverged run: never filed as complete), 1 a file that could not be written (a full disk).
    """
    args = parser().parse_args(argv)
    set_threads(args.threads, args.profile)
    try:
        return _run(args)
    except (CorpusNeedsNetworkError, ValueError, OSError) as err:  # OSError: a full disk (one line: WriteFailed)
        print(f"error: {err}", file=sys.stderr)
        return 1 if isinstance(err, OSError) and not isinstance(err, FileNotFoundError) else 2


def _changed(old: dict, new: dict, prefix: str = "") -> list[str]:
    """Dotted names of the settings that differ between two recorded runs (any depth)."""
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += _changed(a, b, f"{prefix}{key}.")
        elif a != b:
            out.append(prefix + key)
    return out


def _already_complete(out: Path, run: dict, no_resume: bool) -> bool:
    """Whether ``out`` holds this finished run; with ``no_resume``, forget any finished run there.

    Raises:
        ValueError: ``out`` holds a finished run with other settings (one line naming them).
    """
    if no_resume:
        if int(os.environ.get("RANK", "0")) == 0:
            for name in ("metrics.json", "summary.txt"):
                (out / name).unlink(missing_ok=True)
        return False
    metrics = out / "metrics.json"
    recorded = json.loads(metrics.read_text(encoding="utf-8")).get("run") if metrics.exists() else None
    if recorded is not None and recorded != run:
        raise ValueError(f"{out} holds a finished run with other settings ({', '.join(_changed(recorded, run))}); "
                         "choose another --out, or --no-resume to replace it")
    return recorded == run


def _run(args: argparse.Namespace) -> int:
    settings = recipe_for(args.profile, _overrides(args))
    out = Path(args.out or f"runs/{args.profile}-{args.model}-seed{args.seed}")
    run = json.loads(json.dumps({"model": args.model, "seed": args.seed, "profile": args.profile,
                                 "settings": asdict(settings)}, default=str))
    if _already_complete(out, run, args.no_resume):
        print(f"already complete: {out} (metrics.json and log.csv kept; --no-resume starts over)")
        return 0
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    rank, world = rank_and_world()
    device = torch.device(f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    data = prepare_data(settings.data)
    r = run_lm(args.model, settings, data, args.seed, out_dir=out, resume=not args.no_resume, device=device)
    if rank == 0:
        summary = {"model": args.model, "params": r["params"], "train": asdict(r["train"]), "run": run,
                   "final_train_loss": r["final_loss"], "tokens_per_s": r["train_tokens_per_s"],
                   **{f"{s}_loss": r[s]["loss"] for s in ("val", "ood")}, **{f"{s}_ppl": r[s]["ppl"] for s in ("val", "ood")}}
        if bad := [k for k in ("final_train_loss", "val_loss", "ood_loss") if not np.isfinite(summary[k])]:
            raise ValueError(f"{out}: {', '.join(bad)} not finite ({summary[bad[0]]}); nothing is filed as complete")
        write_json(out / "metrics.json", summary)
        write_text(out / "summary.txt", json.dumps(summary, indent=2, default=str) + "\n")
        print(json.dumps({k: summary[k] for k in ("params", "val_ppl", "ood_ppl", "tokens_per_s")}))
    if world > 1:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
