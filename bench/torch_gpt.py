#!/usr/bin/env python3
"""The PyTorch peer of examples/gpt.psk, on the CPU (a benchmark, not a test).

The same model: token and position tables, L pre-norm blocks of causal multi-head
self-attention (written by hand: torch 1.13 has no scaled_dot_product_attention) and a
GELU (tanh) feed-forward of width 4·D, a final layer norm and the head; x @ w + b layers;
layer norm over D with eps 1e-5; the loss is the mean next-token cross-entropy of a window
of T + 1 tokens. Prints one JSON line per measurement:
  (a) "forward_loss": the loss of one window (batch 1), dropout off, under inference_mode;
  (b) "train_step":   forward + backward + AdamW step on a batch of windows, dropout P on.
Each with the median, min and max milliseconds of --runs timed runs after --warmup runs.

--weights int8 | int4 (forward only) quantizes the seven weight matrices of gpt.psk's
bench/gpt_int8.json and gpt_int4.json (wq, wk, wv, proj, up, down, head) as presk does: one
absmax scale per output column (s = max|w| / 127 or / 7), q = round(w / s). int8 runs them
through torch's dynamic int8 linear (torch.ops.quantized.linear_dynamic on the oneDNN engine:
activations quantized to 8 bits per call, int8 products) — PyTorch's CPU int8 path, fast but not
presk's numerics (presk keeps f32 activations and computes f32(q·s) · x in f32). torch 1.13 has
no int4 kernel: int4 stores q as int8 and dequantizes (q · s, f32) in every forward, the
weight-only route an eager user has.

  PYTHONPATH=… python3 bench/torch_gpt.py --dim 64 --seq 256 --dtype float32 --threads 2
scripts/bench-peers finds torch and runs this beside `presk bench`.
"""
import argparse
import json
import math
import statistics
import time

import torch
import torch.nn.functional as F


class GPT(torch.nn.Module):
    def __init__(self, vocab, dim, heads, layers, seq, dropout):
        super().__init__()
        self.heads, self.dropout = heads, dropout
        normal = lambda *shape: torch.nn.Parameter(torch.randn(*shape) * 0.02)
        zeros = lambda *shape: torch.nn.Parameter(torch.zeros(*shape))
        ones = lambda *shape: torch.nn.Parameter(torch.ones(*shape))
        self.tok, self.pos = normal(vocab, dim), normal(seq, dim)
        self.weights, self.prepacked = "float", {}

        def block():
            p = torch.nn.ParameterDict()
            for name in ("ln1", "ln2"):
                p[name + "_g"], p[name + "_b"] = ones(dim), zeros(dim)
            for name in ("wq", "wk", "wv", "proj"):
                p[name + "_w"], p[name + "_b"] = normal(dim, dim), zeros(dim)
            p["up_w"], p["up_b"] = normal(dim, 4 * dim), zeros(4 * dim)
            p["down_w"], p["down_b"] = normal(4 * dim, dim), zeros(dim)
            return p

        self.blocks = torch.nn.ModuleList(block() for _ in range(layers))
        self.ln_g, self.ln_b = ones(dim), zeros(dim)
        # gpt.psk initializes the head to zeros; small values here so that nothing is trivially 0.
        self.head = normal(dim, vocab)

    def drop(self, x):
        return F.dropout(x, self.dropout, self.training)

    def quantize(self, bits):
        """Integer weights for the matrices presk quantizes (scales per output column)."""
        self.weights, self.packed, self.dequant = bits, {}, {}
        top = 127 if bits == "int8" else 7
        for w in [p[n + "_w"] for p in self.blocks for n in ("wq", "wk", "wv", "proj", "up", "down")] + [self.head]:
            w = w.detach()
            scales = (w.abs().amax(dim=0) / top).float()
            scales = torch.where(scales == 0, torch.ones_like(scales), scales)
            q = torch.round(w / scales).clamp(-top, top)
            if bits == "int8":
                qw = torch.quantize_per_channel(q.t().contiguous() * scales[:, None], scales.double(),
                                                torch.zeros_like(scales, dtype=torch.long), 0, torch.qint8)
                self.packed[id_of(w)] = qw
            else:
                self.dequant[id_of(w)] = (q.to(torch.int8), scales)

    def linear(self, x, w, b=None):
        if self.weights == "float":
            return x @ w + b if b is not None else x @ w
        if self.weights == "int8":
            packed = self.prepacked.setdefault((id_of(w), id_of(b)), torch.ops.quantized.linear_prepack(
                self.packed[id_of(w)], None if b is None else b.detach()))
            return torch.ops.quantized.linear_dynamic(x, packed)
        q, scales = self.dequant[id_of(w)]
        y = x @ (q.to(torch.float32) * scales)
        return y + b if b is not None else y

    def attention(self, x, p):
        batch, seq, dim = x.shape
        split = lambda y: y.view(batch, seq, self.heads, dim // self.heads).transpose(1, 2)
        q, k, v = (split(self.linear(x, p[n + "_w"], p[n + "_b"])) for n in ("wq", "wk", "wv"))
        scores = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(dim // self.heads))
        mask = torch.ones(seq, seq, dtype=torch.bool).triu(1)
        att = self.drop(torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1))
        y = (att @ v).transpose(1, 2).reshape(batch, seq, dim)
        return self.drop(self.linear(y, p["proj_w"], p["proj_b"]))

    def feed_forward(self, x, p):
        h = F.gelu(self.linear(x, p["up_w"], p["up_b"]), approximate="tanh")
        return self.drop(self.linear(h, p["down_w"], p["down_b"]))

    def forward(self, tokens):  # tokens [batch, T]
        dim = self.tok.shape[1]
        x = self.drop(self.tok[tokens] + self.pos[: tokens.shape[1]])
        for p in self.blocks:
            x = x + self.attention(F.layer_norm(x, (dim,), p["ln1_g"], p["ln1_b"], 1e-5), p)
            x = x + self.feed_forward(F.layer_norm(x, (dim,), p["ln2_g"], p["ln2_b"], 1e-5), p)
        return self.linear(F.layer_norm(x, (dim,), self.ln_g, self.ln_b, 1e-5), self.head)

    def loss(self, windows):  # windows [batch, T + 1]
        logits = self.forward(windows[:, :-1])
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), windows[:, 1:].reshape(-1))


