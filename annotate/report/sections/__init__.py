"""The report's sections, one module each, listed in `registry` in the order every view shows
them. A module defines its `SECTION` (`base.ReportSection`): its tables, read from the typed
report with the one cell formatter (`annotate.report.cells`), and, for a section that is not
a field of the built-in report, how it is computed. Adding a section is one module here plus
its line in `registry`."""
