"""`python -m labserver.warm_session -- COMMAND...`: run a command with one warm starter for its whole session.

`make lab` (and Binder's start script) run JupyterLab this way. Every kernel JupyterLab starts inherits
`LABSERVER_WARM`, so `python -m labserver` in a lesson forks a fresh lab from the starter, which imported
the SDK once, instead of importing it again (about 1.5 s a start). The learner's process is the same either
way: the stand-in has the lab's stdin, stdout and stderr, passes on signals and exits as the lab does
(`labserver.warm`). Set `LABSERVER_WARM` to an empty value to start labs cold: for one kernel with
`%env LABSERVER_WARM=`, for a whole session with `make lab WARM_LABS=0`.

The starter ends with the session: when the command exits, and also when this process is killed outright,
because the starter watches its stdin, whose other end only this process holds.
"""

import signal
import subprocess
import sys

from labserver.warm import warm_starter

# Ctrl-C in a terminal reaches the whole foreground group, JupyterLab included, which asks before it stops:
# passing SIGINT on as well would answer its question with a second one. The others come to this process alone.
PASSED_ON = (signal.SIGTERM, signal.SIGHUP)


def main(argv: list[str]) -> int:
    command = argv[argv.index("--") + 1:] if "--" in argv else argv
    if not command:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    # JupyterLab starts at once; the starter imports the lab meanwhile (a lab asked for sooner starts cold).
    with warm_starter(ready_first=False):
        child = subprocess.Popen(command)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        for signum in PASSED_ON:
            signal.signal(signum, lambda signum, _: child.send_signal(signum))
        return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
