"""A tiny MCP server over stdio (newline-delimited JSON-RPC), standard
library only. massgen's tests start it as `python3 mcp_server.py` through a
pyenv shim under bubblewrap. Its tools' arguments are named so that
massgen's guard does not take them for paths: what they reach is up to the
sandbox alone.
"""
import json
import os
import sys

TOOLS = [
    {"name": "whoami", "description": "The interpreter running this server.",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "read", "description": "The text of a file, or why it cannot be read.",
     "inputSchema": {"type": "object", "properties": {"what": {"type": "string"}}, "required": ["what"]}},
    {"name": "list", "description": "The names in a directory, or why they cannot be listed.",
     "inputSchema": {"type": "object", "properties": {"where": {"type": "string"}}, "required": ["where"]}},
]


def call(name, args):
    if name == "whoami":
        return "executable %s version %s" % (sys.executable, sys.version.split()[0])
    try:
        if name == "read":
            with open(args["what"]) as f:
                return "CONTENT " + f.read()
        if name == "list":
            return "NAMES %s END" % " ".join(sorted(os.listdir(args["where"])))
    except OSError as e:
        return "DENIED %s: %s" % (type(e).__name__, e)
    raise ValueError("unknown tool " + name)


def answer(msg):
    method, params = msg.get("method"), msg.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}}, "serverInfo": {"name": "py", "version": "1"}}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        text = call(params["name"], params.get("arguments") or {})
        return {"content": [{"type": "text", "text": text}]}
    return {}


def main():
    print("python MCP server up:", sys.executable, file=sys.stderr, flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        if "id" not in msg:
            continue  # a notification
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": answer(msg)}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
