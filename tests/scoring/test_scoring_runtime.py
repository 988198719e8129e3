"""The shared model runtime: device choice, checkpoint loading and its errors, length batches."""

from __future__ import annotations

import numpy as np
import pytest
from hanna_stats.scoring.models._runtime import (
    MissingCheckpointError,
    length_batches,
    load_checkpoint,
    resolve_device,
    seeded_generator,
)
from hanna_stats.scoring.registry import ScoringConfig
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> str:
    """A 2-layer BERT with a WordPiece tokenizer trained here on a few sentences."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers

    corpus = ["the cat sat on the mat", "a dog ran in the park", "stories about cats and dogs"]
    wp = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    wp.normalizer = normalizers.BertNormalizer(lowercase=True)
    wp.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    trainer = trainers.WordPieceTrainer(vocab_size=80, special_tokens=specials)
    wp.train_from_iterator(corpus, trainer)
    cls, sep = wp.token_to_id("[CLS]"), wp.token_to_id("[SEP]")
    wp.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=wp,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )
    config = transformers.BertConfig(
        vocab_size=tok.vocab_size,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
    )
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tiny-bert")
    transformers.BertModel(config).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def test_resolve_device_prefers_config_then_cuda_then_cpu():
    assert resolve_device(ScoringConfig(device="cpu")) == torch.device("cpu")
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device(ScoringConfig()).type == expected


def test_load_checkpoint_from_override_is_eval_cpu_float32_and_cached(tiny_bert):
    config = ScoringConfig(device="cpu", models={"bert-base-uncased": tiny_bert})
    tokenizer, model = load_checkpoint("bert-base-uncased", config, "encoder")
    assert not model.training
    assert next(model.parameters()).device == torch.device("cpu")
    assert next(model.parameters()).dtype == torch.float32  # no half precision off CUDA
    assert tokenizer("the cat")["input_ids"][0] == tokenizer.cls_token_id
    assert load_checkpoint("bert-base-uncased", config, "encoder")[1] is model
    # a masked-LM head on the same weights is a different model object (its own cache entry)
    assert load_checkpoint("bert-base-uncased", config, "masked-lm")[1] is not model


def test_missing_checkpoint_names_it_and_the_three_ways(tmp_path):
    config = ScoringConfig(device="cpu", models={"roberta-large": str(tmp_path / "absent")})
    with pytest.raises(MissingCheckpointError) as err:
        load_checkpoint("roberta-large", config, "encoder")
    message = str(err.value)
    assert isinstance(err.value, ValueError)
    for needle in (
        "roberta-large",
        str(tmp_path / "absent"),
        "HF_HOME",
        "local directory",
        "--model roberta-large=PATH",
    ):
        assert needle in message


def test_hub_name_is_not_downloaded_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", "/nonexistent-hf-home")
    with pytest.raises(MissingCheckpointError, match="no-such-org/no-such-model"):
        load_checkpoint("no-such-org/no-such-model", ScoringConfig(device="cpu"), "seq2seq")


def test_unknown_head_is_a_value_error(tiny_bert):
    with pytest.raises(ValueError, match="head must be one of"):
        load_checkpoint(tiny_bert, ScoringConfig(device="cpu"), "vision")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 500), max_size=50), st.integers(1, 8))
def test_length_batches_partition_by_sorted_length(lengths, batch_size):
    batches = length_batches(lengths, batch_size)
    flat = np.concatenate(batches) if batches else np.array([], dtype=np.int64)
    assert sorted(flat.tolist()) == list(range(len(lengths)))  # a permutation
    assert all(1 <= len(b) <= batch_size for b in batches)
    assert all(len(b) == batch_size for b in batches[:-1])  # only the last one is short
    ordered = np.asarray(lengths)[flat] if len(lengths) else flat
    assert np.all(np.diff(ordered) <= 0)  # longest first, so every batch is similar lengths


def test_length_batches_rejects_zero_batch():
    with pytest.raises(ValueError, match="batch_size"):
        length_batches([1, 2], 0)


def test_seeded_generator_repeats():
    a = torch.rand(5, generator=seeded_generator(3))
    b = torch.rand(5, generator=seeded_generator(3))
    assert torch.equal(a, b)
    assert not torch.equal(a, torch.rand(5, generator=seeded_generator(4)))
