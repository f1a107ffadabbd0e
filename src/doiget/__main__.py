"""``python -m doiget`` runs the command line."""

from doiget.cli.main import run

run()
