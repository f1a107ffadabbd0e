"""The MCP face of doiget: toolsets, input validation and the stdio server."""
