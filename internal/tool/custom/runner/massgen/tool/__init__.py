# The result types a custom tool returns (see _result).
from ._result import AudioContent, ExecutionResult, ImageContent, TextContent

__all__ = ["AudioContent", "ExecutionResult", "ImageContent", "TextContent"]
