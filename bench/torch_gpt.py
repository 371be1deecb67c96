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

    def attention(self, x, p):
        batch, seq, dim = x.shape
        split = lambda y: y.view(batch, seq, self.heads, dim // self.heads).transpose(1, 2)
        q, k, v = (split(x @ p[n + "_w"] + p[n + "_b"]) for n in ("wq", "wk", "wv"))
        scores = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(dim // self.heads))
        mask = torch.ones(seq, seq, dtype=torch.bool).triu(1)
        att = self.drop(torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1))
        y = (att @ v).transpose(1, 2).reshape(batch, seq, dim)
        return self.drop(y @ p["proj_w"] + p["proj_b"])

    def feed_forward(self, x, p):
        h = F.gelu(x @ p["up_w"] + p["up_b"], approximate="tanh")
        return self.drop(h @ p["down_w"] + p["down_b"])

    def forward(self, tokens):  # tokens [batch, T]
        dim = self.tok.shape[1]
        x = self.drop(self.tok[tokens] + self.pos[: tokens.shape[1]])
        for p in self.blocks:
            x = x + self.attention(F.layer_norm(x, (dim,), p["ln1_g"], p["ln1_b"], 1e-5), p)
            x = x + self.feed_forward(F.layer_norm(x, (dim,), p["ln2_g"], p["ln2_b"], 1e-5), p)
        return F.layer_norm(x, (dim,), self.ln_g, self.ln_b, 1e-5) @ self.head

    def loss(self, windows):  # windows [batch, T + 1]
        logits = self.forward(windows[:, :-1])
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), windows[:, 1:].reshape(-1))


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
    common = {"peer": "torch", "torch": torch.__version__, "dtype": args.dtype, "D": args.dim,
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
