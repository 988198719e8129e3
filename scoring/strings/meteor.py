"""METEOR 1.5, computed by the original Java implementation as SummEval and HANNA ran it."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
from importlib import resources

import numpy as np
from hanna_stats.scoring.registry import ScoringConfig, Texts, register

from hanna_stats.progress import progress

_SPACES = re.compile(r"\s+")


def meteor_jar() -> str:
    """Path of ``meteor-1.5.jar`` as shipped by pycocoevalcap (with ``data/paraphrase-en.gz``)."""
    return str(resources.files("pycocoevalcap") / "meteor" / "meteor-1.5.jar")


def _segment(text: str) -> str:
    """A text as one METEOR input segment: no ``|||`` field separator, whitespace collapsed."""
    return _SPACES.sub(" ", text.replace("|||", "")).strip()


@register(
    "meteor",
    ("METEOR",),
    family="string",
    reference=True,
    requires=("pycocoevalcap",),
    multi_reference="METEOR 1.5: the best reference's statistics",
)
def meteor(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """Segment-level METEOR 1.5 of each candidate against its reference.

    ``METEOR = (1 - Pen) * F_mean`` with ``F_mean = P R / (alpha P + (1 - alpha) R)`` over
    weighted unigram matches (exact, Snowball stem, WordNet synonym and paraphrase modules,
    weights 1.0, 0.6, 0.8, 0.6; content and function words weighted by delta) and the
    fragmentation penalty ``Pen = gamma (chunks / matches)^beta``, with the English
    parameters of METEOR 1.5 (alpha 0.85, beta 0.20, gamma 0.60, delta 0.75).

    The score comes from the original Java program (``meteor-1.5.jar -stdio -l en -norm``,
    the jar, WordNet synonyms and paraphrase table that pycocoevalcap ships), driven exactly as
    SummEval's ``MeteorMetric``: one ``SCORE`` line per pair, then one ``EVAL`` line with all
    statistics. Nothing is downloaded, so all four matching modules work offline. It needs
    ``java`` on the PATH and is the slowest string metric by far (minutes for HANNA's 1,056
    stories: the aligner's search grows quickly with segment length). ``hanna_compat``
    changes nothing.

    Several references per item go on one ``SCORE`` line (``SCORE ||| ref 1 ||| ... ||| ref m
    ||| candidate``, as pycocoevalcap's ``Meteor`` writes them); METEOR 1.5 aligns the
    candidate with each and keeps the statistics of the best-scoring one.

    Raises
    ------
    FileNotFoundError
        If ``java`` is not on the PATH.

    References
    ----------
    Denkowski and Lavie (2014), Meteor Universal: Language Specific Translation Evaluation for
    Any Target Language, WMT. Banerjee and Lavie (2005), ACL Workshop. Chhun et al. (2022),
    COLING, Tab. 1.
    """
    if not len(texts):
        return {"METEOR": np.empty(0)}
    java = shutil.which("java")
    if java is None:
        raise FileNotFoundError("METEOR needs Java (a `java` program on the PATH)")
    jar = meteor_jar()
    command = [java, "-jar", "-Xmx2G", jar, "-", "-", "-stdio", "-l", "en", "-norm"]
    env = dict(os.environ, LC_ALL="C")
    with subprocess.Popen(
        command,
        cwd=os.path.dirname(jar),
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        stats = []
        refs, groups, _ = texts.reference_groups()
        pairs = zip(itertools.pairwise(groups.tolist()), texts.candidates, strict=True)
        for (a, b), cand in progress(pairs, desc="METEOR", total=len(texts)):
            fields = [*map(_segment, refs[a:b]), _segment(cand)]
            proc.stdin.write("SCORE ||| " + " ||| ".join(fields) + "\n")
            proc.stdin.flush()
            stats.append(proc.stdout.readline().strip())
        proc.stdin.write("EVAL ||| " + " ||| ".join(stats) + "\n")
        proc.stdin.flush()
        scores = [float(proc.stdout.readline()) for _ in stats]
        proc.stdin.close()
    return {"METEOR": np.array(scores, dtype=np.float64)}
