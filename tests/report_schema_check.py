"""Every JSON report against the published schema: tests/conftest.py turns `checking_reports`
on for the whole suite, so each report a test turns into JSON (`to_json()`: `report --format
json`, the demo's report file, the Python API) is validated where it is made."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

from jsonschema import Draft7Validator
from jsonschema.exceptions import best_match

from annotate.report.model.base import ReportModel
from annotate.report.model.schema import BenchmarkReport, StudyReport, report_schema


@functools.cache
def _validator(name: str) -> Draft7Validator:
    """A validator of one top-level object of the schema (a clearer error than the union's)."""
    schema = report_schema()
    Draft7Validator.check_schema(schema)
    return Draft7Validator({"$ref": f"#/definitions/{name}", **schema})


def check_report(data: dict[str, Any], name: str = "StudyReport") -> None:
    """Fail with the first key that breaks the schema."""
    error = best_match(_validator(name).iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        raise AssertionError(f"the {name} JSON breaks its schema at {where}: {error.message}")


@contextlib.contextmanager
def checking_reports() -> Iterator[None]:
    original = ReportModel.to_json

    def to_json(self: ReportModel) -> dict[str, Any]:
        data = original(self)
        if isinstance(self, StudyReport | BenchmarkReport):
            check_report(data, type(self).__name__)
        return data

    ReportModel.to_json = to_json  # type: ignore[method-assign]
    try:
        yield
    finally:
        ReportModel.to_json = original  # type: ignore[method-assign]
