"""All outbound HTTP of doiget.

Start at :class:`doiget.net.network.Network`: one per process, it hands each source
its own :class:`doiget.net.client.SourceClient`. This package's ``__init__`` imports
nothing heavy, so reading settings never loads the HTTP stack.
"""
