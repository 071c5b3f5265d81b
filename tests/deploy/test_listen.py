"""Where the daemon listens: this machine only when run by hand (the README's 127.0.0.1 URLs,
and /runs/RUN_ID is unauthenticated), every interface inside the image and on Kubernetes, where
Prometheus and the Service reach it from outside the container."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from argus.config.settings import Settings
from argus.daemon.http import parse_listen
from tests.deploy.dockerfile import parse_dockerfile

ROOT = Path(__file__).resolve().parents[2]


def test_by_hand_the_daemon_listens_on_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARGUS_LISTEN", raising=False)
    assert parse_listen(Settings().listen) == ("127.0.0.1", 9464)


def test_the_image_listens_on_every_interface() -> None:
    final = parse_dockerfile((ROOT / "Dockerfile").read_text()).final
    assert parse_listen(final.env({})["ARGUS_LISTEN"]) == ("0.0.0.0", 9464)


def test_kubernetes_listens_on_every_interface_on_the_container_port() -> None:
    deployment = yaml.safe_load((ROOT / "deploy/kubernetes/deployment.yaml").read_text())
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    host, port = parse_listen(env["ARGUS_LISTEN"])
    assert host == "0.0.0.0"
    assert port in {p["containerPort"] for p in container["ports"]}
