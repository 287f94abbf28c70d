# schedsvc: kube-scheduler v1.37.2 placement decisions (v1.35.4 with --emulated-version=1.35)
# as a gRPC service.
# Build: docker build -t schedsvc .   Run: docker run -p 50051:50051 -p 9464:9464 schedsvc
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# ---- builder: `pip install .` into a venv, as a user installs the package ------------------
FROM ${PYTHON_IMAGE} AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml setup.py MANIFEST.in ./
COPY protos/ protos/
COPY tools/__init__.py tools/gen_contract.py tools/
COPY service/ service/
COPY clients/ clients/
# the build generates the protobuf code from protos/ (setup.py -> tools/gen_contract.py, the
# step `make gen` runs); grpcio-tools lives in pip's isolated build env, never in /opt/venv
RUN python -m venv /opt/venv \
 && /opt/venv/bin/pip install --no-cache-dir .

# ---- runtime: the venv only, as an unprivileged user ---------------------------------------
FROM ${PYTHON_IMAGE}
RUN useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin schedsvc
COPY --from=builder /opt/venv /opt/venv
# every serve flag has a SCHEDSVC_* variable; override them with `docker run -e`
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    SCHEDSVC_ADDRESS=0.0.0.0:50051 \
    SCHEDSVC_METRICS_ADDRESS=0.0.0.0:9464 \
    SCHEDSVC_LOG_FORMAT=json
USER 10001:10001
EXPOSE 50051 9464
# gRPC health service (grpc.health.v1) of schedsvc.v1.ScheduleService, no extra binary
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
  CMD ["python", "-m", "schedsvc.healthcheck"]
# exec form: the server is PID 1 and gets SIGTERM itself (it installs a handler and drains)
ENTRYPOINT ["schedsvc"]
CMD ["serve"]
