"""pytest plugin for the conformance run: a unittest test whose subTest blocks
failed is reported FAILED, not PASSED.

pytest 9 reports each failing `with self.subTest(...)` block of a unittest
TestCase as its own SUBFAILED line, but then reports the test itself as
PASSED (its own count of failed subtests only sees the `subtests` fixture).
MLX's suite sweeps most quantization, load and conv cases inside subTest
blocks, so without this plugin a test that fails in every case reads as a
pass and would enter the ratchet. Loaded through PYTEST_PLUGINS by
`make conformance`; it changes nothing for tests without subtests.
"""
from collections import defaultdict

import pytest

_failed_subtests = defaultdict(int)


def _is_subtest_report(report):
    # SubtestReport (pytest >= 9) carries the subTest's context.
    return hasattr(report, "context") and type(report).__name__.startswith("Subtest")


def pytest_runtest_logreport(report):
    if _is_subtest_report(report) and report.failed:
        _failed_subtests[report.nodeid] += 1


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(report, config):
    if report.when != "call" or _is_subtest_report(report):
        return None
    failed = _failed_subtests.get(report.nodeid, 0)
    if failed and not report.failed:
        # Both a pass and a skip after failed subtests are failures.
        report.outcome = "failed"
        report.longrepr = f"{failed} failed subTest block(s)"
    return None
