"""Clients that trickle a request to the web server one byte every 0.05 s, for the flood
tests. They run as a process of their own, as another program's clients would: in the
test's process they would compete for its interpreter lock with the clients whose
requests the test times.

    python web_trickler.py PORT COUNT SECONDS [--reconnect] [--source ADDRESS]

COUNT connections, each in a thread that stops after SECONDS; with --reconnect a
connection the server drops connects again at once, else its thread ends. Prints
{"connected": n, "dropped": n} (dropped: the server answered or closed it) when done.
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time

REQUEST = (b"POST /api/new HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
           + b"X-Slow: a\r\n" * 400)  # 4 KiB: never whole at 20 bytes a second
BYTE_SECONDS = 0.05


def dropped(connection: socket.socket) -> bool:
    """Whether the server has answered or closed the connection (a peek, not waiting)."""
    connection.setblocking(False)
    try:
        connection.recv(1, socket.MSG_PEEK)  # an answer (408, 503) or the end: b""
        return True
    except BlockingIOError:  # nothing yet: the server still waits for the rest
        return False
    except OSError:  # reset
        return True
    finally:
        connection.setblocking(True)


def trickle(port: int, end: float, reconnect: bool, source: str | None,
            counts: dict[str, int], lock: threading.Lock) -> None:
    while time.monotonic() < end:
        try:
            connection = socket.create_connection(
                ("127.0.0.1", port), timeout=1,
                source_address=None if source is None else (source, 0))
        except OSError:
            time.sleep(BYTE_SECONDS)
            continue
        with lock:
            counts["connected"] += 1
        with connection:
            for byte in REQUEST:
                if time.monotonic() >= end:
                    return
                try:
                    connection.send(bytes([byte]))
                except OSError:
                    break
                if dropped(connection):
                    break
                time.sleep(BYTE_SECONDS)
        with lock:
            counts["dropped"] += 1
        if not reconnect:
            return


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("count", type=int)
    parser.add_argument("seconds", type=float)
    parser.add_argument("--reconnect", action="store_true")
    parser.add_argument("--source")
    arguments = parser.parse_args()
    counts = {"connected": 0, "dropped": 0}
    lock = threading.Lock()
    end = time.monotonic() + arguments.seconds
    threads = [threading.Thread(target=trickle, args=(arguments.port, end, arguments.reconnect,
                                                      arguments.source, counts, lock))
               for _ in range(arguments.count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    main()
