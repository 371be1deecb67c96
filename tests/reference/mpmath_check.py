#!/usr/bin/env python3
"""An independent check of presk's reference interpreter: a plain Python evaluator of the
conformance examples (mse, layernorm, rmsnorm, softmax, mlp) in mpmath at 100 digits, fed the
same safetensors inputs as `presk run --exact --bits 400`, must agree with it to at least 60
significant digits on every output element.

usage: mpmath_check.py PRESK_BINARY REPOSITORY_ROOT
"""
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

import mpmath
from mpmath import mp, mpf

mp.dps = 100
REQUIRED_DIGITS = 60


def write_safetensors(path, tensors):
    """tensors: name -> (dtype "F64" | "I32", shape, flat values)."""
    header, blobs, offset = {}, [], 0
    for name, (dtype, shape, values) in tensors.items():
        code = "d" if dtype == "F64" else "i"
        blob = struct.pack("<%d%s" % (len(values), code), *values)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def rows(flat, width):
    return [flat[i:i + width] for i in range(0, len(flat), width)]


def mean(values):
    return mpmath.fsum(values) / len(values)


def layernorm(x, g, b):
    out = []
    for row in x:
        mu = mean(row)
        xc = [v - mu for v in row]
        var = mean([v * v for v in xc])
        scale = 1 / mpmath.sqrt(var + mpf("1e-5"))
        out += [xc[k] * scale * g[k] + b[k] for k in range(len(row))]
    return out


def rmsnorm(x, g):
    out = []
    for row in x:
        scale = 1 / mpmath.sqrt(mean([v * v for v in row]) + mpf("1e-6"))
        out += [row[k] * scale * g[k] for k in range(len(row))]
    return out


def log_softmax_row(row):
    m = max(row)
    lse = m + mpmath.log(mpmath.fsum(mpmath.exp(v - m) for v in row))
    return [v - lse for v in row]


def mlp_logits(x, hidden_w, hidden_b, out_w, bias, widths):
    n_in, n_hidden, n_classes = widths
    logits = []
    for row in x:
        h = [max(mpmath.fsum(row[i] * hidden_w[i * n_hidden + j] for i in range(n_in)) + hidden_b[j], 0)
             for j in range(n_hidden)]
        logits.append([mpmath.fsum(h[j] * out_w[j * n_classes + k] for j in range(n_hidden)) + bias[k]
                       for k in range(n_classes)])
    return logits


def normals(rng, count, sigma=1.0):
    return [rng.gauss(0.0, sigma) for _ in range(count)]


def cases(rng):
    """(example, entry, dims, params, data, expected flat outputs as a function of mpf inputs)."""
    T, D, V, B = 3, 32, 16, 3
    p, t = normals(rng, 6), normals(rng, 6)
    yield ("mse.psk", "mse", {"N": 6}, {}, {"prediction": p, "target": t},
           lambda: [mean([(mpf(a) - mpf(b)) ** 2 for a, b in zip(p, t)])])
    x, g, b = normals(rng, T * D), normals(rng, D), normals(rng, D)
    to_mpf = lambda values: [mpf(v) for v in values]
    yield ("layernorm.psk", "normalize", {"T": T}, {"g": g, "b": b}, {"x": x},
           lambda: layernorm(rows(to_mpf(x), D), to_mpf(g), to_mpf(b)))
    yield ("rmsnorm.psk", "normalize", {"T": T}, {"g": g}, {"x": x},
           lambda: rmsnorm(rows(to_mpf(x), D), to_mpf(g)))
    s = normals(rng, T * V, 3.0)
    softmax = lambda: [mpmath.exp(v) for row in rows(to_mpf(s), V) for v in log_softmax_row(row)]
    yield ("softmax.psk", "probabilities", {"T": T}, {}, {"x": s}, softmax)
    yield ("softmax.psk", "by_hand", {"T": T}, {}, {"x": s}, softmax)
    yield ("softmax.psk", "log_probabilities", {"T": T}, {}, {"x": s},
           lambda: [v for row in rows(to_mpf(s), V) for v in log_softmax_row(row)])
    widths = (16, 32, 10)
    params = {"hidden.w": normals(rng, 16 * 32, 0.3), "hidden.b": normals(rng, 32, 0.1),
              "out": normals(rng, 32 * 10, 0.3), "bias": normals(rng, 10, 0.1)}
    xm, labels = normals(rng, B * 16), [rng.randrange(10) for _ in range(B)]
    logits = lambda: mlp_logits(rows(to_mpf(xm), 16), *[to_mpf(params[k]) for k in
                                ("hidden.w", "hidden.b", "out", "bias")], widths)
    yield ("mlp.psk", "logits", {"B": B}, params, {"x": xm}, lambda: [v for row in logits() for v in row])
    yield ("mlp.psk", "loss", {"B": B}, params, {"x": xm, "labels": labels},
           lambda: [-mpmath.fsum(log_softmax_row(row)[labels[i]] for i, row in enumerate(logits())) / B])


def run_presk(binary, root, example, entry, dims, weights, data):
    command = [binary, "run", os.path.join(root, "examples", example), "--entry", entry,
               "--exact", "--bits", "400", "--json", "--threads", "2", "--data", data]
    for name, value in dims.items():
        command += ["--dim", "%s=%d" % (name, value)]
    if weights:
        command += ["--weights", weights]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit("presk failed: %s\n%s" % (" ".join(command), result.stderr))
    return [mpf(v) for v in json.loads(result.stdout)["outputs"][0]["values"]]


def agreement_digits(got, want):
    scale = max(abs(w) for w in want)
    worst = mpf("inf")
    for g, w in zip(got, want):
        error = abs(g - w)
        if error == 0:
            continue
        worst = min(worst, -mpmath.log10(error / max(abs(w), scale * mpf("1e-3"))))
    return worst


def shapes(example, dims):
    T, B = dims.get("T", 0), dims.get("B", 0)
    return {"x": {"layernorm.psk": [T, 32], "rmsnorm.psk": [T, 32], "softmax.psk": [T, 16],
                  "mlp.psk": [B, 16]}.get(example),
            "hidden.w": [16, 32], "out": [32, 10]}


def main():
    binary, root = sys.argv[1], sys.argv[2]
    rng = random.Random(20240611)
    failures = 0
    with tempfile.TemporaryDirectory() as folder:
        for example, entry, dims, params, data, expected in cases(rng):
            known = shapes(example, dims)
            shape = lambda name, values: known.get(name) or [len(values)]
            weights = os.path.join(folder, "weights.safetensors") if params else None
            if params:
                write_safetensors(weights, {k: ("F64", shape(k, v), v) for k, v in params.items()})
            data_path = os.path.join(folder, "data.safetensors")
            write_safetensors(data_path, {k: ("I32" if k == "labels" else "F64", shape(k, v), v)
                                          for k, v in data.items()})
            got = run_presk(binary, root, example, entry, dims, weights, data_path)
            want = expected()
            digits = agreement_digits(got, want) if len(got) == len(want) else mpf(0)
            ok = digits >= REQUIRED_DIGITS
            failures += not ok
            print("%-14s %-18s %4d values  agree to %s digits  %s" %
                  (example, entry, len(got), mpmath.nstr(digits, 4), "ok" if ok else "FAIL"))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
