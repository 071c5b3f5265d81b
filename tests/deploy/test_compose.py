"""deploy/docker-compose.yml without Docker: it parses, has the stack ops asked for, every file it
mounts exists, secrets come from variables, and the pieces point at each other."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from argus.config.schedules import load_schedules
from tests.deploy.dockerfile import parse_dockerfile

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
_VARIABLE = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}")


def _defaults(text: str) -> str:
    """Compose interpolation with nothing set: each ``${VAR:-default}`` becomes its default."""
    return _VARIABLE.sub(lambda m: m[2] or "", text)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, Any]:
    return yaml.safe_load(_defaults(yaml.safe_dump(compose)))["services"]


def _mounts(service: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for volume in service.get("volumes", []):
        source, target, *_ = volume.split(":")
        out.append((source, target))
    return out


def test_the_stack_has_every_service(services: dict[str, Any]) -> None:
    assert set(services) == {"argus", "mongo", "mongo-seed", "postgres", "prometheus", "alertmanager", "grafana"}


def test_every_mounted_file_exists(services: dict[str, Any], compose: dict[str, Any]) -> None:
    named = set(compose.get("volumes", {}))
    for name, service in services.items():
        for source, target in _mounts(service):
            if source.startswith((".", "/")):
                assert (DEPLOY / source).exists(), f"{name}: {source} (mounted at {target}) does not exist"
            else:
                assert source in named, f"{name}: volume {source!r} is not declared"


def test_argus_is_built_from_the_repository_dockerfile(services: dict[str, Any]) -> None:
    build = services["argus"]["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == ROOT / "Dockerfile"


def test_passwords_come_from_variables_with_local_only_defaults(compose: dict[str, Any]) -> None:
    raw = (DEPLOY / "docker-compose.yml").read_text()
    for line in raw.splitlines():
        if re.search(r"PASSWORD:|://[^$\s]*:[^@\s]*@", line):
            assert "${" in line, f"a literal secret: {line.strip()}"
    defaults = {m[1]: m[2] for m in _VARIABLE.finditer(raw) if "PASSWORD" in m[1]}
    assert defaults and all(v.endswith("local-only") for v in defaults.values()), defaults


def test_argus_audits_the_seeded_collections_through_its_uri_variable(services: dict[str, Any],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    argus = services["argus"]
    env = argus["environment"]
    mounted = dict(_mounts(argus))
    schedules_file = next(s for s, t in mounted.items() if t == env["ARGUS_SCHEDULES"])
    loaded = load_schedules(DEPLOY / schedules_file)
    seeded = {p.stem for p in (DEPLOY / "demo").glob("*.jsonl")}
    seed = services["mongo-seed"]
    assert ("./demo", "/seed") in _mounts(seed)
    seed_db = seed["environment"]["SEED_MONGODB_URI"].split("/")[3].split("?")[0]
    assert loaded.schedules
    for schedule in loaded.schedules.values():
        connection = loaded.connections[schedule.connection]
        assert connection.uri_env is not None and connection.uri_env in env, f"{schedule.name}: no URI for argus"
        assert (schedule.database, schedule.collection) in {(seed_db, name) for name in seeded}
        monkeypatch.setenv(connection.uri_env, env[connection.uri_env])
        assert connection.uri().get_secret_value().startswith("mongodb://argus:")   # the read-only user
    assert argus["depends_on"]["mongo-seed"]["condition"] == "service_completed_successfully"
    assert argus["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert env["ARGUS_DATABASE_URL"].startswith("postgresql://argus:") and "@postgres:5432/argus" in env[
        "ARGUS_DATABASE_URL"]


def test_the_seed_script_imports_each_demo_file_as_a_collection(services: dict[str, Any], tmp_path: Path) -> None:
    """Run with stand-ins for mongosh and mongoimport that record their arguments (no MongoDB here)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("mongosh", "mongoimport"):
        stand_in = bin_dir / tool
        stand_in.write_text(f'#!/bin/sh\nprintf "%s\\n" "{tool} $*" >> "{tmp_path}/calls"\n')
        stand_in.chmod(0o755)
    seed_dir = tmp_path / "seed"
    seed_dir.mkdir()
    for demo in (DEPLOY / "demo").glob("*.jsonl"):
        (seed_dir / demo.name).write_text("{}\n")
    seed = services["mongo-seed"]
    script = next(s for s, t in _mounts(seed) if t == seed["entrypoint"][-1])
    text = (DEPLOY / script).read_text().replace("/seed/", f"{seed_dir}/")
    uri = seed["environment"]["SEED_MONGODB_URI"]
    result = subprocess.run(["sh", "-c", text], env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}",
                                                     "SEED_MONGODB_URI": uri}, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    imports = [line for line in (tmp_path / "calls").read_text().splitlines() if line.startswith("mongoimport")]
    assert sorted(imports) == sorted(f"mongoimport --uri {uri} --collection {p.stem} --drop --file {p}"
                                     for p in seed_dir.glob("*.jsonl"))


