"""Sits between a report and the server it starts (run as a script, standard library only).

`python ex22_recorder.py FOLDER COMMAND...` runs COMMAND, passes every byte both ways unchanged (the server's stderr
is this process's own), and keeps a copy of what the report sent in a file of its own in FOLDER, written before the
bytes go on, so the check can read the frames a report sent to each server and in which order.
"""

import os
import subprocess
import sys
import tempfile
import threading


def pass_down(server):
    """The server's stdout to ours, until either side is gone."""
    try:
        while chunk := os.read(server.stdout.fileno(), 65536):
            os.write(1, chunk)
    except OSError:  # the report stopped reading
        pass
    os.close(1)


def main(folder, command):
    _, log_path = tempfile.mkstemp(dir=folder, suffix=".jsonl")
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    answers = threading.Thread(target=pass_down, args=(server,), daemon=True)
    answers.start()
    with open(log_path, "ab", buffering=0) as log:
        while chunk := os.read(0, 65536):
            log.write(chunk)
            try:
                server.stdin.write(chunk)
            except OSError:  # the server ended
                break
    server.stdin.close()
    answers.join()
    return server.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
