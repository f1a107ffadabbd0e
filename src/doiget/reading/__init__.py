"""Reading a stored paper through: its outline, its text in pieces, and quotation checks."""
