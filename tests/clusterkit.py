"""What the cluster tests share besides their LocalCluster (conftest's ``client``): a worker
killed in the middle of a solve."""

import os
import signal


def killer(client, at_pass: int, at_level: int):
    """A progress callback that kills one worker's process with SIGKILL, as kill -9 would
    (a LocalCluster's nanny then starts a new one), the first time the solve reaches level
    ``at_level`` of pass ``at_pass``; its ``killed`` lists the workers it killed."""
    killed = []

    def kill_once(info):
        if not killed and info["pass"] == at_pass and info["level"] >= at_level:
            victim = sorted(client.scheduler_info()["workers"])[0]
            pid = client.run(os.getpid, workers=[victim])[victim]
            os.kill(pid, signal.SIGKILL)
            killed.append(victim)

    kill_once.killed = killed
    return kill_once
