"""The pins: constraints.txt gives each package tested one exact version, and every install uses it.

pyproject.toml keeps ranges for the library's users; constraints.txt pins the versions the
tests run with, and tox (PIP_CONSTRAINT) and the README's test command (which .ci/run
calls) install through it.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def pins() -> dict[str, str]:
    """constraints.txt as {canonical name: exact version}; every line is one `name==version`."""
    found: dict[str, str] = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        match = re.fullmatch(r"([A-Za-z0-9._-]+)==([A-Za-z0-9.+!-]+)", text)
        assert match, f"not an exact pin: {line!r}"
        name = canonicalize_name(match[1])
        assert name not in found, f"pinned twice: {name}"
        found[name] = match[2]
    return found


def named_requirements() -> list[Requirement]:
    """Every requirement pyproject.toml names: the build's, the dependencies, every extra's."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    lines = [*project["build-system"]["requires"], *project["project"]["dependencies"]]
    for extra in project["project"]["optional-dependencies"].values():
        lines += extra
    return [Requirement(line) for line in lines]


def test_every_requirement_is_pinned_within_its_range() -> None:
    exact = pins()
    requirements = named_requirements()
    assert len(requirements) > 10
    for requirement in requirements:
        name = canonicalize_name(requirement.name)
        assert name in exact, f"{requirement.name} has no line in constraints.txt"
        assert requirement.specifier.contains(exact[name], prereleases=True), (
            f"constraints.txt pins {name}=={exact[name]}, outside pyproject.toml's {requirement}"
        )


def test_tox_and_every_tox_env_install_through_the_constraints() -> None:
    exact = pins()
    assert "tox" in exact
    tox = configparser.ConfigParser()
    tox.read(ROOT / "tox.ini", encoding="utf-8")
    for section in ("pkgenv", "testenv"):
        settings = dict(
            line.split("=", 1) for line in tox[section]["set_env"].strip().splitlines() if "=" in line
        )
        assert {k.strip(): v.strip() for k, v in settings.items()}["PIP_CONSTRAINT"] == (
            "{toxinidir}/constraints.txt"
        ), section
    for line in tox["testenv:lint"]["deps"].split():  # the lint env's own pin agrees
        requirement = Requirement(line)
        assert str(requirement.specifier) == f"=={exact[canonicalize_name(requirement.name)]}"


def test_the_coverage_report_follows_a_failed_test_run_too() -> None:
    """tox runs commands_post whatever the commands did, and exits with the commands' failure."""
    tox = configparser.ConfigParser()
    tox.read(ROOT / "tox.ini", encoding="utf-8")
    commands = tox["testenv"]["commands"].strip().splitlines()
    after = tox["testenv"]["commands_post"].strip().splitlines()
    assert commands[-1].startswith("coverage run -m pytest"), commands
    assert after == ["coverage combine --quiet", "coverage report"]
    others = [section for section in tox.sections() if section.startswith("testenv:")]
    assert others, "the envs beside py"
    for section in others:  # each inherits testenv's unless it says otherwise: none has coverage to report
        assert tox[section].get("commands_post", None) == "", section


def test_the_ci_runs_the_readmes_test_command_which_installs_tox_pinned() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = "python3 -m pip install -q -c constraints.txt tox && python3 -m tox"
    assert f"```sh\n{command}\n```" in readme
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert command in ci
