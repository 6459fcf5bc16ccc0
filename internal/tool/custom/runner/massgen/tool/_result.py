# -*- coding: utf-8 -*-
"""The result of a custom tool, with the names and fields of MassGen's
massgen.tool._result, so tool files written for MassGen run unchanged."""

import uuid
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union


@dataclass
class TextContent:
    """Text for the model."""

    data: str
    block_type: str = "text"


@dataclass
class ImageContent:
    """An image: base64 data or a path."""

    data: str
    block_type: str = "image"


@dataclass
class AudioContent:
    """Audio: base64 data or a path."""

    data: str
    block_type: str = "audio"


@dataclass
class ExecutionResult:
    """What a tool returns; an async generator tool yields several (the
    last one has is_final)."""

    output_blocks: List[Union[TextContent, ImageContent, AudioContent]] = field(default_factory=list)
    meta_info: Optional[Dict[str, Any]] = None
    is_streaming: bool = False
    is_final: bool = True
    is_log: bool = False
    was_interrupted: bool = False
    result_id: str = field(default_factory=lambda: uuid.uuid4().hex)
