"""A JSON-lines bot that misbehaves on purpose: python3 misbehave.py MODE [N].

MODE: garbage (answers non-JSON), illegal (keeps dice it cannot), hang (stops
answering), die (exits after N decisions), nohello (never answers the handshake),
slow (answers every second decision late), ok (hold at 20).
"""

import json
import sys
import time

mode = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 3
count = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        if mode == "nohello":
            time.sleep(60)
        print(json.dumps({"type": "ready", "name": f"misbehave-{mode}"}), flush=True)
        continue
    if msg["type"] == "bye":
        break
    count += 1
    st = msg["state"]
    first = st["legal"][0]
    if mode == "garbage":
        print("this is not json {", flush=True)
    elif mode == "illegal":
        print(json.dumps({"id": msg["id"], "keep": [9, 9], "then": "roll"}), flush=True)
    elif mode == "hang":
        time.sleep(60)
    elif mode == "die" and count > n:
        sys.stderr.write("misbehave: dying on purpose\n")
        sys.exit(3)
    elif mode == "slow" and count % 2 == 0:
        time.sleep(0.5)
        print(json.dumps({"id": msg["id"], "keep": first["keep"], "then": "stop"}), flush=True)
    else:
        then = "stop" if st["turn_total"] + first["points"] >= 20 else "roll"
        print(json.dumps({"id": msg["id"], "keep": first["keep"], "then": then}), flush=True)
