"""The maestro loop: actors run to their next request, the server gets puts in order."""

from __future__ import annotations

import numpy as np

from snficon.engine.kernel import Kernel
from snficon.engine.requests import DONE, TIMEOUT, Request, put, sleep
from snficon.engine.surf import Surf


def _kernel(nb_hosts: int = 2) -> Kernel:
    return Kernel(Surf(), nb_hosts, lambda nodes, delta: None)


def _server(kernel: Kernel, received: list, count: int):
    """An actor that receives ``count`` messages and records each with the clock."""
    for _ in range(count):
        message = yield (Request.RECV,)
        received.append((kernel.surf.now, message))


def _sleeper(name: str, duration: float):
    yield from sleep(duration)
    yield from put(name, final=True)


def _drain(kernel: Kernel) -> list:
    """Run the kernel to its end, answering each exchange with its message reversed."""
    loop = kernel.run()
    exchanged = []
    try:
        message = next(loop)
        while True:
            exchanged.append(message)
            message = loop.send(message[::-1])
    except StopIteration:
        return exchanged


def test_messages_reach_the_server_in_the_order_of_their_times():
    kernel = _kernel()
    received: list = []
    kernel.spawn("server", _server(kernel, received, 3))
    kernel.spawn("late", _sleeper("late", 7.0))
    kernel.spawn("early", _sleeper("early", 2.0))
    kernel.spawn("now", _sleeper("now", 0.0))
    _drain(kernel)
    assert received == [(0.0, "now"), (2.0, "early"), (7.0, "late")]
    assert kernel.surf.now == 7.0
    assert kernel.blocked_actors() == []


def test_an_exchange_gives_the_actor_the_answer_without_time_passing():
    kernel = _kernel()
    answers = []

    def asker():
        yield from sleep(3.0)
        answer = yield (Request.EXCHANGE, "abc")
        answers.append((kernel.surf.now, answer))

    kernel.spawn("asker", asker())
    assert _drain(kernel) == ["abc"]
    assert answers == [(3.0, "cba")]


def test_a_call_runs_its_function_and_resumes_the_actor_with_the_result():
    kernel = _kernel()
    results = []

    def caller():
        value = yield (Request.CALL, lambda a, b: a + b, 2, 3)
        results.append(value)

    actor = kernel.spawn("caller", caller())
    _drain(kernel)
    assert results == [5] and not actor.alive


def test_a_wait_ends_with_the_execution_or_its_timeout():
    kernel = _kernel()
    outcomes = []

    def worker(flops: float, timeout: float):
        execution = yield (Request.CALL, kernel.start_exec, np.array([0]), flops,
                           np.array([1.0]))
        outcome = yield (Request.WAIT, execution, timeout, 0)
        outcomes.append((flops, kernel.surf.now, outcome))

    kernel.spawn("done", worker(2.0, 5.0))
    kernel.spawn("timed out", worker(9.0, 4.0))
    _drain(kernel)
    assert outcomes == [(2.0, 2.0, DONE), (9.0, 4.0, TIMEOUT)]


def test_an_energy_query_updates_every_host_at_the_clock():
    kernel = _kernel(nb_hosts=4)

    def reader():
        yield from sleep(6.0)
        yield (Request.ENERGY, kernel.all_hosts)

    kernel.spawn("reader", reader())
    _drain(kernel)
    assert kernel.energy_updated_at.tolist() == [6.0] * 4


def test_a_killed_actor_never_runs_again():
    kernel = _kernel()
    ran = []

    def victim():
        yield from sleep(10.0)
        ran.append("after")

    target = kernel.spawn("victim", victim())

    def killer():
        yield from sleep(1.0)
        yield (Request.CALL, kernel.kill, target)

    kernel.spawn("killer", killer())
    _drain(kernel)
    assert ran == [] and kernel.surf.now == 1.0 and kernel.blocked_actors() == []
