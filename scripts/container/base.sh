#!/usr/bin/env bash
# A stand-in for `python:3.11-slim` where no container registry is reachable: Debian bookworm
# (its python3 is 3.11) built with debootstrap and imported into podman under the official
# name, so the Dockerfile builds exactly as shipped with `--pull=never`.
#
# Idempotent and cached: nothing happens when podman already holds the image; the root
# filesystem tarball is kept in $NOVA_CONTAINER_CACHE (default ~/.cache/nova-container) so
# a wiped podman store is refilled in seconds. Needs root, podman and debootstrap.
#
#   scripts/container/base.sh            # prints the image name
#   NOVA_DEBIAN_MIRROR=http://... scripts/container/base.sh
set -euo pipefail

image="${NOVA_BASE_IMAGE:-docker.io/library/python:3.11-slim}"
cache="${NOVA_CONTAINER_CACHE:-${HOME:-/root}/.cache/nova-container}"
tarball="$cache/bookworm-python3.11-slim.tar"

if podman image exists "$image"; then
  echo "$image"
  exit 0
fi

# The archive apt already uses on this machine (a snapshot mirror, a proxy), else Debian's.
mirror="${NOVA_DEBIAN_MIRROR:-}"
if [ -z "$mirror" ]; then
  mirror=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null \
           | grep -v security | head -n 1 || true)
fi
if [ -z "$mirror" ]; then
  mirror=$(sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) bookworm .*/\2/p' \
           /etc/apt/sources.list 2>/dev/null | head -n 1 || true)
fi
mirror="${mirror:-http://deb.debian.org/debian}"

# What the official Debian "slim" images configure (debuerreotype's slimify): no docs, man
# pages or translations from later apt installs, and apt's caches removed after each run.
# Without it a Dockerfile's `apt-get install` layer weighs ~100 MB more than on the real base.
slim() {
  local root="$1"
  cat > "$root/etc/dpkg/dpkg.cfg.d/docker" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
CFG
  cat > "$root/etc/apt/apt.conf.d/docker-clean" <<'CFG'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CFG
  echo 'Acquire::Languages "none";' > "$root/etc/apt/apt.conf.d/docker-no-languages"
  echo 'Acquire::GzipIndexes "true";' > "$root/etc/apt/apt.conf.d/docker-gzip-indexes"
  echo 'Apt::AutoRemove::SuggestsImportant "false";' \
    > "$root/etc/apt/apt.conf.d/docker-autoremove-suggests"
  find "$root/usr/share/doc" -mindepth 2 -not -name copyright -not -type d -delete
  find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/* \
    "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
}

if [ ! -s "$tarball" ]; then
  mkdir -p "$cache"
  rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
  trap 'rm -rf "$rootfs"' EXIT
  echo "base: debootstrap bookworm from $mirror (a few minutes, once)" >&2
  # What python:3.11-slim holds: Python with venv and pip, CA certificates. No git: the
  # Dockerfile installs it, so its layer is measured as it would be on the real base.
  debootstrap --variant=minbase --include=python3,python3-venv,python3-pip,ca-certificates \
    bookworm "$rootfs" "$mirror" > "$cache/debootstrap.log" 2>&1 \
    || { tail -n 20 "$cache/debootstrap.log" >&2; exit 1; }
  # The official image's pip installs anywhere (no PEP 668 marker) and answers to `python`
  # and `pip` on /usr/local/bin.
  rm -f "$rootfs"/usr/lib/python3.*/EXTERNALLY-MANAGED
  ln -sf /usr/bin/python3 "$rootfs/usr/local/bin/python"
  ln -sf /usr/bin/pip3 "$rootfs/usr/local/bin/pip"
  # This machine's CA bundle (a TLS proxy in front of PyPI) and pip settings, if any.
  cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
  if [ -f /etc/pip.conf ]; then cp /etc/pip.conf "$rootfs/etc/pip.conf"; fi
  slim "$rootfs"
  tar -C "$rootfs" --numeric-owner -cf "$tarball.part" .
  mv "$tarball.part" "$tarball"
fi

podman import --change 'CMD ["python3"]' --change 'ENV LANG=C.UTF-8' "$tarball" "$image" >&2
echo "$image"
