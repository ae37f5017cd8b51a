"""Drives `cautilus mcp` with the reference MCP client (the `mcp` package
from PyPI), as a coding agent would: lists the tools, lists and validates
the suites, runs a suite (whole, then one case), reads the runs, a cell's
evidence and a comparison, and makes a few requests the server must refuse
as tool errors. Prints what it saw as one JSON object.

Usage: python mcp_client.py <cautilus binary>   (from the project root)
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def field(answer, snake, camel):
    """A result's field under its name in mcp 2 (snake case) or 1 (camel)."""
    return getattr(answer, snake, getattr(answer, camel, None))


def result_of(answer):
    """The tool's JSON, or its error text."""
    if field(answer, "is_error", "isError"):
        return {"error": " ".join(c.text for c in answer.content if hasattr(c, "text"))}
    structured = field(answer, "structured_content", "structuredContent")
    if structured is not None:
        return structured
    return json.loads(answer.content[0].text)


async def main(binary):
    server = StdioServerParameters(
        command=binary, args=["mcp"], cwd=os.getcwd(), env=dict(os.environ)
    )
    seen = {}
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            seen["tools"] = [tool.name for tool in listed.tools]

            async def call(name, arguments=None):
                return result_of(await session.call_tool(name, arguments or {}))

            seen["suites"] = await call("list_suites")
            seen["validate"] = await call("validate", {"suite": "support"})
            seen["run"] = await call("run", {"suite": "support"})
            seen["runOne"] = await call("run", {"suite": "support", "cases": ["refund"]})
            seen["runs"] = await call("list_runs", {"suite": "support"})
            first = seen["run"]["run"]["id"]
            second = seen["runOne"]["run"]["id"]
            seen["summary"] = await call("run_summary", {"run": first})
            seen["cell"] = await call("cell_evidence", {"run": first, "case": "refund"})
            seen["comparison"] = await call("compare_runs", {"a": first, "b": second})
            seen["progress"] = await call("suite_progress", {"suite": "support"})
            seen["badRun"] = (await call("run_summary", {"run": "../../etc"}))["error"]
            seen["badSuite"] = (await call("run", {"suite": "nope"}))["error"]
            try:
                extra = await call("run", {"suite": "support", "provider": "openai"})
                seen["extraArgument"] = extra.get("error", "")
            except Exception as error:  # a protocol error is a refusal too
                seen["extraArgument"] = str(error) or "refused"
            # Still answering after the refusals.
            seen["after"] = await call("list_runs", {"limit": 1})
    print(json.dumps(seen))


asyncio.run(main(sys.argv[1]))
