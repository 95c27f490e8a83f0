"""The sign-in limiter's counts: refusals make a name wait, a right sign-in clears the name's
count (not the address's), and one file is shared by a server's processes."""

from __future__ import annotations

from pathlib import Path

from annotate.web.limits import FREE_TRIES, SignInLimiter, address_key, delay, name_key


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def test_a_right_sign_in_clears_the_names_refusals_and_not_the_addresss(tmp_path: Path):
    clock = Clock()
    limiter = SignInLimiter(str(tmp_path / "limits.db"), clock=clock)
    keys = [name_key("Ana"), address_key("10.0.0.1")]
    for _ in range(FREE_TRIES + 1):
        limiter.refused(keys)
    assert limiter.wait(keys) == delay(FREE_TRIES + 1)
    clock.now += delay(FREE_TRIES + 1)  # waited: the right token gets through
    limiter.admitted(" ana ")  # the same name as typed before (case and spaces aside)
    statements: list[str] = []
    limiter._db.set_trace_callback(statements.append)
    limiter.admitted("bob")  # no refusal to clear: a read, no write to the shared file
    limiter._db.set_trace_callback(None)
    assert statements and not [s for s in statements if not s.startswith("SELECT")], statements
    assert limiter.wait([name_key("ana")]) == 0.0
    limiter.refused(keys)  # one typo later: a free try again for the name...
    assert limiter.wait([name_key("ana")]) == 0.0
    assert limiter.wait([address_key("10.0.0.1")]) > 0  # ...but the address still waits
    limiter.close()


def test_two_processes_share_one_count(tmp_path: Path):
    path = str(tmp_path / "limits.db")
    first, second = SignInLimiter(path), SignInLimiter(path)
    for _ in range(FREE_TRIES + 1):
        first.refused([name_key("ana")])
    assert second.wait([name_key("ana")]) > 0
    second.admitted("ana")
    assert first.wait([name_key("ana")]) == 0.0
    first.close()
    second.close()
