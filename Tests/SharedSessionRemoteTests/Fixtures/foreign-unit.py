"""A unit written from the wire protocol's documentation alone (WireProtocol.md), not on RemoteSession:
it says hello in protocol VERSION (1 or 2), takes a voice session and a plain duck, prints "ready" and
then reads its events until it is killed.

    python3 foreign-unit.py SOCKET OWNER VERSION
"""
import json, socket, sys

path, owner, version = sys.argv[1], sys.argv[2], int(sys.argv[3])
unit = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
unit.connect(path)
lines = unit.makefile("rb")


def send(message):
    unit.sendall((json.dumps(message) + "\n").encode())


def wait(key, value=None):
    for line in lines:
        message = json.loads(line)
        if key in message and (value is None or message[key] == value):
            return message
        if "refused" in message:
            sys.exit("refused: %s" % message["refused"])
    sys.exit("the host closed the connection")


send({"hello": {"protocol": version, "owner": owner}})
welcome = wait("welcome")["welcome"]
if welcome["protocol"] != version:
    sys.exit("welcomed in protocol %s" % welcome["protocol"])
if version == 1:
    send({"id": 1, "input": {"kind": "acquire", "lease": 0, "owner": owner, "type": "voice"}})
    if "error" in wait("reply", 1):
        sys.exit("no voice session")
    send({"id": 2, "input": {"kind": "duck", "lease": 0, "request": {"owner": owner, "style": {"kind": "duck"}}}})
    if "error" in wait("reply", 2):
        sys.exit("no duck")
else:
    # Version 2: each request named by its key, no owner (the connection's), no placeholder lease.
    send({"id": 1, "acquire": {"type": "voice"}})
    granted = wait("reply", 1)
    if "granted" not in granted or granted["granted"].get("type") != "voice":
        sys.exit("no voice session: %s" % granted)
    send({"id": 2, "duck": {}})
    if "granted" not in wait("reply", 2):
        sys.exit("no duck")
print("ready", flush=True)
for line in lines:
    pass
