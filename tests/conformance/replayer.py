"""A stand-in for batsched: answers each message with the next recorded answer text.

    python replayer.py TRANSCRIPT.jsonl ENDPOINT RECEIVED.json

Binds a REP socket at ENDPOINT (as a scheduler does), answers the k-th message
it receives with the k-th ``sched->sim`` line's ``raw`` text of TRANSCRIPT and
writes the texts it received to RECEIVED.json when the answers run out.
"""

from __future__ import annotations

import json
import sys

import zmq


def main(transcript: str, endpoint: str, received_path: str) -> int:
    with open(transcript, encoding="utf-8") as handle:
        answers = [line["raw"] for line in map(json.loads, handle) if line["dir"] == "sched->sim"]
    context = zmq.Context()
    socket = context.socket(zmq.REP)
    socket.setsockopt(zmq.LINGER, 1000)
    socket.bind(endpoint)
    received = []
    try:
        for answer in answers:
            if not socket.poll(60_000):
                break
            received.append(socket.recv_string())
            socket.send_string(answer)
    finally:
        with open(received_path, "w", encoding="utf-8") as handle:
            json.dump(received, handle)
        socket.close()
        context.term()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
