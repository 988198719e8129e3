"""The paper's string-based metrics (symbol § in Tab. 1 of Chhun et al., 2022).

Importing this package registers the scorers: :mod:`~scoring.strings.rouge` (ROUGE-1.5.5
family), :mod:`~scoring.strings.sacre` (BLEU, chrF), :mod:`~scoring.strings.meteor`,
:mod:`~scoring.strings.cider` and :mod:`~scoring.strings.datastats` (the ten SummEval data
statistics). Each takes :class:`~scoring.registry.Texts` and a
:class:`~scoring.registry.ScoringConfig` whose ``hanna_compat`` reproduces the published HANNA
values (see each module).
"""

from scoring.strings import cider, datastats, meteor, rouge, sacre

__all__ = ["cider", "datastats", "meteor", "rouge", "sacre"]
