"""The annotator page (`annotate serve`): HTML over the engine, without the terminal app.
`app.create_app` builds it; `serve.py` runs it on uvicorn."""
