"""Cancellation stops the binary, and its requests with it, at once."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from pathlib import Path

import massgen
from conftest import PY, child_env, processes_with


async def _until_started(marker: str) -> None:
    for _ in range(600):  # bounded: 60 s
        if processes_with(marker):
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the binary never started")


async def test_task_cancel_stops_the_binary(tmp_path: Path, hanging_config: Path, marker: str) -> None:
    task = asyncio.create_task(massgen.run(marker, config=hanging_config, cwd=tmp_path))
    await _until_started(marker)
    await asyncio.sleep(0.3)  # the agents' requests are in flight (they hang)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    else:
        raise AssertionError("the run completed although its requests hang")
    assert processes_with(marker) == []


def test_keyboard_interrupt_in_run_sync_stops_the_binary(tmp_path: Path, hanging_config: Path, marker: str) -> None:
    code = f"import massgen; massgen.run_sync({marker!r}, config={str(hanging_config)!r})"
    py = subprocess.Popen([PY, "-c", code], cwd=tmp_path, env=child_env(), stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while len(processes_with(marker)) < 2:  # python itself and the binary
            assert time.monotonic() < deadline, "the binary never started"
            assert py.poll() is None, py.stderr.read() if py.stderr else ""
            time.sleep(0.1)
        time.sleep(0.3)
        os.kill(py.pid, signal.SIGINT)
        _, err = py.communicate(timeout=30)
        assert "KeyboardInterrupt" in err
    finally:
        if py.poll() is None:
            py.kill()
    assert processes_with(marker) == []
