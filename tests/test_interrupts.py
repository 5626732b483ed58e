"""The stop-signal handler: the first SIGINT/SIGTERM raises, later ones never cut the clean-up."""

from __future__ import annotations

import os
import signal

import pytest

from snficon.interrupts import Interrupted, describe, exit_code_of, stop_signals_raise


def _restore(saved: dict[int, object]) -> None:
    for signum, handler in saved.items():
        signal.signal(signum, handler)


@pytest.fixture
def saved_handlers():
    saved = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    yield saved
    _restore(saved)


@pytest.mark.parametrize(("signum", "code", "word"), [(signal.SIGINT, 130, "interrupted"),
                                                     (signal.SIGTERM, 143, "terminated")])
def test_first_signal_raises_the_second_is_ignored(saved_handlers, signum, code, word):
    cleaned = []
    with pytest.raises(Interrupted) as caught, stop_signals_raise():
        try:
            os.kill(os.getpid(), signum)
            pytest.fail("no exception from the first signal")
        finally:
            os.kill(os.getpid(), signal.SIGINT)  # during clean-up: a forwarded duplicate
            os.kill(os.getpid(), signal.SIGTERM)
            cleaned.append(True)
    assert cleaned == [True]
    assert caught.value.signum == signum
    assert exit_code_of(caught.value) == caught.value.exit_code == code
    assert describe(caught.value) == word
    # After an interrupt both signals stay ignored until the process exits.
    assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN


def test_handlers_come_back_when_no_signal_arrived(saved_handlers):
    with stop_signals_raise():
        assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, signal.SIG_IGN)
    assert signal.getsignal(signal.SIGINT) == saved_handlers[signal.SIGINT]
    assert signal.getsignal(signal.SIGTERM) == saved_handlers[signal.SIGTERM]


def test_a_plain_keyboard_interrupt_is_sigint():
    assert exit_code_of(KeyboardInterrupt()) == 130
    assert describe(KeyboardInterrupt()) == "interrupted"
