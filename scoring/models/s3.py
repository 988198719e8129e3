"""S3 (Peyrard et al., 2017): a learnt combination of ROUGE, JS divergence and ROUGE-WE.

Peyrard, M., Botschen, T. and Gurevych, I. (2017). Learning to score system summaries for better
content selection evaluation. Proceedings of the Workshop on New Frontiers in Summarization,
74-84.

S3 maps six features of a (candidate, reference) pair to a score with two regression models the
authors trained on TAC-2008/2009 human judgements, one for Pyramid scores (S3-Pyramid) and one
for Responsiveness (S3-Responsiveness). The features, as in the authors' released code (also
SummEval's ``s3_utils``, which HANNA ran), in the order the models expect (sorted by name):

* ``JS_eval_1``, ``JS_eval_2`` -- Jensen-Shannon divergence (natural log) between the candidate's
  and the reference's n-gram frequency distributions (n = 1: content words, i.e. stemmed tokens
  not in NLTK's English stop-word list; n = 2: stemmed bigrams with at least one content word),
  JS(p, q) = (KL(p || m) + KL(q || m)) / 2, m = (p + q) / 2;
* ``ROUGE_1_R``, ``ROUGE_2_R`` -- ROUGE-n recall on stemmed tokens (no stop-word removal):
  matched n-grams (clipped counts) / n-grams of the reference;
* ``ROUGE_1_R_WE``, ``ROUGE_2_R_WE`` -- ROUGE-WE-n recall (unstemmed tokens, soft matches
  through the dependency-based word embeddings ``deps.words`` at cosine 0.8;
  :mod:`hanna_stats.scoring.models.rouge_we`).

Tokens are the lowercased ``\\w+`` runs; stemming is NLTK's Snowball English stemmer. NLTK's
stop-word list is data that NLTK downloads at run time; its 179 English words are copied below.

**The trained models are not available here.** They are pickled scikit-learn estimators in the
authors' repository (``models/en/``, files named with ``pyr`` and ``resp``), on no package
registry. Give their folder as ``ScoringConfig.models["s3-models"]`` (``--model
s3-models=DIR``); each file is unpickled (Python 2 pickles, read with ``encoding="latin1"``; a
scikit-learn version able to read them is the user's to install) and must have a ``predict``
method. Without them the scorer raises :class:`MissingCheckpointError`; :func:`features` works
without them.
"""

from __future__ import annotations

import pickle
import re
from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np
from hanna_stats.scoring.models._runtime import MissingCheckpointError
from hanna_stats.scoring.models.rouge_we import rouge_we
from hanna_stats.scoring.registry import ScoringConfig, Texts, register

MODELS = "s3-models"
FEATURES = ("JS_eval_1", "JS_eval_2", "ROUGE_1_R", "ROUGE_1_R_WE", "ROUGE_2_R", "ROUGE_2_R_WE")
# NLTK's English stop words (nltk_data corpora/stopwords/english, 179 words).
STOP_WORDS = frozenset(
    """i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself
    yourselves he him his himself she she's her hers herself it it's its itself they them their
    theirs themselves what which who whom this that that'll these those am is are was were be
    been being have has had having do does did doing a an the and but if or because as until
    while of at by for with about against between into through during before after above below
    to from up down in out on off over under again further then once here there when where why
    how all any both each few more most other some such no nor not only own same so than too
    very s t can will just don don't should should've now d ll m o re ve y ain aren aren't
    couldn couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma
    mightn mightn't mustn mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren
    weren't won won't wouldn wouldn't""".split()
)
_WORD = re.compile(r"\w+")


@cache
def _stemmer():
    from nltk.stem.snowball import SnowballStemmer

    return SnowballStemmer("english")


def stemmed_tokens(text: str) -> list[str]:
    """Lowercased Snowball stems of the ``\\w+`` runs of ``text``."""
    stem = _stemmer().stem
    return [stem(t).lower() for t in _WORD.findall(text)]


