"""``python -m doiget`` runs the program."""

from doiget.entry import main

main()
