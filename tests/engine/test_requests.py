"""Requests actors yield: ``put`` and ``sleep`` are one request each."""

from __future__ import annotations

from snficon.engine.requests import PUT, SLEEP_FOR, Request, put, sleep


def test_put_yields_one_put_request():
    assert list(put("message")) == [(PUT, "message", False)]
    assert list(put("last", final=True)) == [(Request.PUT, "last", True)]


def test_sleep_yields_one_sleep_request_on_its_host():
    assert list(sleep(2.5)) == [(SLEEP_FOR, 2.5, -1)]
    assert list(sleep(1.0, host=3)) == [(Request.SLEEP_FOR, 1.0, 3)]


def test_every_kind_has_its_own_number():
    assert sorted(int(kind) for kind in Request) == list(range(len(Request)))
