# Nova as a container job: `docker run --rm -e NOVA_LLM_MODEL=... IMAGE review D123 ...`
ARG PYTHON_VERSION=3.11

FROM python:${PYTHON_VERSION}-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY prompts ./prompts
COPY scripts/build-wheel.sh ./scripts/build-wheel.sh
RUN sh scripts/build-wheel.sh /dist

FROM python:${PYTHON_VERSION}-slim
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="nova" \
      org.opencontainers.image.description="CI bot for code review: numbered diffs, an LLM agent, comments on the right lines" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="MIT"
# git: GitPython shells out to it. Debian package versions are not pinned on purpose:
# the security archive drops old versions, and a pin would break the next rebuild.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /dist /dist
# The wheel only: no compilers and no source tree in the final image; ruff comes as a wheel.
RUN pip install --no-cache-dir /dist/*.whl && rm -rf /dist \
 && useradd --create-home --uid 10001 nova \
 && git config --system --add safe.directory '*'
USER 10001
WORKDIR /work
ENV PYTHONUNBUFFERED=1
ENTRYPOINT ["nova"]
CMD ["--help"]
