"""A small MCP server for Colloquy's API tests (tests/api/mcp.rs), on the `mcp` package.

    server.py stdio            its tools over stdin/stdout
    server.py http PORT        the same over streamable HTTP at http://127.0.0.1:PORT/mcp
    server.py empty            stdio, listing no tools
    server.py names            stdio, one tool for each name in $TOOL_NAMES (comma-separated),
                               answering "mcp NAME" (a server listing Colloquy's own names)

Tools: `echo` (its text, after $ECHO_PREFIX), `add` (read-only), `crash` (the process exits
mid-call, as a failing server would).
"""

import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
server = MCPServer("colloquy-test-server")

if mode == "names":

    def answering(name):
        def answer(query: str = "") -> str:
            return f"mcp {name}"

        return answer

    for name in os.environ.get("TOOL_NAMES", "").split(","):
        server.add_tool(answering(name), name=name, description=f"The MCP server's own {name}.")
elif mode != "empty":

    @server.tool()
    def echo(text: str) -> str:
        """Echoes the text back."""
        return os.environ.get("ECHO_PREFIX", "") + text

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def add(a: int, b: int) -> str:
        """Adds two integers."""
        return str(a + b)

    @server.tool()
    def crash() -> str:
        """Exits the server process mid-call."""
        print("crash tool called: exiting", file=sys.stderr, flush=True)
        os._exit(3)

print(f"test MCP server starting ({mode})", file=sys.stderr, flush=True)
if mode == "http":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
else:
    server.run("stdio")
