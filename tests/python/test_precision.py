"""The precision tools from Python: calibrate (an Envelope, saved and reloaded), check, solve
at 1e-3 (the realization and the report), explain and quantize; their errors are presk.Error."""
import json

import numpy as np
import pytest

import presk

X = np.array([[0.5, -1.0, 2.0, 0.25], [1.5, 0.0, -0.75, 3.0]])


@pytest.fixture
def envelope(synthesized):
    return synthesized.calibrate("logits", samples=4, bits=128)


def test_calibrate_returns_an_envelope_that_saves(synthesized, envelope, tmp_path):
    assert envelope.data["entry"] == "logits" and envelope.data["samples"] == 4
    assert len(envelope.sites) > 0 and all(site["max_abs"] >= 0 for site in envelope.sites)
    assert envelope.report["bits"] == 128
    saved = envelope.save(tmp_path / "logits.envelope.json")
    assert presk.Envelope.load(saved).data == envelope.data
    again = synthesized.calibrate("logits", samples=4, bits=128, out=tmp_path / "again.json")
    strip = lambda data: {k: v for k, v in data.items() if k != "date"}
    assert strip(again.data) == strip(envelope.data)  # the same bits on every run, but the date


def test_check_bounds_and_measures(synthesized, envelope):
    report = synthesized.check(envelope, "f32", model="all", measure=True)
    models = {bound["model"]: bound for bound in report["bounds"]}
    assert set(models) >= {"k", "cond"} and models["cond"]["absolute"] > 0
    assert 0 < report["measured"]["absolute"] <= models["k"]["absolute"]
    bf16 = synthesized.check(envelope.path, {"format": 1, "default": "bf16"})
    assert bf16["bounds"][0]["absolute"] > models["cond"]["absolute"]


def test_solve_explain_and_run_the_realization(synthesized, envelope, tmp_path):
    solution = synthesized.solve(envelope, budget=1e-3)
    assert solution.inside and solution.realization["format"] == 1
    assert solution.report["entry"] == "logits" and "values" in solution.realization["solve"]
    rows = solution.summary()
    assert rows and {"kind", "key", "type"} <= set(rows[0])
    native = synthesized.run("logits", X, realize=solution)
    exact = synthesized.run("logits", X).value
    assert np.max(np.abs(native - exact)) <= 1e-2 * np.max(np.abs(exact))
    explained = presk.explain(solution)
    assert {e["key"] for e in explained} == {row["key"] for row in rows}
    assert all(e["decision"] and isinstance(e["reasons"], list) for e in explained)
    assert presk.explain(solution.realization) == explained
    saved = solution.save(tmp_path / "r.json")
    one = explained[0]["key"]
    assert [e["key"] for e in presk.explain(saved, values=[one])] == [one]
    with pytest.raises(presk.Error) as raised:
        presk.explain(saved, values=["no-such-value"])
    assert raised.value.code == "E1114"


def test_solve_is_the_same_on_every_run(synthesized, envelope):
    first, second = synthesized.solve(envelope, budget=1e-3), synthesized.solve(envelope, budget=1e-3)
    strip = lambda r: json.dumps({k: v for k, v in r.items() if k != "solve"}, sort_keys=True)
    assert strip(first.realization) == strip(second.realization)


def test_quantize_lists_parameters_and_splits_a_gap(synthesized):
    rows = synthesized.quantize()
    by_path = {row["path"]: row for row in rows}
    assert by_path["hidden.w"]["integer"] and by_path["hidden.w"]["bytes"]["f64"] == 4 * 8 * 8
    assert not by_path["bias"]["integer"]
    split = synthesized.quantize("logits", realize="bf16", samples=2)
    assert split["total"]["absolute"] > 0 and split["representation"]["absolute"] > 0


def test_command_errors_are_coded(synthesized, envelope):
    with pytest.raises(presk.Error) as raised:
        synthesized.calibrate("logits", samples=2, bits=10)
    assert raised.value.code == "E1354" and "--bits" in raised.value.message
    with pytest.raises(presk.Error) as raised:
        synthesized.solve(envelope)  # no budget given, and the entry has no precision clause
    assert raised.value.code.startswith("E11")
    with pytest.raises(TypeError):
        synthesized.check(42, "f32")
