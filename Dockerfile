# syntax=docker/dockerfile:1
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY agent ./agent
COPY config ./config
COPY daemon ./daemon
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
RUN useradd --create-home --uid 10001 argus
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
COPY --chown=argus:argus deploy/demo /opt/argus/demo
USER argus
WORKDIR /home/argus
ENTRYPOINT ["argus"]
CMD ["audit", "--file", "/opt/argus/demo/orders.jsonl", "--fail-on", "none"]
