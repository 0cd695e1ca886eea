"""Nova over MCP: the server (Task Manager tools + Nova's own) and extra tools for agents."""
