"""Put this folder first on PYTHONPATH to run the tests as on a platform without fcntl
(Windows): `import fcntl` fails, as it does there. `.ci/run` runs the unit tests so."""

raise ImportError("fcntl is hidden (tests/no_fcntl): the store must work without it")
