"""A crowd study's settings as a command line gives them, and the links and completion codes to
paste into the platform: shared by `study create --crowd` and `study crowd`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from annotate.cli.output import say, warn
from annotate.errors import UserError
from annotate.wording import shell_word

if TYPE_CHECKING:
    from annotate.protocol.crowd_config import CrowdConfig

DEFAULT_URL = "https://YOUR-SERVER/"
"""Shown in the links to paste until `--url` names the address `annotate serve` is reached at."""


COMMAND_LINE_KEYS = {
    "public_url": "--url",
    "training_study_id": "--training-study",
    "test_study_id": "--test-study",
    "study_ids": "--platform-study",
}
"""The crowd settings' keys as the command line names them (its mistakes name the option)."""


def crowd_settings(
    platform: str | None,
    config_path: Path | None,
    platform_studies: list[str],
    *,
    keep: CrowdConfig | None = None,
    training_study: str | None = None,
    test_study: str | None = None,
    url: str | None = None,
) -> CrowdConfig:
    """The settings a command line gives: the TOML file (if any), the platform, extra study
    ids, the page's public address (`--url`, else the file's, else the one stored); every
    outcome with a code (kept from `keep`, the stored settings, where it had one)."""
    from annotate.protocol.crowd_config import (
        keep_stored,
        read_config_file,
        require_unique_codes,
        validate_config,
        with_codes,
    )

    if config_path is not None:
        data = read_config_file(config_path, platform).model_dump()
    elif keep is not None:
        data = keep.model_dump()
        if platform is not None and platform != keep.platform:
            data["platform"] = platform
    elif platform is not None:
        data = {"platform": platform}
    else:
        raise UserError("say which platform: --crowd prolific|mturk|link (or --config FILE)")
    data["study_ids"] = list(dict.fromkeys([*data.get("study_ids", []), *platform_studies]))
    if training_study is not None:
        data["training_study_id"] = training_study
    if test_study is not None:
        data["test_study_id"] = test_study
    if url is not None:
        data["public_url"] = url
    data = keep_stored(data, keep)
    origin = str(config_path) if config_path else "the command line"
    config = validate_config(data, origin, None if config_path else COMMAND_LINE_KEYS)
    require_unique_codes(config, origin)
    return with_codes(config, keep.codes if keep else None)


def print_crowd(study: str, config: CrowdConfig) -> None:
    from annotate.protocol.crowd import study_link
    from annotate.protocol.crowd_config import A_STUDY_ON

    url = config.public_url
    page = url or DEFAULT_URL
    say(f"{study}: {A_STUDY_ON[config.platform]}; workers arrive by link, no token needed")
    roles = config.accepted
    if config.platform == "prolific" and not roles:
        word = shell_word(study)
        warn(
            f"warning: no Prolific study accepted yet: with an API token, `annotate prolific "
            f"create {word} --url URL --hourly-rate RATE` drafts them on Prolific; without "
            f"one, `annotate study crowd {word} --platform-study STUDY_ID` once the Prolific "
            "study exists"
        )
    for role, what in (("all", "every phase"), ("training", "training"), ("test", "test")):
        ids = [s for s, r in roles.items() if r == role]
        if role == "all" and (ids or not roles):
            # Prolific takes no study until one is accepted (the warning above says how).
            anyone = "no study yet" if config.platform == "prolific" else "any study"
            say(f"  link for {what} ({', '.join(ids) or anyone}):")
            say(f"    {study_link(page, config, role)}")
        elif ids:
            say(f"  link for {what} (platform study {ids[0]}):")
            say(f"    {study_link(page, config, role)}")
    say("  completion codes:")
    for outcome, code in config.codes.items():
        say(f"    {outcome:<14} {code}")
    if url is None:
        say(f"  (replace {DEFAULT_URL} with the address of `annotate serve`: --url URL)")
    else:
        say(f"  `annotate serve {shell_word(study)}` takes {url} as its public address")
