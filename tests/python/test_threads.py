"""Long calls release the GIL (another Python thread runs while an exact run is in flight) and
stop on Ctrl-C with KeyboardInterrupt (simulated with _thread.interrupt_main once a call is in
flight), after which the module runs again."""
import _thread
import threading
import time

import numpy as np
import pytest

import presk
from conftest import MLP

# A run that takes seconds: 2048 bits on a batch of 64.
LONG = {"consts": {"In": 16, "W": 32, "K": 10}, "dims": {"B": 64}}


def count_while_in_flight(stop, counter):
    while not stop.is_set():
        if presk.calls_in_flight() > 0:
            counter[0] += 1


def test_a_long_exact_run_releases_the_gil():
    program = presk.Program(MLP, **LONG)
    x = np.linspace(-1, 1, 64 * 16).reshape(64, 16)
    stop, counter = threading.Event(), [0]
    thread = threading.Thread(target=count_while_in_flight, args=(stop, counter))
    thread.start()
    try:
        result = program.run("logits", x, bits=2048)
    finally:
        stop.set()
        thread.join()
    assert result.value.shape == (64, 10)
    assert counter[0] > 0  # the other thread ran Python while the run was in flight


def interrupt_once_in_flight():
    while presk.calls_in_flight() == 0:
        pass
    _thread.interrupt_main()


def slow_program(lets):
    """`lets` tanh in a row: each a fraction of a second at 2^16 bits, the whole minutes."""
    body = "".join("  let a%d = tanh(a%d)\n" % (i + 1, i) for i in range(lets))
    return "dim N\nentry slow(x : R[N]) -> R[N]\n{\n  let a0 = x\n%s  a%d\n}\n" % (body, lets)


def test_ctrl_c_interrupts_a_long_exact_run():
    program = presk.Program(source=slow_program(2000), dims={"N": 8})
    threading.Thread(target=interrupt_once_in_flight, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        program.run("slow", np.linspace(-1, 1, 8), bits=1 << 16)
    assert presk.calls_in_flight() == 0
    quick = presk.Program(source=slow_program(2), dims={"N": 2})
    np.testing.assert_allclose(quick.run("slow", np.array([0.5, -1.0]), bits=64).value, np.tanh(np.tanh([0.5, -1.0])))


def test_ctrl_c_interrupts_a_calibration():
    program = presk.Program(source=slow_program(2000), dims={"N": 8})
    threading.Thread(target=interrupt_once_in_flight, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        program.calibrate("slow", samples=2, bits=1 << 16)
    assert presk.calls_in_flight() == 0
    envelope = presk.Program(source=slow_program(2), dims={"N": 2}).calibrate("slow", samples=1, bits=64)
    assert envelope.data["samples"] == 1


def quick_calls_until(stop, done):
    """Short exact runs in a loop on another thread: each one that ends clears nothing while
    another call is in flight (a Ctrl-C cancels those in flight, this one's too: it goes on)."""
    quick = presk.Program(source=slow_program(2), dims={"N": 2})
    while not stop.is_set():
        try:
            quick.run("slow", np.array([0.5, -1.0]), bits=64)
            done[0] += 1
        except KeyboardInterrupt:
            pass


def interrupt_once_both_in_flight():
    while presk.calls_in_flight() < 2:  # the long run and one of the other thread's
        pass
    _thread.interrupt_main()


def test_ctrl_c_is_not_erased_by_another_threads_call():
    # 400 lets of tanh at 2^16 bits: tens of seconds unless the interrupt reaches the run.
    program = presk.Program(source=slow_program(400), dims={"N": 8})
    stop, done = threading.Event(), [0]
    other = threading.Thread(target=quick_calls_until, args=(stop, done))
    other.start()
    try:
        while done[0] == 0:
            pass
        threading.Thread(target=interrupt_once_both_in_flight, daemon=True).start()
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            program.run("slow", np.linspace(-1, 1, 8), bits=1 << 16)
        elapsed = time.monotonic() - started
    finally:
        stop.set()
        other.join()
    assert done[0] >= 1  # the other thread's calls ran (and ended) beside the interrupted one
    # erased, the run goes on for minutes (2 on a loaded 2-core machine); honoured, a let or two
    assert elapsed < 30, "the interrupt was erased: the run went on for %.1f s" % elapsed
