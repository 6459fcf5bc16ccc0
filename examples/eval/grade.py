"""A Python scorer for `massgen eval --scorer python:examples/eval/grade.py:grade`.

It is called with keyword arguments question, target (a list of accepted
answers), answer, choices and metadata, and returns a score between 0 and 1
(a number, a bool, or a dict with value, answer and explanation).
"""


def grade(question, target, answer, choices=None, metadata=None):
    last = answer.strip().splitlines()[-1] if answer.strip() else ""
    if "ANSWER:" in last:
        last = last.split("ANSWER:", 1)[1]
    said = last.strip().lower().rstrip(".")
    ok = any(said == t.strip().lower() for t in target)
    return {"value": 1.0 if ok else 0.0, "answer": said,
            "explanation": "the last line names the target" if ok else "the last line is not the target"}
