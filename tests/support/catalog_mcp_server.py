"""A small MCP server over stdio whose tools are named in a JSON file (``{name: description}``),
each taking no arguments: the skill-source contract's catalog as MCP tools.

    python tests/support/catalog_mcp_server.py TOOLS.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer


def _nothing() -> str:
    return ""


def main() -> None:
    named: dict[str, str] = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    server = MCPServer("catalog")
    for name, description in named.items():
        server.add_tool(_nothing, name=name, description=description)
    server.run("stdio")


if __name__ == "__main__":
    main()
