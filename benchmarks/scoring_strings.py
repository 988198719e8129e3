"""Benchmark: all string metrics for 1,056 stories vs the reference implementations.

Stories: the 576 LLM stories of ``hanna_llm_stories.csv`` (about 500 tokens each) cycled to
1,056, each against its human reference and prompt (the scorers tokenise each distinct text
once, so the cycled copies cost less than 1,056 distinct stories would). Each part times our
scorer AND the reference called the usual way on the same stories in the same run and prints
the ratio:

- ROUGE: the ROUGE-1.5.5 Perl script as pyrouge/SummEval drives it (SEE files, ``-m``); it
  needs minutes per few dozen long stories, so it runs on ``--perl-subset`` stories and its
  time is scaled linearly to the full set (printed as such);
- CIDEr: pycocoevalcap's ``CiderScorer``;
- data statistics: SummEval's ``DataStatsMetric`` algorithm (spaCy tokens, Newsroom
  fragments and Counter loops in Python), transcribed here since summ_eval is not installable;
- BLEU, chrF: sacrebleu's ``sentence_bleu``/``sentence_chrf`` item by item (SummEval's calls);
- METEOR (``--meteor``): ours is the original Java jar, so the time is the jar's.

Run from the repository root: ``python benchmarks/scoring_strings.py [--n 1056]``.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from pathlib import Path

import polars as pl

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from conftest import HANNA_DIR  # noqa: E402
from hanna_stats.scoring.registry import REGISTRY, ScoringConfig, Texts  # noqa: E402

CONFIG = ScoringConfig(hanna_compat=True, progress=False)


def _texts(n: int) -> Texts:
    df = pl.read_csv(HANNA_DIR / "hanna_llm_stories.csv")
    idx = [i % df.height for i in range(n)]
    return Texts.of(*(df[c].gather(idx).to_list() for c in ("Prompt", "Human", "Story")))


def _timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _datastats_baseline(texts: Texts) -> None:
    """SummEval's DataStatsMetric.evaluate_example loop (with Newsroom's Fragments)."""
    import spacy

    nlp = spacy.blank("en")
    for prompt, story in zip(texts.prompts, texts.candidates, strict=True):
        summ = [t.text for t in nlp(story + "\n")]
        text = [t.text for t in nlp(prompt + "\n")]
        a, b = [t.lower() for t in summ], [t.lower() for t in text]
        lengths, i = [], 0
        while i < len(a):
            best, j = 0, 0
            while j < len(b):
                if a[i] == b[j]:
                    k = 0
                    while i + k < len(a) and j + k < len(b) and a[i + k] == b[j + k]:
                        k += 1
                    best = max(best, k)
                    j += k
                else:
                    j += 1
            lengths.append(best)
            i += best or 1
        for n in (1, 2, 3):
            grams = list(zip(*[summ[k:] for k in range(n)], strict=False))
            source = set(zip(*[text[k:] for k in range(n)], strict=False))
            distinct = set(grams)
            _ = len(distinct - source) / max(len(distinct), 1)
            _ = sum(c > 1 for c in Counter(grams).values()) / max(len(distinct), 1)


def _cider_baseline(texts: Texts) -> None:
    from pycocoevalcap.cider.cider_scorer import CiderScorer

    scorer = CiderScorer(n=4, sigma=6.0)
    for c, r in zip(texts.candidates, texts.references, strict=True):
        scorer += (" ".join(re.findall(r"\w+", c)), [" ".join(re.findall(r"\w+", r))])
    scorer.compute_score()


def _sacrebleu_baseline(texts: Texts, metric: str) -> None:
    import sacrebleu

    score = {"bleu": sacrebleu.sentence_bleu, "chrf": sacrebleu.sentence_chrf}[metric]
    for c, r in zip(texts.candidates, texts.references, strict=True):
        score(c, [r])


def _rouge_baseline(texts: Texts) -> None:
    from test_scoring_strings_rouge import perl_rouge

    perl_rouge(list(texts.references), list(texts.candidates))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1056)
    parser.add_argument("--perl-subset", type=int, default=16)
    parser.add_argument("--meteor", action="store_true", help="also time METEOR (minutes)")
    args = parser.parse_args()
    texts = _texts(args.n)
    small = Texts.of(texts.prompts[:4], texts.references[:4], texts.candidates[:4])
    names = ["datastats", "rouge", "bleu", "chrf", "cider"] + (["meteor"] if args.meteor else [])
    for name in names:  # warm-up: imports, Numba cache, spaCy
        REGISTRY[name].compute(small, CONFIG)
    sub = args.perl_subset
    subset = Texts.of(texts.prompts[:sub], texts.references[:sub], texts.candidates[:sub])
    baselines = {
        "datastats": ("SummEval loop", lambda: _datastats_baseline(texts), 1.0),
        "rouge": (f"Perl x{args.n / sub:.0f}", lambda: _rouge_baseline(subset), args.n / sub),
        "bleu": ("sacrebleu", lambda: _sacrebleu_baseline(texts, "bleu"), 1.0),
        "chrf": ("sacrebleu", lambda: _sacrebleu_baseline(texts, "chrf"), 1.0),
        "cider": ("pycocoevalcap", lambda: _cider_baseline(texts), 1.0),
    }
    print(
        f"{args.n} stories, mean {sum(len(c.split()) for c in texts.candidates) / args.n:.0f} "
        "words; times in seconds"
    )
    total = 0.0
    for name in names:
        ours = _timed(lambda name=name: REGISTRY[name].compute(texts, CONFIG))
        total += ours
        if name in baselines:
            label, run, scale = baselines[name]
            base = _timed(run) * scale
            print(
                f"{name:10s} ours {ours:8.2f}   {label:16s} {base:9.2f}  ratio {base / ours:6.1f}x",
                flush=True,
            )
        else:
            print(f"{name:10s} ours {ours:8.2f}   (the original jar)", flush=True)
    print(
        f"all string metrics{'' if args.meteor else ' but METEOR'}: {total:.2f} s "
        f"(target: under 20 s for 1,056 stories on 2 cores)"
    )


if __name__ == "__main__":
    main()
