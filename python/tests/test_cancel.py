"""Cancellation stops the binary, and its requests with it, at once."""

from __future__ import annotations

import asyncio
import os
import re
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


async def test_cancel_ends_the_providers_requests(tmp_path: Path, massgen_binary: str) -> None:
    """The provider side: a separate simulator (`massgen sim serve`) sees
    every request the team had in flight end as cancelled."""
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text("models:\n  m:\n    steps: [{fault: hang}, {fault: hang}]\n")
    log = tmp_path / "sim.log"
    with log.open("w") as logf:
        sim = subprocess.Popen([massgen_binary, "sim", "serve", "--addr", "127.0.0.1:0", "--scenario", str(scenario)],
                               stderr=logf, start_new_session=True)
    try:
        base = None
        for _ in range(300):  # bounded: 30 s
            m = re.search(r"serving at (http://\S+/v1)", log.read_text())
            if m:
                base = m.group(1)
                break
            await asyncio.sleep(0.1)
        assert base, log.read_text()
        cfg = tmp_path / "team.yaml"
        cfg.write_text("agents:\n" + "".join(
            f"  - id: {a}\n    backend: {{type: chatcompletion, base_url: '{base}', api_key: k, model: m}}\n" for a in "ab"))
        port = int(base.rsplit(":", 1)[1].split("/")[0])
        task = asyncio.create_task(massgen.run("hang", config=cfg, cwd=tmp_path))
        for _ in range(600):  # bounded: 60 s until both agents' requests are open
            if _connections_to(port) >= 2:
                break
            await asyncio.sleep(0.1)
        assert _connections_to(port) >= 2
        await asyncio.sleep(0.3)  # the requests are sent on those connections
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        for _ in range(100):  # bounded: 10 s for the server to log the closed exchanges
            if log.read_text().count("outcome=cancelled") >= 2:
                break
            await asyncio.sleep(0.1)
        text = log.read_text()
        assert _connections_to(port) == 0
        assert text.count("outcome=cancelled") == 2, text
        assert "outcome=completed" not in text
    finally:
        os.killpg(sim.pid, signal.SIGTERM)
        sim.wait(timeout=30)


def _connections_to(port: int) -> int:
    """Established TCP connections to 127.0.0.1:port, from /proc/net/tcp."""
    n = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            f = row.split()
            if f[3] == "01" and int(f[2].rsplit(":", 1)[1], 16) == port:
                n += 1
    return n
