#!/usr/bin/env python3
"""An independent check of presk's reference interpreter: a plain Python evaluator of the
conformance examples (mse, layernorm, rmsnorm, softmax, mlp, gpt_tiny) and of the primitives added
for ONNX import (tests/reference/primitives.psk: sin, cos, atan, erf, gelu_erf, round, floor,
ceil, round_f16, round_bf16, iota; ties and subnormals among the inputs) in mpmath at 100 digits,
fed the same safetensors inputs as `presk run --exact --bits 400`, must agree with it to at least
60 significant digits on every output element.

gpt_tiny (T=4) gets seeded random non-zero values for every parameter, the zero-initialized head
and the ones/zeros-initialized gains and biases included (stacked block parameters carry a leading
L axis), and integer tokens as data; both entries, loss and logits, are compared. The evaluator
follows the language's definitions: gelu is the tanh form x/2·(1+tanh(√(2/π)(x+0.044715x³))),
layer norm uses eps 1e-5, causal_mask is −∞ above the diagonal, softmax is max-subtracted,
cross_entropy is the mean over positions of −log_softmax[target], and dropout is the identity
outside training.

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


def linear(x, w, b, n_in, n_out):
    """x: rows of width n_in; w: flat [n_in, n_out]; b: flat [n_out] or None."""
    return [[mpmath.fsum(row[i] * w[i * n_out + j] for i in range(n_in)) + (b[j] if b else 0)
             for j in range(n_out)] for row in x]


def gelu_tanh(x):
    return x / 2 * (1 + mpmath.tanh(mpmath.sqrt(2 / mpmath.pi) * (x + mpf("0.044715") * x ** 3)))


GPT_DIMS = {"V": 11, "D": 8, "H": 2, "L": 2, "F": 32}


def gpt_param_shapes(T):
    V, D, L, F = (GPT_DIMS[k] for k in "VDLF")
    shapes = {"tok": [V, D], "pos": [T, D]}
    block = {"ln1.g": [D], "ln1.b": [D]}
    for name in ("wq", "wk", "wv", "proj"):
        block["attn.%s.w" % name], block["attn.%s.b" % name] = [D, D], [D]
    block.update({"ln2.g": [D], "ln2.b": [D], "ff.up.w": [D, F], "ff.up.b": [F],
                  "ff.down.w": [F, D], "ff.down.b": [D]})
    shapes.update({"blocks." + k: [L] + v for k, v in block.items()})
    shapes.update({"ln_f.g": [D], "ln_f.b": [D], "head": [D, V]})
    return shapes


def gpt_logits(P, tokens, T):
    """P: name -> flat mpf values (shapes of gpt_param_shapes); tokens: T integers."""
    V, D, H, L, F = (GPT_DIMS[k] for k in "VDHLF")
    dh = D // H
    scale = 1 / mpmath.sqrt(mpf(D) / H)
    tok, pos = rows(P["tok"], D), rows(P["pos"], D)
    x = [[tok[tokens[i]][d] + pos[i][d] for d in range(D)] for i in range(T)]
    for l in range(L):
        def p(name):
            flat, shape = P["blocks." + name], gpt_param_shapes(T)["blocks." + name]
            size = len(flat) // shape[0]
            return flat[l * size:(l + 1) * size]
        a = rows(layernorm(x, p("ln1.g"), p("ln1.b")), D)
        q, k, v = (linear(a, p("attn.%s.w" % n), p("attn.%s.b" % n), D, D) for n in ("wq", "wk", "wv"))
        y = [[mpf(0)] * D for _ in range(T)]
        for h in range(H):
            cols = range(h * dh, (h + 1) * dh)
            for i in range(T):
                scores = [mpmath.fsum(q[i][c] * k[j][c] for c in cols) * scale for j in range(i + 1)]
                att = [mpmath.exp(s) for s in log_softmax_row(scores)]  # j > i: −∞, weight 0
                for c in cols:
                    y[i][c] = mpmath.fsum(att[j] * v[j][c] for j in range(i + 1))
        out = linear(y, p("attn.proj.w"), p("attn.proj.b"), D, D)
        hres = [[x[i][d] + out[i][d] for d in range(D)] for i in range(T)]
        b2 = rows(layernorm(hres, p("ln2.g"), p("ln2.b")), D)
        u = [[gelu_tanh(e) for e in row] for row in linear(b2, p("ff.up.w"), p("ff.up.b"), D, F)]
        f = linear(u, p("ff.down.w"), p("ff.down.b"), F, D)
        x = [[hres[i][d] + f[i][d] for d in range(D)] for i in range(T)]
    final = rows(layernorm(x, P["ln_f.g"], P["ln_f.b"]), D)
    return linear(final, P["head"], None, D, V)


def round_half_even(v):
    f = mpmath.floor(v)
    d = v - f
    return f + 1 if d > 0.5 or (d == 0.5 and f % 2 == 1) else f


def round_to_format(v, precision, emin):
    """The nearest number of a binary format with `precision` significand bits and least normal
    exponent `emin` (ties to even, subnormals kept; the inputs stay below its largest)."""
    if v == 0:
        return v
    e = int(mpmath.floor(mpmath.log(abs(v), 2)))
    while mpmath.ldexp(1, e) > abs(v):
        e -= 1
    while mpmath.ldexp(1, e + 1) <= abs(v):
        e += 1
    quantum = mpmath.ldexp(1, max(e, emin) - (precision - 1))
    return round_half_even(v / quantum) * quantum


def primitive_cases(rng):
    """tests/reference/primitives.psk: each primitive added for ONNX import, one entry each."""
    xs = normals(rng, 12, 2.0) + [0.625, -0.375, 0.5, -2.5 / 4, 1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11,
                                  1 + 2.0 ** -8 / 1000, 3 * 2.0 ** -25, 1e-9, -7.25]
    n = len(xs)
    x = lambda: [mpf(v) for v in xs]
    program = "../tests/reference/primitives.psk"
    functions = {
        "sine": mpmath.sin, "cosine": mpmath.cos, "arctangent": mpmath.atan, "error_function": mpmath.erf,
        "gelu_exact": lambda v: v / 2 * (1 + mpmath.erf(v / mpmath.sqrt(2))),
        "nearest": lambda v: round_half_even(v * 4), "below": lambda v: mpmath.floor(v * 3),
        "above": lambda v: mpmath.ceil(v * 3), "half": lambda v: round_to_format(v, 11, -14),
        "brain": lambda v: round_to_format(v * 1000, 8, -126)}
    for entry, function in functions.items():
        yield (program, entry, {"N": n}, {}, {"x": xs}, lambda function=function: [function(v) for v in x()])
    yield (program, "positions", {"N": n}, {}, {"x": xs}, lambda: [v * i for i, v in enumerate(x())])


def normals(rng, count, sigma=1.0):
    return [rng.gauss(0.0, sigma) for _ in range(count)]


def cases(rng):
    """(example, entry, dims, params, data, expected flat outputs as a function of mpf inputs)."""
    yield from primitive_cases(rng)
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
    T = 4
    gpt = {}
    for name, shape in gpt_param_shapes(T).items():
        count = 1
        for n in shape:
            count *= n
        # Gains around 1, everything else of a size that keeps every nonlinearity in play.
        values = normals(rng, count, 0.2 if name.endswith(".g") else 0.4)
        gpt[name] = (shape, [1 + v for v in values] if name.endswith(".g") else values)
    window = [rng.randrange(GPT_DIMS["V"]) for _ in range(T + 1)]
    gpt_mpf = lambda: {k: to_mpf(v) for k, (_, v) in gpt.items()}
    gpt_out = lambda tokens: gpt_logits(gpt_mpf(), tokens, T)
    yield ("gpt_tiny.psk", "logits", {"T": T}, gpt, {"tokens": window[:T]},
           lambda: [v for row in gpt_out(window[:T]) for v in row])
    yield ("gpt_tiny.psk", "loss", {"T": T}, gpt, {"tokens": window},
           lambda: [-mpmath.fsum(log_softmax_row(row)[window[i + 1]]
                                 for i, row in enumerate(gpt_out(window[:T]))) / T])


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

            def tensor(name, value):
                """value: flat values, or (shape, flat values); integer values are I32."""
                shape, values = value if isinstance(value, tuple) else (known.get(name) or [len(value)], value)
                return ("I32" if all(isinstance(v, int) for v in values) else "F64", shape, values)
            weights = os.path.join(folder, "weights.safetensors") if params else None
            if params:
                write_safetensors(weights, {k: tensor(k, v) for k, v in params.items()})
            data_path = os.path.join(folder, "data.safetensors")
            write_safetensors(data_path, {k: tensor(k, v) for k, v in data.items()})
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
