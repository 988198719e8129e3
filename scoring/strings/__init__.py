"""The paper's string-based metrics (symbol § in Tab. 1 of Chhun et al., 2022).

Importing this package registers the scorers: :mod:`~hanna_stats.scoring.strings.rouge` (ROUGE-1.5.5
family), :mod:`~hanna_stats.scoring.strings.sacre` (BLEU, chrF),
:mod:`~hanna_stats.scoring.strings.meteor`,
:mod:`~hanna_stats.scoring.strings.cider` and :mod:`~hanna_stats.scoring.strings.datastats` (the
ten SummEval data
statistics). Each takes :class:`~hanna_stats.scoring.registry.Texts` and a
:class:`~hanna_stats.scoring.registry.ScoringConfig` whose ``hanna_compat`` reproduces the
published HANNA
values (see each module).
"""

from hanna_stats.scoring.strings import cider, datastats, meteor, rouge, sacre

__all__ = ["cider", "datastats", "meteor", "rouge", "sacre"]
