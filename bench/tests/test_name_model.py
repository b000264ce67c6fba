"""The fitting of the learned name decision (`bench.citationr.name_model`): the trainer on a toy problem whose
optimum is computed independently, the CLI's refusal to measure what it trains on, and the model file it writes,
read back by the library (`NameModel.from_json`)."""

from __future__ import annotations

import json
import math

import pytest

from bench.citationr import name_model
from bench.citationr.name_model import ALL_SOURCES, fit, model_json
from extractors.reviews.mentions.learned import LEARNED_SOURCES, NameModel

pytestmark = pytest.mark.unit


def test_the_trainer_fits_a_toy_problem():
    """Feature "a" on 20 positives, "b" on 20 negatives, both with "bias": by symmetry the bias is 0 and the L2
    optimum of w_a = -w_b solves 20 (1 - sigmoid(w)) = l2 w, found here by bisection, independently of the fit."""
    weights = fit([["bias", "a"], ["bias", "b"]] * 20, [True, False] * 20, l2=1.0)
    low, high = 0.0, 20.0
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if 20 * (1 - 1 / (1 + math.exp(-middle))) > middle else (low, middle)
    assert weights["a"] == pytest.approx(low, abs=1e-3) and weights["b"] == pytest.approx(-low, abs=1e-3)
    assert weights["bias"] == pytest.approx(0.0, abs=1e-3)


def test_the_trainer_refuses_to_measure_what_it_trains_on_and_groups_venues(capsys):
    with pytest.raises(SystemExit) as refused:  # before any review is read
        name_model.main(["--sample", "test", "--sample", "disapere_test", "--measure", "disapere_test"])
    assert refused.value.code == 2 and "both trained on and measured" in capsys.readouterr().err
    venues = name_model._by_venue(["test", "disapere_read", "neurips_check", "disapere_test"])
    assert venues == {"NeurIPS": ["test", "neurips_check"], "ICLR (DISAPERE)": ["disapere_read", "disapere_test"]}


def test_the_model_file_by_hand_and_read_back_by_the_library():
    """Weights rounded to four places, those under 1e-3 left out, sorted keys, no spaces; `sources` only for a
    model that decides more than the names."""
    model = NameModel({"bias": -1.0, "w=missing": 2.123456, "tiny": 0.0004}, 0.3)
    assert model_json(model) == '{"threshold":0.3,"weights":{"bias":-1.0,"w=missing":2.1235}}'
    assert NameModel.from_json(model_json(model)) == NameModel({"bias": -1.0, "w=missing": 2.1235}, 0.3)
    every = NameModel({"bias": -1.0}, 0.5, ALL_SOURCES)
    assert json.loads(model_json(every))["sources"] == list(ALL_SOURCES)
    assert NameModel.from_json(model_json(every)).sources == ALL_SOURCES
    assert set(LEARNED_SOURCES) < set(ALL_SOURCES)
