"""Running a crowd study's Prolific side through Prolific's API (`annotate prolific …`).

- client.py: the HTTP client (httpx, the `prolific` extra): the token, retries with backoff.
- ledger.py: the request keys of calls that change money, a submission or a study.
- studies.py: drafting the studies, publishing, pausing, stopping, the admitted group, status.
- sync.py: each submission reconciled with annotate's visits.
- bonus.py: bonuses set up, shown, and paid once.

The token comes from ANNOTATE_PROLIFIC_TOKEN only and goes into the Authorization header and
nowhere else: no message, log line or stored row carries it.
"""
