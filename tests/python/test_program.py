"""presk.Program: loading (a path, source text, consts and dims), running exactly and natively
on numpy arrays, and the checks of dtypes, shapes and argument counts (E1350–E1353)."""
import numpy as np
import pytest

import presk
from conftest import MLP, SMALL, tiny_weights

X = np.array([[0.5, -1.0, 2.0, 0.25], [1.5, 0.0, -0.75, 3.0]])


def logits_by_numpy(weights, x):
    hidden = np.maximum(x @ weights["hidden.w"] + weights["hidden.b"], 0)
    return hidden @ weights["out"] + weights["bias"]


def test_load_describes_entries_and_parameters(mlp):
    assert sorted(mlp.entries) == ["logits", "loss"]
    arguments = mlp.entries["logits"]["arguments"]
    assert [(a["name"], a["type"]) for a in arguments] == [("x", "R[2, 4]")]
    assert mlp.entries["loss"]["arguments"][1]["kind"] == "Z"
    assert mlp.entries["logits"]["results"][0]["shape"] == (2, 3)
    assert {p["path"] for p in mlp.params} == {"hidden.w", "hidden.b", "out", "bias"}


def test_load_source_text():
    program = presk.Program(source="dim N\nentry twice(x : R[N]) -> R[N] = x + x\n", dims={"N": 3})
    result = program.run("twice", np.array([1.0, 2.5, -4.0]), bits=64)
    np.testing.assert_array_equal(result.value, [2.0, 5.0, -8.0])
    assert presk.load("dim N\nentry twice(x : R[N]) -> R[N] = x + x\n", dims={"N": 1}).entries["twice"]


def test_exact_run_matches_numpy_and_carries_decimals(mlp):
    expected = logits_by_numpy(tiny_weights(mlp), X)
    exact = mlp.run("logits", X, bits=200)
    assert isinstance(exact, presk.Exact) and exact.bits == 200
    assert exact.value.dtype == np.float64 and exact.value.shape == (2, 3)
    np.testing.assert_allclose(exact.value, expected, rtol=1e-13, atol=1e-15)
    assert exact.decimals.shape == (2, 3) and isinstance(exact.decimals[0, 0], str)
    np.testing.assert_allclose(exact.decimals.astype(float), exact.value, rtol=1e-15)
    assert len(exact.decimals[0, 0].lstrip("-").split("e")[0]) > 40  # 200 bits carry ~60 digits


def test_exact_run_is_the_same_on_every_run(mlp):
    first, second = mlp.run("logits", X, bits=300), mlp.run("logits", X, bits=300)
    assert list(first.decimals.flat) == list(second.decimals.flat)


def test_native_runs_in_the_realized_dtype(mlp):
    exact = mlp.run("logits", X).value
    f64 = mlp.run("logits", X, realize="f64")
    f32 = mlp.run("logits", X.astype(np.float32), realize="f32")
    bf16 = mlp.run("logits", X, realize={"format": 1, "default": "bf16"})
    assert f64.dtype == np.float64 and f32.dtype == np.float32 and bf16.dtype == np.float32
    np.testing.assert_allclose(f64, exact, rtol=1e-14)
    np.testing.assert_allclose(f32, exact, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bf16, exact, rtol=0.1, atol=0.1)
    assert not np.array_equal(f32.astype(np.float64), f64)  # f32 is really rounded


def test_integer_arguments_and_scalar_results(mlp):
    loss = mlp.run("loss", X, np.array([0, 2], dtype=np.int64), bits=128)
    assert loss.value.shape == () and np.isfinite(loss.value)
    native = mlp.run("loss", X, np.array([0, 2]), realize="f64")
    np.testing.assert_allclose(native, loss.value, rtol=1e-14)


def code_of(call):
    with pytest.raises(presk.Error) as raised:
        call()
    assert raised.value.message and str(raised.value).count(raised.value.code) >= 1
    return raised.value.code


def test_dtypes_shapes_and_counts_are_checked(mlp):
    labels = np.array([0, 1])
    assert code_of(lambda: mlp.run("logits", X.astype(np.int64), bits=64)) == "E1351"
    assert code_of(lambda: mlp.run("logits", X.astype(np.float16), realize="f32")) == "E1351"
    assert code_of(lambda: mlp.run("loss", X, labels.astype(np.float64), bits=64)) == "E1351"
    assert code_of(lambda: mlp.run("logits", X.T, bits=64)) == "E1352"
    assert code_of(lambda: mlp.run("logits", X[0], realize="f32")) == "E1352"
    assert code_of(lambda: mlp.run("logits", X, X, bits=64)) == "E1353"
    assert code_of(lambda: mlp.run("logits", bits=64)) == "E1353"
    assert code_of(lambda: mlp.run("logits", X, bits=64, realize="f32")) == "E1350"


def test_presk_errors_raise_presk_error_with_their_code(mlp, tmp_path):
    assert code_of(lambda: presk.Program(tmp_path / "missing.psk")) == "E0003"
    assert code_of(lambda: mlp.run("nothing", X, bits=64)) == "E0330"  # no such entry
    assert code_of(lambda: mlp.run("logits", X, realize="f16")).startswith("E06")
    with pytest.raises(presk.Error) as raised:
        presk.Program(source="entry broken(x : R[2]) -> R[2] = x +\n")
    assert raised.value.code.startswith("E0") and raised.value.codes[0] == raised.value.code
    with pytest.raises(TypeError):
        mlp.run("logits", X, realize=3)


def test_non_contiguous_and_list_inputs(mlp):
    exact = mlp.run("logits", X, bits=128).value
    np.testing.assert_array_equal(mlp.run("logits", np.asfortranarray(X), bits=128).value, exact)
    np.testing.assert_array_equal(mlp.run("logits", X.tolist(), bits=128).value, exact)


def test_save_tensors_refuses_other_dtypes(tmp_path):
    assert code_of(lambda: presk.save_tensors(tmp_path / "w.safetensors", {"a": np.zeros(2, np.int8)})) == "E1351"


def test_weights_from_seed_are_the_commands(synthesized):
    again = presk.Program(MLP, consts=SMALL, dims={"B": 2}, seed=3)
    other = presk.Program(MLP, consts=SMALL, dims={"B": 2}, seed=4)
    a = synthesized.run("logits", X, realize="f64")
    np.testing.assert_array_equal(a, again.run("logits", X, realize="f64"))
    assert not np.array_equal(a, other.run("logits", X, realize="f64"))
