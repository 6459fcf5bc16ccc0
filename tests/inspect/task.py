"""An inspect-ai task over quiz.jsonl (massgen eval's dataset format): each
item's question as the input, its target matched at the end of the reply,
where the simulated models state their answer ("ANSWER: 391")."""
import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import match
from inspect_ai.solver import generate


@task
def quiz():
    items = [json.loads(line) for line in (Path(__file__).parent / "quiz.jsonl").read_text().splitlines() if line.strip()]
    return Task(
        dataset=[Sample(id=it["id"], input=it["question"], target=it["target"]) for it in items],
        solver=generate(),
        scorer=match(),
    )
