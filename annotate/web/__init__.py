"""The annotator app in a browser (`annotate serve`): textual-serve runs one app process per
tab; this package holds its page template (no outside requests), the sign-in and the server."""