def id_of(tensor):
    return None if tensor is None else tensor.data_ptr()


def timed(body, warmup, runs):
    for _ in range(warmup):
        result = body()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = body()
        times.append((time.perf_counter() - start) * 1e3)
    return times, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--heads", type=int, default=2)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--seq", type=int, default=256, help="T, the context length")
    parser.add_argument("--vocab", type=int, default=63)
    parser.add_argument("--dtype", choices=("float32", "bfloat16", "float64"), default="float32")
    parser.add_argument("--weights", choices=("float", "int8", "int4"), default="float",
                        help="integer weights (float32 only, forward only; see above)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch", type=int, default=8, help="windows per training step")
    parser.add_argument("--dropout", type=float, default=0.1, help="the training step's rate (gpt.psk's P)")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--train-runs", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--what", choices=("both", "forward", "train"), default="both")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    dtype = getattr(torch, args.dtype)
    model = GPT(args.vocab, args.dim, args.heads, args.layers, args.seq, args.dropout).to(dtype)
    if args.weights != "float":
        if args.dtype != "float32" or args.what != "forward":
            parser.error("--weights int8/int4 needs --dtype float32 and --what forward")
        if "onednn" in torch.backends.quantized.supported_engines:
            torch.backends.quantized.engine = "onednn"
        model.quantize(args.weights)
    common = {"peer": "torch", "torch": torch.__version__, "dtype": args.dtype, "weights": args.weights, "D": args.dim,
              "H": args.heads, "L": args.layers, "T": args.seq, "V": args.vocab, "threads": args.threads}

    def report(what, batch, runs, times, loss):
        line = dict(common, what=what, batch=batch, runs=runs, median_ms=statistics.median(times),
                    min_ms=min(times), max_ms=max(times), loss=float(loss))
        print(json.dumps(line), flush=True)

    if args.what in ("both", "forward"):
        model.eval()
        window = torch.randint(0, args.vocab, (1, args.seq + 1))
        with torch.inference_mode():
            times, loss = timed(lambda: model.loss(window), args.warmup, args.runs)
        report("forward_loss", 1, args.runs, times, loss)

    if args.what in ("both", "train"):
        model.train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        windows = torch.randint(0, args.vocab, (args.batch, args.seq + 1))

        def step():
            optimizer.zero_grad(set_to_none=True)
            loss = model.loss(windows)
            loss.backward()
            optimizer.step()
            return loss.detach()

        times, loss = timed(step, args.warmup, args.train_runs)
        report("train_step", args.batch, args.train_runs, times, loss)


if __name__ == "__main__":
    main()
