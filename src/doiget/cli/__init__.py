"""The command line: groups that mirror the toolsets, plus ``serve``."""
