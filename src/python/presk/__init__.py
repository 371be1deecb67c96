"""presk from Python: load a program, run its entries exactly or natively on numpy arrays, and
measure, bound and choose their precision (calibrate, check, solve, explain, quantize).

    import numpy as np, presk
    mlp = presk.Program("examples/mlp.psk", dims={"B": 2})
    print(mlp.run("logits", np.ones((2, 16)), realize="f32"))

docs/python.md is the guide and the reference of every function.
"""
from presk._presk import Error, calls_in_flight
from presk.program import Exact, Program, Session, import_onnx, load, save_tensors
from presk.precision import Envelope, Solution, explain

__all__ = ["Error", "Exact", "Envelope", "Program", "Session", "Solution", "calls_in_flight", "explain", "import_onnx", "load", "save_tensors"]
