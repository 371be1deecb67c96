"""Shared fixtures of the Python module's tests: the examples folder, and examples/mlp.psk made
small (In=4, W=8, K=3, batch B=2) with tiny weights written by the test."""
import os

import numpy as np
import pytest

import presk

SOURCE_DIR = os.environ.get("PRESK_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
MLP = os.path.join(SOURCE_DIR, "examples", "mlp.psk")
SMALL = {"In": 4, "W": 8, "K": 3}


def tiny_weights(program):
    """Parameter values 0.1·(k mod 7) − 0.3 over each parameter's elements, by path."""
    arrays = {}
    for param in program.params:
        count = int(np.prod(param["shape"], dtype=np.int64))
        arrays[param["path"]] = (0.1 * (np.arange(count) % 7) - 0.3).reshape(param["shape"])
    return arrays


@pytest.fixture
def mlp(tmp_path):
    """examples/mlp.psk, small, with tiny weights from a safetensors file the test writes."""
    shaped = presk.Program(MLP, consts=SMALL, dims={"B": 2})
    weights = tmp_path / "weights.safetensors"
    presk.save_tensors(weights, tiny_weights(shaped))
    return presk.Program(MLP, consts=SMALL, dims={"B": 2}, weights=weights)


@pytest.fixture
def synthesized():
    """examples/mlp.psk, small, its parameters synthesized from seed 3 (as the commands do)."""
    return presk.Program(MLP, consts=SMALL, dims={"B": 2}, seed=3)
