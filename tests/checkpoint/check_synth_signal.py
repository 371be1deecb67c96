#!/usr/bin/env python3
"""SIGTERM and SIGINT during `presk checkpoint synth` leave no `.presk-tmp` file.

  check_synth_signal.py PRESK PROGRAM WORK

For each signal: starts a synth of a 1.2 B-parameter checkpoint (minutes of work) into
WORK/<signal>, waits until its temporary exists (it is writing), sends the signal, and checks
that presk ended by that signal (status −signal), said so on stderr, and left no temporary
and no model file. Exit 1 on a failure."""
import glob
import os
import shutil
import signal
import subprocess
import sys
import time

BIG = ["--const", "V=128256", "--const", "D=2048", "--const", "L=16", "--const", "H=32", "--const", "KV=8",
       "--const", "F=8192", "--dim", "T=4"]


def check(presk, program, work, sig):
    folder = os.path.join(work, sig.name)
    shutil.rmtree(folder, ignore_errors=True)
    process = subprocess.Popen([presk, "checkpoint", "synth", program, *BIG, "--out", folder, "--threads", "1",
                                "--shard-size", "0", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    temporary = os.path.join(folder, "model.safetensors.presk-tmp")
    deadline = time.time() + 60
    while not os.path.exists(temporary):
        if process.poll() is not None or time.time() > deadline:
            process.kill()
            return [f"{sig.name}: the synth never began writing {temporary} (status {process.poll()})"]
        time.sleep(0.01)
    process.send_signal(sig)
    _, stderr = process.communicate(timeout=60)
    errors = []
    if process.returncode != -sig.value:
        errors.append(f"{sig.name}: status {process.returncode}, expected {-sig.value}")
    if sig.name.encode() not in stderr:
        errors.append(f"{sig.name}: stderr does not name the signal: {stderr[-400:]!r}")
    left = glob.glob(os.path.join(folder, "*.presk-tmp")) + glob.glob(os.path.join(folder, "*.safetensors"))
    if left:
        errors.append(f"{sig.name}: left behind {left}")
    shutil.rmtree(folder, ignore_errors=True)
    return errors


def main():
    presk, program, work = sys.argv[1:4]
    errors = check(presk, program, work, signal.SIGTERM) + check(presk, program, work, signal.SIGINT)
    for error in errors:
        print(error, file=sys.stderr)
    print("ok" if not errors else f"{len(errors)} failures")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
