"""doiget's TDM sources: one module per publisher, each reachable only with its grant."""
