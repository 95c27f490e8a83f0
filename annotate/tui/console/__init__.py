"""The researcher's console: every study, one study live, the gate, the flags and the report
(`annotate console [STUDY]`, `annotate serve --console`)."""
