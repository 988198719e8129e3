"""SUPERT (Gao et al., 2020): a summary against a pseudo-reference of the source's lead sentences.

Gao, Zhao and Eger. "SUPERT: Towards New Frontiers in Unsupervised Evaluation Metrics for
Multi-Document Summarization." ACL 2020. HANNA ran SummEval's ``SupertMetric`` (Fabbri et al.,
2021), the authors' released code with its defaults ``ref_metric="top15"``, ``sim_metric="f1"``:

1. Pseudo-reference: the first :data:`TOP_N` = 15 sentences of the source (the paper's
   position-based selection, its best single-document strategy).
2. Every sentence of the pseudo-reference and of the summary is encoded on its own by SBERT
   ``bert-large-nli-stsb-mean-tokens`` (Reimers and Gurevych, 2019), truncated to
   :data:`MAX_TOKENS` = 128 tokens; the token embeddings are the last hidden layer. Tokens are
   concatenated over sentences, and stopwords and special tokens are dropped.
3. Soft token alignment (the paper's Sec. 5; the released code's ``f1``): with :math:`r_i` the
   pseudo-reference and :math:`s_j` the summary token embeddings,
   :math:`R = \\operatorname{mean}_i \\max_j \\cos(r_i, s_j)`,
   :math:`P = \\operatorname{mean}_j \\max_i \\cos(r_i, s_j)` and SUPERT :math:`= 2PR/(P + R)`.
   (The brief for this module said "word mover's similarity"; the paper also reports a
   word-mover variant, but the code HANNA ran scores this greedy alignment, which the code
   describes as quicker and about as good.)

Variants in HANNA (Appendix B: "PS means we used the Prompt as the Summary, and SS means the
Story as the Summary. The Golden suffix means we used the reference human story as the source
document and the generated story as the summary"):

* SUPERT-PS: source = the story, summary = the prompt (reference-free, embedding).
* SUPERT-SS: source = the prompt, summary = the story (reference-free, embedding).
* SUPERT-Golden: source = the human reference story, summary = the story (reference-based;
  HANNA's header files it under the model-based family, so it is a separate scorer here).

Since the score is symmetric in its two token sets, PS and SS coincide whenever the story has at
most 15 sentences (the published values show this: they are equal for most short stories), and
SUPERT-Golden of the human story itself is 1 exactly then.

Two deliberate differences from SummEval's run, which cannot be reproduced offline anyway: the
sentences are split by :func:`split_sentences` (rule-based, instead of NLTK's Punkt model, whose
data cannot be installed from PyPI), and the stopwords are NLTK's English list
(:data:`ENGLISH_STOP_WORDS`; SummEval called ``stopwords.words()``, the union over all of NLTK's
languages, which drops e.g. "die", "per" or "con" from English texts too).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

import numpy as np
from hanna_stats.scoring.models._embed import encode
from hanna_stats.scoring.models._runtime import load_checkpoint
from hanna_stats.scoring.models.bertscore import greedy_match
from hanna_stats.scoring.registry import ScoringConfig, Texts, register

MODEL = "sentence-transformers/bert-large-nli-stsb-mean-tokens"
TOP_N = 15
MAX_TOKENS = 128
#: NLTK's English stopword list (the ``stopwords`` corpus, 179 words).
ENGLISH_STOP_WORDS = frozenset(
    """i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself
    yourselves he him his himself she she's her hers herself it it's its itself they them their
    theirs themselves what which who whom this that that'll these those am is are was were be been
    being have has had having do does did doing a an the and but if or because as until while of
    at by for with about against between into through during before after above below to from up
    down in out on off over under again further then once here there when where why how all any
    both each few more most other some such no nor not only own same so than too very s t can will
    just don don't should should've now d ll m o re ve y ain aren aren't couldn couldn't didn
    didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't mustn
    mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn
    wouldn't""".split()
)
#: A sentence: up to terminal punctuation (with any closing quotes or brackets) that is followed
#: by whitespace or the end of the text, or up to the end of the text.
_SENTENCE = re.compile(r"\S.*?(?:[.!?…]+[\"'”’»)\]]*(?=\s|$)|$)", re.DOTALL)


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``: each ends at a run of ``.``, ``!``, ``?`` or ``…`` (and any
    closing quotes or brackets) followed by whitespace, or at the end of the text.

    A rule-based stand-in for NLTK's Punkt tokenizer that SUPERT used: it also splits after
    abbreviations such as "Mr.", which Punkt knows.
    """
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


def supert(
    summaries: Sequence[str],
    sources: Sequence[str],
    config: ScoringConfig,
    *,
    model: str = MODEL,
    top_n: int = TOP_N,
    max_tokens: int = MAX_TOKENS,
    stop_words: Collection[str] = ENGLISH_STOP_WORDS,
) -> np.ndarray:
    """SUPERT of each summary against the pseudo-reference of its source (module docstring).

    Parameters
    ----------
    summaries, sources : sequence of str
        Aligned texts.
    config : ScoringConfig
        Device, batch size, checkpoint overrides (``config.models[model]``), progress.
    model : str
        SBERT checkpoint (default ``sentence-transformers/bert-large-nli-stsb-mean-tokens``),
        loaded as a plain transformers encoder.
    top_n : int
        Sentences of the source in the pseudo-reference.
    max_tokens : int
        Tokens each sentence is truncated to, special tokens included.
    stop_words : collection of str
        Tokens (compared lowercased) dropped with the special tokens.

    Returns
    -------
    numpy.ndarray
        float64 scores; NaN where the summary or the pseudo-reference keeps no token.
    """
    tokenizer, _ = load_checkpoint(model, config, "encoder")
    drop = {w.lower() for w in stop_words} | {t.lower() for t in tokenizer.all_special_tokens}
    split = {text: split_sentences(text) for text in {*summaries, *sources}}
    unique = sorted({s for sentences in split.values() for s in sentences})
    encoded = encode(unique, model, config, [-1], "SUPERT", max_tokens)
    kept = {
        s: e.hidden[0][[t.lower() not in drop for t in e.tokens]]
        for s, e in zip(unique, encoded, strict=True)
    }
    width = encoded[0].hidden.shape[-1] if encoded else 0

    def tokens(sentences: list[str]) -> np.ndarray:
        return np.concatenate([np.empty((0, width), np.float32)] + [kept[s] for s in sentences])

    scores = []
    for summary, source in zip(summaries, sources, strict=True):
        s, r = tokens(split[summary]), tokens(split[source][:top_n])
        if len(s) == 0 or len(r) == 0:
            scores.append(np.nan)
            continue
        p, rec = greedy_match(s, r, np.ones(len(s)), np.ones(len(r)))
        scores.append(2 * p * rec / (p + rec) if p + rec > 0 else 0.0)
    return np.array(scores, dtype=np.float64)


@register(
    "supert",
    ("SUPERT-PS", "SUPERT-SS"),
    family="embedding",
    reference=False,
    requires=("torch", "transformers"),
)
def score_supert(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """SUPERT-PS (source = story, summary = prompt) and SUPERT-SS (source = prompt, summary =
    story), see :func:`supert`; the sentences are encoded once for both."""
    both = supert([*texts.prompts, *texts.candidates], [*texts.candidates, *texts.prompts], config)
    return {"SUPERT-PS": both[: len(texts)], "SUPERT-SS": both[len(texts) :]}


@register(
    "supert-golden",
    ("SUPERT-Golden",),
    family="model",
    reference=True,
    requires=("torch", "transformers"),
)
def score_supert_golden(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """SUPERT-Golden: source = the human reference story, summary = the story (:func:`supert`)."""
    return {"SUPERT-Golden": supert(texts.candidates, texts.references, config)}
