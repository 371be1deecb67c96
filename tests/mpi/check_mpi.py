#!/usr/bin/env python3
"""presk under mpirun (issue #35, docs/distributed.md): each case runs a command as one process
and as N ranks on localhost and compares the outputs byte for byte (the files, and stdout
with the lines that state wall time, a path or a date taken out), or checks a fault:
a rank that cannot read the weights (E1740), a rank killed mid-run (E1741, no output) and the
rerun that resumes from the exact outputs cached before the kill.

    check_mpi.py PRESK SOURCE_DIR WORK_DIR CASE      CASE: calibrate-2, calibrate-3, calibrate-sweep-2,
        calibrate-sweep-3, run-2, run-3,
        margins-2, margins-3, solve-2, solve-3, step-3, weights-missing, killed-rank

Every mpirun goes through mpirun_command(): the options that make OpenMPI run here (root,
oversubscription, containers). The cases never skip: without mpirun they fail (scripts/install-deps
installs OpenMPI)."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

PRESK, SOURCE, WORK, CASE = sys.argv[1:5]
GPT = os.path.join(SOURCE, "examples", "gpt_tiny.psk")
MLP = os.path.join(SOURCE, "examples", "mlp.psk")
LLAMA = os.path.join(SOURCE, "examples", "llama.psk")


def mpirun_command(ranks):
    """mpirun for `ranks` ranks on this machine: oversubscribed (more ranks than cores), as root
    where the tests run as root, shared memory and loopback only, no ssh agent needed."""
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        sys.exit("FAIL: no mpirun on the PATH: run scripts/install-deps (it installs openmpi-bin)")
    command = [mpirun, "--oversubscribe", "-np", str(ranks), "--mca", "btl", "self,vader,tcp",
               "--mca", "btl_vader_single_copy_mechanism", "none", "--mca", "plm_rsh_agent", "false"]
    if os.geteuid() == 0:
        command.insert(1, "--allow-run-as-root")
    return command


def run(argv, folder, check=True):
    result = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=300)
    if check and result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(argv)} exited {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result


def folder(name):
    path = os.path.join(WORK, CASE, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


VOLATILE = re.compile(r'"(seconds|date)"|^# .* s[;,]|^time |written to|\d+\.\d+ s$')


# calibrate --step's timed native step column: "0.00408 (0.00402–0.00443)" or "… (one step)".
STEP_TIME = re.compile(r"\s+[0-9.e+-]+ \((?:[0-9.e+-]+–[0-9.e+-]+|one step)\)$")


def stable(text):
    """stdout without the lines that state wall time or a date, and without timed columns."""
    return "\n".join(STEP_TIME.sub("", line) for line in text.splitlines() if not VOLATILE.search(line))


def same_file(a, b, what):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        x, y = fa.read(), fb.read()
    if what.endswith(".json"):  # an envelope: everything but its date and the wall times it records
        x, y = (re.sub(rb'"(date|[a-z_]*seconds)": [^,\n]*', b"", z) for z in (x, y))
    if x != y:
        sys.exit(f"FAIL: {what} differs between one process and {CASE}: {a} {b}")


def compare(command, files, ranks, setup=None):
    """Runs `command` (a list, run in a fresh folder) as one process and as `ranks` ranks."""
    one, many = folder("one"), folder("many")
    if setup:  # made once and copied: an envelope records its date, and a solve the envelope's SHA-256
        setup(one)
        shutil.copytree(one, many, dirs_exist_ok=True)
    single = run([PRESK] + command, one)
    distributed = run(mpirun_command(ranks) + [PRESK] + command, many)
    if stable(single.stdout) != stable(distributed.stdout):
        sys.exit(f"FAIL: stdout differs\n--- one process\n{single.stdout}\n--- {ranks} ranks\n{distributed.stdout}")
    for name in files:
        same_file(os.path.join(one, name), os.path.join(many, name), name)
    if f"ranks: " not in distributed.stderr or f"rank {ranks - 1} " not in distributed.stderr:
        sys.exit(f"FAIL: no per-rank report on stderr:\n{distributed.stderr}")
    if "ranks: " in single.stderr:
        sys.exit("FAIL: one process printed a per-rank report")
    print(f"ok: {' '.join(command[:2])} as {ranks} ranks gives the bytes of one process ({', '.join(files)})")
    return one, many


def calibrate_envelope(where, samples=4, batch=4, bits=128):
    run([PRESK, "calibrate", "--precision", MLP, "--entry", "logits", "--dim", f"B={batch}", "--samples", str(samples),
         "--bits", str(bits), "--out", "env.json", "--quiet"], where)


def case_calibrate(ranks):
    compare(["calibrate", "--precision", GPT, "--entry", "loss", "--dim", "T=4", "--samples", "5", "--bits", "128",
             "--out", "env.json", "--threads", "2"], ["env.json"], ranks)


def case_calibrate_sweep(ranks):
    """--sweep f64: the native sweep and statistics split across the ranks, then the exact outputs."""
    compare(["calibrate", "--precision", GPT, "--entry", "loss", "--dim", "T=4", "--samples", "5", "--bits", "128",
             "--sweep", "f64", "--out", "env.json", "--threads", "2"], ["env.json"], ranks)


def case_run(ranks):
    compare(["run", "--exact", GPT, "--entry", "logits", "--dim", "T=4", "--samples", "5", "--bits", "128",
             "--out", "out.safetensors", "--json"], ["out.safetensors"], ranks)


def case_margins(ranks):
    compare(["margins", MLP, "--entry", "logits", "--dim", "B=4", "--windows", "7", "--realize", "bf16",
             "--delta", "0.5", "--json"], [], ranks)


def case_solve(ranks):
    compare(["solve", MLP, "--precision", "env.json", "--budget", "1e-4", "--out", "r.json"],
            ["r.json", "env.json.exact.safetensors"], ranks, setup=calibrate_envelope)


def trained_tiny_gpt(where):
    with open(os.path.join(where, "text.txt"), "w") as f:
        f.write("".join("the cat sat on a mat. " if i % 2 else "a mat on the cat. " for i in range(200)))
    run([PRESK, "data", "prepare", "--text", "text.txt", "--window", "8", "--out-dir", "data"], where)
    run([PRESK, "train", GPT, "--dim", "T=8", "--data", "data/train.safetensors", "--batch", "2", "--steps", "2",
         "--realize", "f64", "--out", "c.safetensors", "--weights-out", "w.safetensors"], where)


def case_step(ranks):
    compare(["calibrate", "--step", GPT, "--dim", "T=8", "--entry", "loss", "--threads", "1", "--weights",
             "w.safetensors", "--data", "data/train.safetensors", "--batch", "4", "--steps", "10", "--lr", "1e-2",
             "--warmup", "2", "--realize", "f32", "--out", "s.json"], ["s.json", "s.safetensors"], ranks,
            setup=trained_tiny_gpt)


def case_weights_missing():
    """Rank 1 runs in a folder without the weights (a node missing them): E1740 before any work."""
    has, lacks = folder("has"), folder("lacks")
    run([PRESK, "checkpoint", "synth", LLAMA, "--dim", "T=4", "--out", "ckpt", "--seed", "3"], has)
    command = ["run", "--exact", LLAMA, "--entry", "loss", "--dim", "T=4", "--bits", "64", "--samples", "2",
               "--weights", "ckpt", "--out", "out.safetensors"]
    run([PRESK] + command, has)  # the weights are readable
    os.remove(os.path.join(has, "out.safetensors"))
    mpirun = mpirun_command(1)
    mpirun = mpirun[:mpirun.index("-np")]
    result = run(mpirun + ["-np", "1", "--wdir", has, PRESK] + command + [":", "-np", "1", "--wdir", lacks, PRESK] +
                 command, has, check=False)
    if result.returncode == 0 or "E1740" not in result.stderr or "rank 1 of 2" not in result.stderr:
        sys.exit(f"FAIL: expected E1740 naming rank 1, got {result.returncode}\n{result.stderr}")
    if os.path.exists(os.path.join(has, "out.safetensors")):
        sys.exit("FAIL: an output was written although a rank could not read the weights")
    print("ok: a rank without the weights is E1740 naming it, before any work; nothing written")


def rank_pid(parent, rank):
    """The pid of rank `rank` among mpirun's children (its environment names the rank)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid != parent:
                continue
            with open(f"/proc/{entry}/environ", "rb") as f:
                if f"OMPI_COMM_WORLD_RANK={rank}".encode() in f.read().split(b"\0"):
                    return int(entry)
        except (OSError, ValueError, IndexError):
            continue
    return None


