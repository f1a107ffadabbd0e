"""Reference verification: a cited work matched to the scholarly record.

:mod:`~doiget.verify.cited` is the input (a cited work read from BibTeX, CSL-JSON,
RIS or free text by :mod:`~doiget.verify.readers`), :mod:`~doiget.verify.contracts`
the verdict rows, :mod:`~doiget.verify.service` the lookups and the decision. The
CLI (``doiget verify``), the MCP tool (``doiget_verify_references``) and any core
that needs to know which real work a citation means call this package.
"""
