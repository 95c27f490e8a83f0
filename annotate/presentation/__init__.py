"""What both front ends show, decided once below both: the terminal app (annotate.tui) and the
HTML page (annotate.web.page) draw the same guidelines, key lists, item layout, highlight
spans, training feedback and progress line from these functions, each in its own widgets or
templates. Nothing here imports a front end (textual, tui, web, cli): text comes out as plain
strings, spans or `SafeText` (rich text, never markup), which the terminal shows as is and the
page reads as `.plain`.
"""
