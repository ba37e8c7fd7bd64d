"""Sits between a report and the server it starts (run as a script, standard library only).

`python ex22_recorder.py FOLDER COMMAND...` runs COMMAND, passes every byte both ways unchanged (the server's stderr
is this process's own), and keeps a copy of what the report sent (NAME.jsonl) and of what the server answered
(NAME.replies) in two files of its own in FOLDER, each written before the bytes go on: the check reads the frames a
report sent to each server, in which order, and the very lines that came back to them (their ids are the report's).

`python ex22_recorder.py FOLDER` runs the server FOLDER/command.json names, so the check hands out commands that all
look alike: a report learns a server's era only from what the server answers. There {"command": [...]} may add
"warm": {"socket": PATH, "argv": [...]}, a warm starter (labserver.warm, or checks/ex22_warm.py for the reference
servers) that forks the server with these arguments, already imported; the recorder hands it the server's ends of
its pipes as labserver.warm's stand-in does, and runs the command itself when no starter listens there.
It imports little and starts no stand-in: a check starts it seven times for each report.
"""

import json
import os
import socket
import sys
import threading


def write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]


def pass_down(from_server, replies):
    """The server's stdout to ours (and to the replies file), until either side is gone."""
    try:
        while chunk := os.read(from_server, 65536):
            write_all(replies, chunk)
            write_all(1, chunk)
    except OSError:  # the report stopped reading
        pass
    os.close(1)


def start(command, warm):
    """Start the server on two new pipes: (to its stdin, from its stdout, a function that waits for its exit code)."""
    its_stdin, to_server = os.pipe()
    its_stdout, from_server = os.pipe()
    link = hand_over(warm, its_stdin, from_server) if warm else None
    if link is None:
        # os.pipe's descriptors are not inherited: the server gets its two ends as stdin and stdout, and no others.
        pid = os.posix_spawnp(command[0], command, os.environ, file_actions=[
            (os.POSIX_SPAWN_DUP2, its_stdin, 0), (os.POSIX_SPAWN_DUP2, from_server, 1)])

        def exit_code():
            return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    else:
        def exit_code():
            status = link.recv(64)
            return os.waitstatus_to_exitcode(int(status)) if status else 1
    os.close(its_stdin)
    os.close(from_server)
    return to_server, its_stdout, exit_code


def hand_over(warm, its_stdin, from_server):
    """Ask the warm starter to fork the server on these descriptors (labserver.warm's protocol); the link to it, on which
    the exit status comes, or None when no starter listens there."""
    link = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        link.connect(warm["socket"])
    except OSError:
        link.close()
        return None
    request = {"argv": warm["argv"], "cwd": os.getcwd(), "env": dict(os.environ), "ignored": []}
    socket.send_fds(link, [json.dumps(request).encode()], [its_stdin, from_server, 2])
    link.recv(64)  # the server's pid: it runs
    return link


def main(folder, command, warm=None):
    name = os.path.join(folder, os.urandom(8).hex())
    log = os.open(name + ".jsonl", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    replies = os.open(replies_path(name + ".jsonl"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    to_server, from_server, exit_code = start(command, warm)
    answers = threading.Thread(target=pass_down, args=(from_server, replies), daemon=True)
    answers.start()
    while chunk := os.read(0, 65536):
        write_all(log, chunk)
        try:
            write_all(to_server, chunk)
        except OSError:  # the server ended
            break
    os.close(to_server)
    answers.join()
    os.close(log)
    os.close(replies)
    return exit_code()


def command_path(folder):
    """Where the server a recorder started with FOLDER alone runs is named."""
    return os.path.join(folder, "command.json")


def replies_path(sent_path):
    """Where the replies of the process whose sent frames are in sent_path are kept."""
    return str(sent_path).removesuffix(".jsonl") + ".replies"


if __name__ == "__main__":
    if sys.argv[2:]:
        sys.exit(main(sys.argv[1], sys.argv[2:]))
    with open(command_path(sys.argv[1]), encoding="utf-8") as named:
        server = json.load(named)
    sys.exit(main(sys.argv[1], server["command"], server.get("warm")))