def case_killed_rank():
    """A solve on 3 ranks; rank 1 killed (SIGKILL) after the first round of exact outputs is cached:
    E1741 naming rank 1 and the phase, no realization written; the rerun resumes from the cache and
    gives the bytes of one process."""
    one, many = folder("one"), folder("many")
    calibrate_envelope(one, samples=24, batch=64, bits=1024)  # 8 rounds of ~0.1 s on 3 ranks
    shutil.copy(os.path.join(one, "env.json"), many)
    solve = ["solve", MLP, "--precision", "env.json", "--budget", "1e-4", "--out", "r.json", "--threads", "1"]
    run([PRESK] + solve, one)
    cache = os.path.join(many, "env.json.exact.safetensors")
    process = subprocess.Popen(mpirun_command(3) + [PRESK] + solve, cwd=many, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    killed = None
    deadline = time.time() + 120
    while process.poll() is None and time.time() < deadline:
        if os.path.exists(cache):
            killed = rank_pid(process.pid, 1)
            if killed:
                os.kill(killed, signal.SIGKILL)
            break
        time.sleep(0.002)
    out, err = process.communicate(timeout=120)
    if killed is None:
        sys.exit(f"FAIL: the run ended before rank 1 could be killed (make the case slower)\n{err}")
    # The phase: the loop the ranks were in (`exact reference: samples`), or the combination after it.
    if process.returncode == 0 or "E1741" not in err or "rank 1 " not in err or not re.search(r"stopped during `[^`]+`", err):
        sys.exit(f"FAIL: expected E1741 naming rank 1 and the phase, got {process.returncode}\n{err}")
    if os.path.exists(os.path.join(many, "r.json")):
        sys.exit("FAIL: a realization was written by a run whose rank was killed")
    print("ok: a rank killed mid-run is E1741 naming it and the phase; nothing written")
    again = run(mpirun_command(3) + [PRESK] + solve, many)
    if "resumed from cache" not in again.stderr:
        sys.exit(f"FAIL: the rerun did not resume from the cache:\n{again.stderr}")
    same_file(os.path.join(one, "r.json"), os.path.join(many, "r.json"), "r.json")
    same_file(os.path.join(one, "env.json.exact.safetensors"), cache, "the exact outputs' cache")
    print("ok: the rerun resumes from the cache and gives the bytes of one process")


CASES = {
    "calibrate-2": lambda: case_calibrate(2), "calibrate-3": lambda: case_calibrate(3),
    "calibrate-sweep-2": lambda: case_calibrate_sweep(2), "calibrate-sweep-3": lambda: case_calibrate_sweep(3),
    "run-2": lambda: case_run(2), "run-3": lambda: case_run(3),
    "margins-2": lambda: case_margins(2), "margins-3": lambda: case_margins(3),
    "solve-2": lambda: case_solve(2), "solve-3": lambda: case_solve(3),
    "step-3": lambda: case_step(3), "weights-missing": case_weights_missing, "killed-rank": case_killed_rank,
}

if __name__ == "__main__":
    CASES[CASE]()
