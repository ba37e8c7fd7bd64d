"""Sits between a report and the server it starts (run as a script, standard library only).

`python ex22_recorder.py FOLDER COMMAND...` runs COMMAND, passes every byte both ways unchanged (the server's stderr
is this process's own), and keeps a copy of what the report sent (NAME.jsonl) and of what the server answered
(NAME.replies) in two files of its own in FOLDER, each written before the bytes go on: the check reads the frames a
report sent to each server, in which order, and the very lines that came back to them (their ids are the report's).
"""

import os
import subprocess
import sys
import tempfile
import threading


def pass_down(server, replies):
    """The server's stdout to ours (and to the replies file), until either side is gone."""
    try:
        while chunk := os.read(server.stdout.fileno(), 65536):
            replies.write(chunk)
            os.write(1, chunk)
    except OSError:  # the report stopped reading
        pass
    os.close(1)


def main(folder, command):
    _, log_path = tempfile.mkstemp(dir=folder, suffix=".jsonl")
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    with open(log_path, "ab", buffering=0) as log, open(replies_path(log_path), "ab", buffering=0) as replies:
        answers = threading.Thread(target=pass_down, args=(server, replies), daemon=True)
        answers.start()
        while chunk := os.read(0, 65536):
            log.write(chunk)
            try:
                server.stdin.write(chunk)
            except OSError:  # the server ended
                break
        server.stdin.close()
        answers.join()
    return server.wait()


def replies_path(sent_path):
    """Where the replies of the process whose sent frames are in sent_path are kept."""
    return str(sent_path).removesuffix(".jsonl") + ".replies"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
