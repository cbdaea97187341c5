"""`python -m chatmend`: the command line."""

from chatmend.cli import main

raise SystemExit(main())
