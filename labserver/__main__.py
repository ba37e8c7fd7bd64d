"""`python -m labserver`: start the lab (from a warm starter when a test run has one: see labserver.warm)."""

import sys

from labserver.warm import start_warm

code = start_warm(sys.argv[1:])
if code is None:
    from labserver.cli import main

    main()
else:
    sys.exit(code)
