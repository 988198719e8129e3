"""Tiny transformers checkpoints built on the fly, for tests that must not download anything.

The tokenizers are learnt here with the ``tokenizers`` library from :data:`CORPUS` (a few
sentences written for these tests), the models are initialised from a fixed seed, and
everything is saved with ``save_pretrained`` into a directory, so that scorers load them through
the same ``from_pretrained`` path as a real checkpoint (``ScoringConfig.models = {name: path}``).

* :func:`build_bert` -- a BERT WordPiece tokenizer and ``BertForMaskedLM`` / ``BertModel`` /
  ``BertForQuestionAnswering`` weights (InfoLM, BLANC, SummaQA). The masked LM is trained for a
  few hundred steps on :data:`CORPUS` (seconds), so that it fills masks with sensible words and
  metrics built on its predictions (BLANC) are not constant; the encoder and the QA model share
  its trained encoder (the QA head is random).
* :func:`build_bart` -- a byte-level BPE tokenizer and ``BartForConditionalGeneration``
  (BARTScore).

The session fixtures ``tiny_bert`` and ``tiny_bart`` (import them into a test module) build each
once per test process in a temporary directory. ``benchmarks/`` calls the builders with
MiniLM-sized dimensions.
"""

from __future__ import annotations

from pathlib import Path

import pytest

CORPUS = (
    "The old lighthouse keeper climbed the stairs every night to light the lamp.",
    "A dragon slept under the mountain, dreaming of gold and of the sea.",
    "She opened the letter and found a map of the forgotten city.",
    "When the robot learned to laugh, the children taught it a thousand jokes.",
    "The ship sailed north until the stars themselves seemed to freeze.",
    "He promised his mother that he would come home before the winter.",
    "Nobody in the village believed the boy who talked to the wind.",
    "The detective noticed that the clock had stopped at midnight.",
    "In the year 3000, people traded memories instead of money.",
    "The cat watched the rain and decided that today was not a day for adventures.",
    "Writing prompt: you wake up and everyone has forgotten your name.",
    "A small girl found a door in the garden that led to another world.",
    "The king asked the wizard for one more year, and the wizard smiled.",
    "They built a house on the moon and planted a tree in its dust.",
    "Every morning the baker left a loaf of bread for the stranger at the corner.",
    "The soldier wrote a story about peace while the guns were silent.",
)


def _bert_tokenizer():
    """A lower-casing WordPiece tokenizer whose vocabulary is learnt from :data:`CORPUS`.

    The vocabulary is every word of the corpus (BERT normalisation and pre-tokenisation from the
    ``tokenizers`` library) plus every letter, digit and punctuation mark, alone and as a
    ``##`` continuation, so that any English text tokenises without ``[UNK]``. It is built
    directly rather than with ``WordPieceTrainer``, whose learnt vocabulary varies between runs.
    """
    import string

    from tokenizers import normalizers, pre_tokenizers
    from transformers import BertTokenizer

    normalizer = normalizers.BertNormalizer(lowercase=True)
    splitter = pre_tokenizers.BertPreTokenizer()
    words = {
        word
        for text in CORPUS
        for word, _ in splitter.pre_tokenize_str(normalizer.normalize_str(text))
    }
    chars = sorted(set(string.ascii_lowercase + string.digits + string.punctuation))
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars, *(f"##{c}" for c in chars)]
    vocab += sorted(words - set(chars))
    return BertTokenizer(vocab={token: i for i, token in enumerate(vocab)})


