"""A small stdio MCP server lending one tool, for the review agent's extra-tools tests."""

from mcp.server.fastmcp import FastMCP

server = FastMCP("team", log_level="WARNING")


@server.tool()
def owner_of(path: str) -> str:
    """Who owns a file of the repository."""
    return f"{path} is owned by alice (team payments)"


if __name__ == "__main__":
    server.run("stdio")
