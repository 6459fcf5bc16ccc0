package codegen

// EnvURL and EnvToken name the variables a command is given to reach the
// Hub: where it is (inside the sandbox, the relay's address) and the
// agent's token (inside the sandbox, a stand-in the relay replaces).
const (
	EnvURL   = "MASSGEN_TOOLS_URL"
	EnvToken = "MASSGEN_TOOLS_TOKEN"
)

// clientPy is .mcp/client.py: upstream's functions (call_mcp_tool,
// call_mcp_tool_async, list_servers, get_server_config, SERVERS), with
// each call posted to massgen's Hub instead of a copy of the server
// started here. Standard library only: it runs with whatever Python the
// sandbox shows.
const clientPy = `"""
MCP Client for Tool Execution

This module handles MCP protocol communication for tool wrappers.
It's hidden from agents - they only interact with tool wrappers in servers/.

Each call goes to MassGen, which runs the MCP servers and calls the tool
for this agent (the address and token are in the environment of every
command MassGen runs for it: MASSGEN_TOOLS_URL, MASSGEN_TOOLS_TOKEN).

DO NOT MODIFY THIS FILE - it's auto-generated and managed by MassGen.
"""

import asyncio
import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict

# Load server configurations
_config_path = Path(__file__).parent / 'servers.json'
if _config_path.exists():
    with open(_config_path) as f:
        SERVERS = json.load(f)
else:
    SERVERS = {}


def call_mcp_tool(server: str, tool: str, arguments: Dict[str, Any]) -> Any:
    """Execute an MCP tool call (synchronous).

    Args:
        server: MCP server name
        tool: Tool name
        arguments: Tool arguments dict (None values are left out)

    Returns:
        The tool's result as text

    Raises:
        ValueError: If server not configured
        RuntimeError: If the call fails or the tool reports an error
    """
    if server not in SERVERS:
        raise ValueError(
            f"MCP server '{server}' not configured. "
            f"Available servers: {list(SERVERS.keys())}"
        )
    url = os.environ.get("` + EnvURL + `")
    token = os.environ.get("` + EnvToken + `")
    if not url or not token:
        raise RuntimeError(
            "MassGen's tool endpoint is not reachable from here: run this "
            "with execute_command (its environment has ` + EnvURL + ` and ` + EnvToken + `)"
        )
    args = {k: v for k, v in (arguments or {}).items() if v is not None}
    body = json.dumps({"server": server, "tool": tool, "arguments": args}).encode()
    req = urllib.request.Request(
        url.rstrip("/") + "/call",
        data=body,
        headers={"Content-Type": "application/json", "Authorization": "Bearer " + token},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=600) as resp:
            out = json.loads(resp.read().decode())
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"Error calling {server}.{tool}: {e.read().decode(errors='replace').strip()}") from None
    except urllib.error.URLError as e:
        raise RuntimeError(f"Error calling {server}.{tool}: MassGen's tool endpoint: {e.reason}") from None
    if out.get("is_error"):
        raise RuntimeError(f"Error calling {server}.{tool}: {out.get('content', '')}")
    return out.get("content", "")


async def call_mcp_tool_async(server: str, tool: str, arguments: Dict[str, Any]) -> Any:
    """Execute an MCP tool call (async version)."""
    return await asyncio.to_thread(call_mcp_tool, server, tool, arguments)


def list_servers() -> list:
    """List all configured MCP servers."""
    return list(SERVERS.keys())


def get_server_config(server: str) -> Dict[str, Any]:
    """Get configuration for a specific server."""
    return SERVERS.get(server, {})


async def cleanup():
    """Nothing to clean up: MassGen owns the servers."""
    return None
`

// Env is a command's environment for reaching the Hub at url with token
// (a Route's, inside the sandbox).
func Env(url, token string) []string {
	return []string{EnvURL + "=" + url, EnvToken + "=" + token}
}
