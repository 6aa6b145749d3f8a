"""A bounded search for a cpu recipe in which the Transformer learns in-context copying.

Trains notebook 03's cpu Transformer (``spen_train.settings_for("cpu")``, seed 0, one thread) on
its training stream with repeated random spans mixed in at random offsets (no fixed period: text
segments of 40-199 tokens, then with probability ``--frac`` a span of 8-39 uniform random tokens,
0-29 tokens of text and the same span again; ``--frac`` >= 1.5 replaces the text by random tokens
too), and prints the held-out loss on real text, the induction score
(:func:`paper_lib.in_context.induction_score`, 64 tokens) every 500 steps and at the end, and the
in-context score, as one JSON line. Notebook 03's ``RECORDED_INDUCTION_PILOTS`` are its runs.

    .venv/bin/python benchmarks/induction_pilot.py --frac 0.5 --steps 600
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _cli import OneLineParser, positive  # noqa: E402  (benchmarks/_cli.py)

from paper_lib.data.lm_data import prepare_data  # noqa: E402
from paper_lib.evaluate import evaluate  # noqa: E402
from paper_lib.experiments import spen_train  # noqa: E402
from paper_lib.in_context import in_context_score, induction_score  # noqa: E402
from paper_lib.lm_recipe import build_lm, train_config  # noqa: E402
from paper_lib.train import train  # noqa: E402


def mixed_stream(text: np.ndarray, vocab_size: int, frac: float, seed: int = 0) -> tuple[np.ndarray, float]:
    """``text`` with repeated random spans mixed in (see the module docstring); returns the stream
    and the share of its tokens that belong to the spans."""
    rng = np.random.default_rng(seed)
    parts, i, n_span = [], 0, 0
    while i < len(text):
        n = int(rng.integers(40, 200)) if frac < 1.5 else int(rng.integers(0, 20))
        parts.append(text[i:i + n] if frac < 1.5 else rng.integers(1, vocab_size, size=n))
        i += max(n, 20)
        if rng.random() < min(frac, 1.0):
            span = rng.integers(1, vocab_size, size=int(rng.integers(8, 40)))
            gap = text[i:i + int(rng.integers(0, 30))]
            i += len(gap)
            parts += [span, gap, span]
            n_span += 2 * len(span)
    stream = np.concatenate(parts).astype(text.dtype)
    return stream, n_span / len(stream)


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="benchmarks/induction_pilot.py", description=__doc__.splitlines()[0])
    ap.add_argument("--frac", type=float, default=0.5, help="probability of a repeated span after each text segment")
    ap.add_argument("--steps", type=positive, default=600, help="optimizer steps")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    s = spen_train.settings_for("cpu", {"train": {"steps": args.steps}})
    data = prepare_data(s.data)
    vocab = data["tokenizer"].get_vocab_size()
    stream, share = mixed_stream(data["train"], vocab, args.frac)
    model = build_lm("transformer", s, vocab, seed=0)
    cfg = train_config("transformer", s, 0)
    curve = []

    def on_step(done: int) -> None:
        if done % 500 == 0:
            curve.append([done, round(induction_score(model, vocab, 64)["induction_score"], 3)])

    t0 = time.perf_counter()
    train(model, stream, cfg, progress=False, on_step=on_step)
    ev = evaluate(model, data["val"], cfg.seq_len, max_tokens=s.eval_tokens)
    print(json.dumps({"frac": args.frac, "steps": args.steps, "span_share": round(share, 3),
                      "val_loss": round(ev["loss"], 3), "induction_score": round(induction_score(model, vocab, 64)["induction_score"], 3),
                      "in_context_score": round(in_context_score(ev["token_loss"], cfg.seq_len), 3), "curve": curve,
                      "seconds": round(time.perf_counter() - t0)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
