"""The annotator's terminal app (Textual): `annotate label STUDY --as NAME`.

Everything here drives `annotate.protocol.session.AnnotatorSession`; no protocol rule lives in
the screen code. Import `annotate.tui.app.create_app` lazily: Textual costs ~0.3 s to import.
"""
