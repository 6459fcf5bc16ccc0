# -*- coding: utf-8 -*-
"""Custom tools for the tests of package custom: one of each kind."""

import asyncio
import os
from typing import Dict, List, Literal, Optional

from massgen.tool._result import ExecutionResult, ImageContent, TextContent


def add(a: int, b: int = 2) -> ExecutionResult:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number,
            which may be left out.
    """
    print("noise on stdout must not break the protocol")
    return ExecutionResult(output_blocks=[TextContent(data=f"{a} + {b} = {a + b}")])


async def greet(name: str, greeting: str, punctuation: str = "!") -> ExecutionResult:
    """Greet someone.

    A longer paragraph that belongs to the description too.

    Args:
        name (str): Who to greet.
        greeting: The greeting word (preset in the config).
        punctuation: How to end.

    Returns:
        The greeting.
    """
    await asyncio.sleep(0)
    return ExecutionResult(output_blocks=[TextContent(data=f"{greeting}, {name}{punctuation}")])


async def count(n: int):
    """Count to n, streaming."""
    for i in range(1, n + 1):
        yield ExecutionResult(output_blocks=[TextContent(data=f"counted {i}")], is_streaming=True, is_final=i == n)


def fails(reason: str):
    """Always raises."""
    raise ValueError(f"cannot do it: {reason}")


def typed(
    words: List[str],
    scores: Dict[str, float],
    mode: Literal["fast", "slow"],
    flag: bool = False,
    note: Optional[str] = None,
    anything=None,
) -> str:
    """Every kind of hint.

    Args:
        words: Some words.
        mode: How to go.
    """
    return f"{len(words)} words, mode {mode}"


def picture() -> ExecutionResult:
    """Returns text and an image."""
    return ExecutionResult(output_blocks=[TextContent(data="here it is"), ImageContent(data="aGVsbG8=")])


def plain(x: int):
    """Returns a plain value, not an ExecutionResult."""
    return {"double": x * 2}


async def wait(seconds: float) -> str:
    """Sleeps (for timeouts and concurrency)."""
    await asyncio.sleep(seconds)
    return f"waited {seconds}"


def die():
    """Ends the runner, as a broken tool could."""
    os._exit(3)
