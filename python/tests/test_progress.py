"""Progress lines from stream events, without running massgen."""

from massgen._progress import describe


def test_a_warning_reads_as_the_command_line_prints_it():
    assert describe({"type": "warning", "where": "c.yaml:2:1", "text": "unknown_key: ignored"}) == "c.yaml:2:1: warning: unknown_key: ignored"
    assert describe({"type": "warning", "text": "writing logs: disk full"}) == "warning: writing logs: disk full"
