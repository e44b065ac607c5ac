"""Times a unit's death from outside the host: a unit of its own (protocol 2, from the wire protocol's
documentation alone) that reads the session's events. On "kill PID OWNER" on its stdin it waits until
it has heard OWNER's duck, reads its clock, sends PID SIGKILL, and reads events until the session
reports OWNER released; then it prints, in milliseconds on its own clock from the kill:

    dead OWNER released MS gain MS

`released` is the `unitReleased` event for OWNER, `gain` the first `mainGainChanged` upwards (the
restore) after the kill.

    python3 death-watch.py SOCKET
"""
import json, os, signal, socket, sys, time

watch = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
watch.connect(sys.argv[1])
pending = b""


def messages():
    """Each line the host sends, with when it was read."""
    global pending
    while True:
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            yield json.loads(line), time.monotonic_ns()
        chunk = watch.recv(65536)
        if not chunk:
            sys.exit("the host closed the connection")
        pending += chunk


host = messages()
watch.sendall(b'{"hello": {"protocol": 2, "owner": "death-watch"}}\n')
for message, _ in host:
    if "welcome" in message:
        break
    if "refused" in message:
        sys.exit("refused: %s" % message["refused"])
print("watching", flush=True)
ducked = set()
for command in sys.stdin:
    _, pid, owner = command.split()
    while owner not in ducked:
        message, _ = next(host)
        event = message.get("event", {})
        if event.get("kind") == "duckAcquired":
            ducked.add(event["duck"]["owner"])
    ducked.discard(owner)
    killed = time.monotonic_ns()
    os.kill(int(pid), signal.SIGKILL)
    gain = None
    for message, at in host:
        event = message.get("event", {})
        if event.get("kind") == "mainGainChanged" and event["to"] > event["from"] and gain is None:
            gain = at
        if event.get("kind") == "duckAcquired":
            ducked.add(event["duck"]["owner"])
        if event.get("kind") == "unitReleased" and event["owner"] == owner:
            released = at
            break
    gain_ms = "none" if gain is None else "%.3f" % ((gain - killed) / 1e6)
    print("dead %s released %.3f gain %s" % (owner, (released - killed) / 1e6, gain_ms), flush=True)