def _bart_tokenizer():
    """A byte-level BPE tokenizer trained on :data:`CORPUS` with BART's special tokens."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import BartTokenizer

    raw = ByteLevelBPETokenizer()
    raw.train_from_iterator(
        CORPUS, vocab_size=400, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    )
    return BartTokenizer(vocab=raw.get_vocab(), merges=_bpe_merges(raw._tokenizer.model))


def _bpe_merges(model) -> list[tuple[str, str]]:
    """The merge list of a trained ``tokenizers`` BPE model (via its JSON serialisation)."""
    import json

    merges = json.loads(model.__getstate__())["merges"]
    return [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in merges]


def _train_mlm(model, tokenizer, steps: int, seed: int) -> None:
    """Masked-LM training on :data:`CORPUS` (30% of ordinary tokens masked, AdamW 3e-3)."""
    import torch

    batch = tokenizer(list(CORPUS), padding=True, return_tensors="pt")
    ids = batch["input_ids"]
    special = torch.isin(ids, torch.tensor(tokenizer.all_special_ids))
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(steps):
        masked = (torch.rand(ids.shape, generator=generator) < 0.3) & ~special
        loss = model(
            input_ids=ids.masked_fill(masked, tokenizer.mask_token_id),
            attention_mask=batch["attention_mask"],
            labels=ids.masked_fill(~masked, -100),
        ).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()


def build_bert(
    directory: Path,
    *,
    hidden: int = 32,
    layers: int = 2,
    heads: int = 2,
    mlm_steps: int = 300,
    seed: int = 0,
) -> dict[str, Path]:
    """Save a tiny BERT into ``directory``: one checkpoint per head, sharing one tokenizer.

    Parameters
    ----------
    directory : Path
        Created if missing; receives ``mlm/``, ``encoder/`` and ``qa/``.
    hidden, layers, heads : int
        Model dimensions (MiniLM-L6 is hidden=384, layers=6, heads=12).
    mlm_steps : int
        Masked-LM training steps on :data:`CORPUS` (0 keeps the random initialisation).
    seed : int
        torch seed of the random initialisation and of the training masks.

    Returns
    -------
    dict
        ``{"mlm": path, "encoder": path, "qa": path}``.
    """
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertForQuestionAnswering, BertModel

    tokenizer = _bert_tokenizer()
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=4 * hidden,
        max_position_embeddings=512,
    )
    torch.manual_seed(seed)
    mlm = BertForMaskedLM(config)
    _train_mlm(mlm, tokenizer, mlm_steps, seed)
    torch.manual_seed(seed)
    encoder = BertModel(config)
    encoder.load_state_dict(mlm.bert.state_dict(), strict=False)  # the pooler stays random
    qa = BertForQuestionAnswering(config)
    qa.bert.load_state_dict(mlm.bert.state_dict())
    paths = {}
    for key, model in (("mlm", mlm), ("encoder", encoder), ("qa", qa)):
        paths[key] = Path(directory) / key
        model.save_pretrained(paths[key])
        tokenizer.save_pretrained(paths[key])
    return paths


def build_bart(
    directory: Path, *, hidden: int = 32, layers: int = 2, heads: int = 2, seed: int = 0
) -> Path:
    """Save a tiny ``BartForConditionalGeneration`` and its tokenizer into ``directory``.

    Parameters are as in :func:`build_bert` (``layers`` in both encoder and decoder).
    """
    import torch
    from transformers import BartConfig, BartForConditionalGeneration

    tokenizer = _bart_tokenizer()
    config = BartConfig(
        vocab_size=len(tokenizer),
        d_model=hidden,
        encoder_layers=layers,
        decoder_layers=layers,
        encoder_attention_heads=heads,
        decoder_attention_heads=heads,
        encoder_ffn_dim=4 * hidden,
        decoder_ffn_dim=4 * hidden,
        max_position_embeddings=1024,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.eos_token_id,
        forced_bos_token_id=tokenizer.bos_token_id,
    )
    torch.manual_seed(seed)
    directory = Path(directory)
    BartForConditionalGeneration(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="session")
def one_torch_thread() -> None:
    """One intra-op torch thread per test process. Under ``pytest -n 2`` on two cores, two
    OpenMP threads per worker oversubscribe the machine and tiny models run some 40 times
    slower (measured: 60 training steps of the tiny BERT, 30 s instead of 0.7 s)."""
    import torch

    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory, one_torch_thread) -> dict[str, Path]:
    """Paths of the tiny BERT checkpoints (see :func:`build_bert`), built once per process."""
    return build_bert(tmp_path_factory.mktemp("tiny_bert"))


@pytest.fixture(scope="session")
def tiny_bart(tmp_path_factory: pytest.TempPathFactory, one_torch_thread) -> Path:
    """Path of the tiny BART checkpoint (see :func:`build_bart`), built once per process."""
    return build_bart(tmp_path_factory.mktemp("tiny_bart"))
