"""deploy/kubernetes without a cluster: the manifests parse, the kustomization lists them, and the
Deployment runs two locked replicas, non-root on a read-only root, probed on /healthz and /readyz,
with secrets referenced and never committed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from argus.config.schedules import load_schedules
from tests.deploy.dockerfile import parse_dockerfile
from tests.deploy.promql import RULES

ROOT = Path(__file__).resolve().parents[2]
KUBE = ROOT / "deploy/kubernetes"


@pytest.fixture(scope="module")
def manifests() -> dict[str, dict[str, Any]]:
    """kind → the one manifest of that kind, from the files the kustomization lists."""
    kustomization = yaml.safe_load((KUBE / "kustomization.yaml").read_text())
    out: dict[str, dict[str, Any]] = {}
    for resource in kustomization["resources"]:
        for doc in yaml.safe_load_all((KUBE / resource).read_text()):
            if doc is None:
                continue
            assert {"apiVersion", "kind", "metadata"} <= doc.keys(), resource
            assert doc["kind"] not in out, f"two {doc['kind']}s"
            out[doc["kind"]] = doc
    return out


@pytest.fixture(scope="module")
def pod(manifests: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return manifests["Deployment"]["spec"]["template"]["spec"]


@pytest.fixture(scope="module")
def container(pod: dict[str, Any]) -> dict[str, Any]:
    [only] = pod["containers"]
    return only


def _env(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def test_every_manifest_file_is_in_the_kustomization_and_parses(manifests: dict[str, dict[str, Any]]) -> None:
    listed = set(yaml.safe_load((KUBE / "kustomization.yaml").read_text())["resources"])
    assert listed == {p.name for p in KUBE.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(manifests) == {"Deployment", "ConfigMap", "Service", "ServiceMonitor", "PrometheusRule",
                              "PodDisruptionBudget"}


def test_two_replicas_roll_without_losing_both(manifests: dict[str, dict[str, Any]]) -> None:
    spec = manifests["Deployment"]["spec"]
    assert spec["replicas"] == 2
    assert spec["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    assert manifests["PodDisruptionBudget"]["spec"]["minAvailable"] == 1


def test_selectors_match_the_pods(manifests: dict[str, dict[str, Any]]) -> None:
    pod_labels = manifests["Deployment"]["spec"]["template"]["metadata"]["labels"]
    selectors = [manifests["Deployment"]["spec"]["selector"]["matchLabels"], manifests["Service"]["spec"]["selector"],
                 manifests["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"]]
    assert all(s.items() <= pod_labels.items() for s in selectors)
    monitor = manifests["ServiceMonitor"]["spec"]
    assert monitor["selector"]["matchLabels"].items() <= manifests["Service"]["metadata"]["labels"].items()
    assert {e["port"] for e in monitor["endpoints"]} <= {p["name"] for p in manifests["Service"]["spec"]["ports"]}
    assert monitor["endpoints"][0]["path"] == "/metrics"


def test_probes_ask_healthz_and_readyz_on_the_image_port(container: dict[str, Any]) -> None:
    dockerfile = parse_dockerfile((ROOT / "Dockerfile").read_text())
    expose = dockerfile.final.last("EXPOSE")
    assert expose is not None
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"http": int(expose.args)}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["startupProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}


def test_it_runs_as_the_image_user_on_a_read_only_root(pod: dict[str, Any], container: dict[str, Any]) -> None:
    dockerfile = parse_dockerfile((ROOT / "Dockerfile").read_text())
    user = dockerfile.final.last("USER")
    assert user is not None
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == int(user.args.split(":")[0])
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
    # writable places: the data directory the image declares (the spool), and /tmp
    data_dir = dockerfile.final.env(dockerfile.global_args)["ARGUS_DATA_DIR"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    writable = {m["mountPath"] for m in container["volumeMounts"]
                if "emptyDir" in volumes[m["name"]] and not m.get("readOnly")}
    assert writable == {data_dir, "/tmp"}


def test_the_shutdown_grace_fits_in_the_termination_grace(pod: dict[str, Any], container: dict[str, Any]) -> None:
    grace = float(_env(container)["ARGUS_SHUTDOWN_GRACE_S"])
    assert pod["terminationGracePeriodSeconds"] >= grace + 10 + 5   # + a query's maxTimeMS + storing


def test_the_schedules_come_from_the_configmap_and_are_valid(manifests: dict[str, dict[str, Any]], pod: dict[str, Any],
                                                             container: dict[str, Any], tmp_path: Path) -> None:
    env = _env(container)
    path = Path(env["ARGUS_SCHEDULES"])
    mount = next(m for m in container["volumeMounts"] if m["mountPath"] == str(path.parent))
    assert "subPath" not in mount                                  # or edits would never reach the pod
    volume = next(v for v in pod["volumes"] if v["name"] == mount["name"])
    configmap = manifests["ConfigMap"]
    assert volume["configMap"]["name"] == configmap["metadata"]["name"]
    (tmp_path / path.name).write_text(configmap["data"][path.name])
    loaded = load_schedules(tmp_path / path.name)
    assert loaded.schedules
    for connection in loaded.connections.values():               # every URI the schedules read is a Secret
        assert connection.uri_env is not None and "secretKeyRef" in env[connection.uri_env]


def test_secrets_are_referenced_never_committed(container: dict[str, Any]) -> None:
    env = _env(container)
    assert env["ARGUS_DATABASE_URL"] == {"secretKeyRef": {"name": "argus", "key": "database-url"}}
    for path in KUBE.glob("*.yaml"):
        assert all(doc is None or doc["kind"] != "Secret" for doc in yaml.safe_load_all(path.read_text())), path


def test_the_prometheus_rule_is_the_rules_file(manifests: dict[str, dict[str, Any]]) -> None:
    assert manifests["PrometheusRule"]["spec"] == yaml.safe_load(RULES.read_text())
