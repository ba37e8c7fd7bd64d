"""`python -m bench` (or `make bench`): every benchmark of the kit, one after the other.

Each prints the kit against its baseline as ratios measured in the same run, so the
figures compare across machines even when the absolute times do not.
"""

import subprocess
import sys

BENCHMARKS = ["bench.labserver_bench", "bench.mcpwire_bench", "bench.load_bench", "bench.tap_bench", "bench.grade_bench",
              "bench.tasks_bench", "bench.session_bench", "bench.test_run_bench"]


def main() -> int:
    failed = []
    for module in BENCHMARKS:
        print(f"== {module}", flush=True)
        if subprocess.run([sys.executable, "-m", module]).returncode != 0:
            failed.append(module)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
