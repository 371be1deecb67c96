"""A tiny trained GPT for the generate and serve tests: examples/gpt.psk with V = 11 (the
characters of TEXT), D = 8, T = 16, trained 30 steps on TEXT, its weights recording the
vocabulary (presk train --weights-out)."""
import atexit
import os
import shutil
import subprocess
import tempfile

TEXT = "the cat sat on the mat. " * 60
BINDINGS = ["--const", "V=11", "--const", "D=8", "--dim", "T=16"]


def run(presk, *args, check=True):
    result = subprocess.run([presk, *args], capture_output=True, text=True, timeout=240)
    if check and result.returncode != 0:
        raise AssertionError(f"presk {' '.join(args)} exited {result.returncode}:\n{result.stderr}")
    return result


def build(presk, source_dir):
    """Returns (folder, program, weights); the folder is removed when the test process exits."""
    folder = tempfile.mkdtemp(prefix="presk_serve_")
    atexit.register(shutil.rmtree, folder, True)
    text = os.path.join(folder, "text.txt")
    with open(text, "w") as f:
        f.write(TEXT)
    run(presk, "data", "prepare", "--text", text, "--window", "16", "--out-dir", os.path.join(folder, "data"))
    program = os.path.join(source_dir, "examples", "gpt.psk")
    weights = os.path.join(folder, "weights.safetensors")
    run(presk, "train", program, "--entry", "loss", *BINDINGS, "--data", os.path.join(folder, "data", "train.safetensors"),
        "--steps", "30", "--batch", "4", "--lr", "1e-2", "--seed", "0", "--realize", "f32",
        "--out", os.path.join(folder, "ckpt.safetensors"), "--weights-out", weights)
    return folder, program, weights