def test_mongo_creates_a_read_only_user_for_argus(services: dict[str, Any]) -> None:
    mongo = services["mongo"]
    [(script, _)] = [(s, t) for s, t in _mounts(mongo) if t.startswith("/docker-entrypoint-initdb.d/")]
    text = (DEPLOY / script).read_text()
    assert 'role: "read", db: "shop"' in text and "process.env.ARGUS_MONGO_PASSWORD" in text
    assert {"ARGUS_MONGO_USER", "ARGUS_MONGO_PASSWORD"} <= set(mongo["environment"])


def test_prometheus_scrapes_argus_and_loads_the_rules_it_mounts(services: dict[str, Any]) -> None:
    prometheus = services["prometheus"]
    mounted = {t: s for s, t in _mounts(prometheus)}
    config_path = next(a.split("=", 1)[1] for a in prometheus["command"] if a.startswith("--config.file="))
    config = yaml.safe_load((DEPLOY / mounted[config_path]).read_text())
    for rule_file in config["rule_files"]:
        in_container = str(Path(config_path).parent / rule_file)
        assert mounted[in_container] == "./prometheus/argus-rules.yml"
    argus_job = next(j for j in config["scrape_configs"] if j["job_name"] == "argus")
    port = parse_dockerfile((ROOT / "Dockerfile").read_text()).final.last("EXPOSE")
    assert port is not None
    assert argus_job["static_configs"][0]["targets"] == [f"argus:{port.args}"]
    [alertmanagers] = config["alerting"]["alertmanagers"]
    assert alertmanagers["static_configs"][0]["targets"] == ["alertmanager:9093"]
    alertmanager = services["alertmanager"]
    am_config = next(a.split("=", 1)[1] for a in alertmanager["command"] if a.startswith("--config.file="))
    assert {t: s for s, t in _mounts(alertmanager)}[am_config] == "./alertmanager/alertmanager.yml"


def test_grafana_provisions_the_datasource_and_the_dashboard(services: dict[str, Any]) -> None:
    grafana = services["grafana"]
    mounted = {t: s for s, t in _mounts(grafana)}
    datasources = yaml.safe_load((DEPLOY / mounted["/etc/grafana/provisioning/datasources"]
                                  / "prometheus.yml").read_text())["datasources"]
    [datasource] = datasources
    assert datasource["type"] == "prometheus" and datasource["url"] == "http://prometheus:9090"
    providers = yaml.safe_load((DEPLOY / mounted["/etc/grafana/provisioning/dashboards"]
                                / "argus.yml").read_text())["providers"]
    dashboard_dir = providers[0]["options"]["path"]
    dashboard_file = mounted[f"{dashboard_dir}/argus-dashboard.json"]
    dashboard = json.loads((DEPLOY / dashboard_file).read_text())
    default = next(v for v in dashboard["templating"]["list"] if v["name"] == "datasource")["current"]["value"]
    assert default == datasource["uid"]
    home = grafana["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert home == f"{dashboard_dir}/argus-dashboard.json"


def test_argus_sends_its_alerts_to_the_stacks_alertmanager(services: dict[str, Any]) -> None:
    argus = services["argus"]
    mounted = dict(_mounts(argus))
    schedules_file = next(s for s, t in mounted.items() if t == argus["environment"]["ARGUS_SCHEDULES"])
    loaded = load_schedules(DEPLOY / schedules_file)
    channels = loaded.alerts.channels
    assert [c.type for c in channels.values()] == ["alertmanager"]
    url = next(iter(channels.values())).url
    assert url is not None and url.startswith("http://alertmanager:")
    port = url.rsplit(":", 1)[1]
    assert "alertmanager" in services and any(port in str(p) for p in services["alertmanager"].get("ports", []))
