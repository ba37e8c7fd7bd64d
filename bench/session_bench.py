"""`python -m bench.session_bench`: why mcpwire starts a server in a process group, not a session, of its own.

On Linux each session is a scheduling group of its own (autogroup): the CPU is shared between
groups first, so a server alone in a new session competes like one more user of the machine, and
on a busy one each wake-up waits longer. The same bare loop (write a line, readline) on
`server/discover` is timed with its server in our session and in a new one, beside `StdioWire`
(whose server is in our session, in a process group of its own), in turns as in
`bench.mcpwire_bench`. The ratios are the median of per-round p50 ratios to the bare loop in our
session. On a quiet machine the two bare loops are about equal; the gap opens with the load.
"""

import os
import sys

from bench.mcpwire_bench import BareStdio, interleaved, load, pooled, report
from mcpwire import StdioWire


def main() -> int:
    print(f"{os.cpu_count()} CPUs, {load()} at the start; "
          f"autogroup {'on' if _autogroup() else 'off or not Linux'}")
    ours, own, wire = BareStdio(), BareStdio(new_session=True), StdioWire.labserver()
    try:
        wire.request("server/discover", timeout=60)
        rounds = interleaved({"bare loop, our session": lambda: ours.call("server/discover", {}),
                              "bare loop, new session": lambda: own.call("server/discover", {}),
                              "mcpwire StdioWire": lambda: wire.request("server/discover")})
    finally:
        ours.close()
        own.close()
        wire.close()
    report("stdio: server/discover round trip", pooled(rounds), "bare loop, our session", rounds)
    print(f"({load()} at the end)")
    return 0


def _autogroup() -> bool:
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as flag:
            return flag.read().strip() == "1"
    except OSError:
        return False


if __name__ == "__main__":
    sys.exit(main())
