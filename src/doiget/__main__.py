"""``python -m doiget`` runs the program."""

from doiget.entry import main

# Guarded: a worker process started by spawn imports this module under another name.
if __name__ == "__main__":
    main()