def _ngrams(words: list[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def _content_frequencies(words: list[str], n: int) -> dict[tuple[str, ...], float]:
    """Relative frequencies of the content n-grams (at least one word not a stop word)."""
    grams = _ngrams(words, n)
    content = {g: c for g, c in grams.items() if any(w not in STOP_WORDS for w in g)}
    total = sum(content.values())
    return {g: c / total for g, c in content.items()}


def js_divergence(p: dict, q: dict) -> float:
    """Jensen-Shannon divergence (natural log) of two sparse distributions ``{event: p}``;
    an empty one contributes nothing to the sum (as in the authors' code)."""
    m = {k: (p.get(k, 0.0) + q.get(k, 0.0)) / 2 for k in p.keys() | q.keys()}
    kl_p = sum(v * np.log(v / m[k]) for k, v in p.items())
    kl_q = sum(v * np.log(v / m[k]) for k, v in q.items())
    return float((kl_p + kl_q) / 2)


def rouge_recall(candidate: list[str], reference: list[str], n: int) -> float:
    """ROUGE-n recall: clipped n-gram matches / n-grams of the reference (0 when it has none)."""
    ref = _ngrams(reference, n)
    total = sum(ref.values())
    return sum((_ngrams(candidate, n) & ref).values()) / total if total else 0.0


def features(
    candidates: tuple[str, ...], references: tuple[str, ...], config: ScoringConfig
) -> np.ndarray:
    """S3's six features of each pair, columns in :data:`FEATURES` order.

    Parameters
    ----------
    candidates, references : tuple of str
        Aligned texts.
    config : ScoringConfig
        ``models["deps.words"]``: the word vectors for the ROUGE-WE features
        (:func:`hanna_stats.scoring.models.rouge_we.load_word_vectors`).

    Returns
    -------
    numpy.ndarray
        float64, shape (len(candidates), 6).
    """
    out = np.empty((len(candidates), len(FEATURES)))
    for i, (cand, ref) in enumerate(zip(candidates, references, strict=True)):
        c, r = stemmed_tokens(cand), stemmed_tokens(ref)
        out[i, 0] = js_divergence(_content_frequencies(c, 1), _content_frequencies(r, 1))
        out[i, 1] = js_divergence(_content_frequencies(c, 2), _content_frequencies(r, 2))
        out[i, 2] = rouge_recall(c, r, 1)
        out[i, 4] = rouge_recall(c, r, 2)
    for column, n in ((3, 1), (5, 2)):
        out[:, column] = rouge_we(candidates, references, config, n=n)["ROUGE-WE-3 Recall"]
    return out


@cache
def load_models(folder: str) -> tuple[object, object]:
    """The authors' trained Pyramid and Responsiveness regressors from ``folder`` (the one file
    whose name contains ``pyr`` and the one containing ``resp``)."""
    directory = Path(folder)
    if not directory.is_dir():
        raise MissingCheckpointError(
            f"S3's trained models {folder!r} not found. They are not on any package registry: "
            f"copy the folder models/en/ of the authors' repository (UKPLab, emnlp-ws-2017-s3) "
            f"and pass it on the CLI as `--model {MODELS}=DIR` (ScoringConfig.models)"
        )
    models = []
    for tag in ("pyr", "resp"):
        files = [f for f in sorted(directory.iterdir()) if tag in f.name]
        if len(files) != 1:
            raise ValueError(f"S3 models: expected one file named with {tag!r} in {folder}")
        with files[0].open("rb") as handle:
            models.append(pickle.load(handle, encoding="latin1"))  # the user's own files
    return models[0], models[1]


@register(
    "s3",
    ("S3-Pyramid", "S3-Responsiveness"),
    family="model",
    reference=True,
    requires=("nltk",),
)
def s3(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """S3-Pyramid and S3-Responsiveness of each candidate against its reference: the authors'
    regressors applied to :func:`features` (Peyrard et al., 2017; see the module docstring)."""
    pyramid, responsiveness = load_models(config.models.get(MODELS, MODELS))
    x = features(texts.candidates, texts.references, config)
    return {
        "S3-Pyramid": np.asarray(pyramid.predict(x), dtype=np.float64),
        "S3-Responsiveness": np.asarray(responsiveness.predict(x), dtype=np.float64),
    }
