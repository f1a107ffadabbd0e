"""OAuth 2.1 for the HTTP server: doiget as a resource server.

What the authorization part of the MCP specification (revision 2025-11-25, the one
the MCP SDK in use, mcp 2.3, implements) asks of a server: Protected Resource
Metadata (RFC 9728) naming the authorization server and the scopes, 401 with
``WWW-Authenticate: Bearer resource_metadata=...`` for a request without a valid
token, access tokens issued for this server's own URL (RFC 8707) and 403
``insufficient_scope`` for a call its token's scopes do not allow. The SDK serves the
metadata and the 401; this package validates the tokens and decides the scopes.
"""
