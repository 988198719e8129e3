"""The MoverScore reference implementation, runnable on today's numpy and transformers.

Used by tests/scoring/test_scoring_embeddings.py and benchmarks/scoring_models.py.
"""

from __future__ import annotations

import numpy as np
import torch


def moverscore_v2(tokenizer, encoder):
    """``word_mover_score`` and ``get_idf_dict`` of the PyPI ``moverscore`` 1.0.3 package
    (``moverscore_v2.py``), run verbatim on a given tokenizer and encoder.

    The module cannot be imported as it is: at import it downloads distilbert to ``cuda:0`` and
    it uses APIs removed since (``np.float``, ``tokenizer.max_len``). We execute its scoring
    functions' source with those two names updated, its module-level model replaced by the given
    one (returning the ``(output, hidden_states, attentions)`` tuple of old transformers), and its
    process pool by a serial one (functions defined by ``exec`` cannot be pickled)."""
    import importlib.util
    import string
    from collections import Counter, defaultdict
    from functools import partial
    from itertools import chain
    from math import log
    from pathlib import Path

    from pyemd import emd, emd_with_flow

    source = Path(importlib.util.find_spec("moverscore_v2").origin).read_text()
    source = source[source.index("def truncate") : source.index("import matplotlib")]
    source = source.replace("tokenizer.max_len", "tokenizer.model_max_length")
    source = source.replace("np.float)", "np.float64)")

    class Model:
        def eval(self):
            return self

        def __call__(self, input_ids, attention_mask):
            out = encoder(input_ids=input_ids, attention_mask=attention_mask,
                          output_hidden_states=True)
            return out.last_hidden_state, out.hidden_states, None

    class SerialPool:
        def __init__(self, n):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def map(self, f, items):
            return list(map(f, items))

    namespace = {
        "np": np, "torch": torch, "string": string, "emd": emd, "emd_with_flow": emd_with_flow,
        "log": log, "chain": chain, "defaultdict": defaultdict, "Counter": Counter,
        "partial": partial, "Pool": SerialPool, "model": Model(), "tokenizer": tokenizer,
    }
    exec(compile(source, "moverscore_v2.py", "exec"), namespace)
    return namespace["word_mover_score"], namespace["get_idf_dict"]
