# syntax=docker/dockerfile:1
# The Argus daemon. Build from the repository root:  docker build -t argus .
# Run:  docker run -p 9464:9464 argus   (the demo schedules, history in an embedded PostgreSQL)
# docs/deployment.md covers compose, Kubernetes, volumes and secrets.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --- build: install Argus and its dependencies into a virtual environment ------------------------
FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
# tini, Debian's: PID 1 of the runtime image, which forwards SIGTERM to the daemon and reaps the
# children its in-memory queries fork (the static build is copied, so the runtime needs no apt).
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
RUN python -m venv --without-pip /opt/argus
WORKDIR /src
COPY pyproject.toml README.md ./
COPY argus ./argus
# with the llm extra: the image is what ops deploy, and a mounted schedules.yaml with planner: llm or
# hybrid must run without a rebuild (the openai client adds a few MB; the heuristic default never imports it)
RUN pip --python /opt/argus/bin/python install '.[llm]'

# --- runtime: the environment, the schedules and demo data; no pip, no compilers -----------------
FROM ${PYTHON_IMAGE}
# Embedded PostgreSQL refuses to run as root, so the image never runs as root: a fixed numeric
# user (Kubernetes runAsNonRoot can check it) owning only the data directory.
RUN groupadd --system --gid 10001 argus \
 && useradd --system --uid 10001 --gid argus --home-dir /var/lib/argus --no-create-home \
        --shell /usr/sbin/nologin argus \
 && install -d -o argus -g argus -m 0750 /var/lib/argus \
 && python -m pip uninstall -y -q pip setuptools wheel
COPY --from=build /opt/argus /opt/argus
COPY --from=build /usr/bin/tini-static /usr/bin/tini
ENV PATH=/opt/argus/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    ARGUS_DATA_DIR=/var/lib/argus \
    ARGUS_LISTEN=0.0.0.0:9464 \
    ARGUS_LOG_FORMAT=json
# The working directory mirrors the repository: schedules.yaml names deploy/demo/*.jsonl
# relative to itself. Mount your own file and set ARGUS_SCHEDULES (or --schedules) to use it.
WORKDIR /app
COPY schedules.yaml ./
COPY deploy/demo/*.jsonl ./deploy/demo/
USER 10001:10001
VOLUME ["/var/lib/argus"]
EXPOSE 9464
STOPSIGNAL SIGTERM
# slim images have no curl; the probe asks /healthz where the daemon says it listens (a --listen in
# CMD or ARGUS_LISTEN alike: it records the address it bound in ARGUS_DATA_DIR/daemon.listen)
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-m", "argus.daemon.healthcheck"]
# tini is PID 1: SIGTERM (STOPSIGNAL above) reaches the daemon, which stops cleanly within its grace
ENTRYPOINT ["/usr/bin/tini", "--", "argus", "daemon"]
CMD []
