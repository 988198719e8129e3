"""One default per word: every public analysis and kernel gives a word of the vocabulary its
``DEFAULTS`` value, or is listed in ``vocabulary.EXCEPTIONS`` with its other default and why."""

import inspect

import hanna_stats.analyses
import hanna_stats.kernels
from hanna_stats.vocabulary import DEFAULTS, EXCEPTIONS

MODULES = {"analyses": hanna_stats.analyses, "kernels": hanna_stats.kernels}


def word_defaults():
    """``{(module.function, parameter): default}`` of every defaulted vocabulary word."""
    found = {}
    for short, module in MODULES.items():
        for name in module.__all__:
            function = getattr(module, name)
            if not inspect.isfunction(inspect.unwrap(function)):
                continue
            for parameter in inspect.signature(function).parameters.values():
                if parameter.name in DEFAULTS and parameter.default is not parameter.empty:
                    found[(f"{short}.{name}", parameter.name)] = parameter.default
    return found


def test_every_default_of_a_word_is_the_vocabulary_s_or_a_listed_exception():
    found = word_defaults()
    assert len(found) > 50  # the walk reaches the functions
    differences = {key: default for key, default in found.items() if default != DEFAULTS[key[1]]}
    unlisted = {key: d for key, d in differences.items() if key not in EXCEPTIONS}
    assert not unlisted, f"defaults that differ from vocabulary.DEFAULTS, unlisted: {unlisted}"
    wrong = {
        key: (found.get(key, "no such default"), default)
        for key, (default, _) in EXCEPTIONS.items()
        if key not in differences or differences[key] != default
    }
    assert not wrong, f"EXCEPTIONS not matching a differing default (found, listed): {wrong}"


def test_every_exception_gives_a_reason():
    for key, (_, reason) in EXCEPTIONS.items():
        assert isinstance(reason, str) and reason.strip(), key
