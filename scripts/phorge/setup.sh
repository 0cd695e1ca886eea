#!/usr/bin/env bash
# A real Phorge on loopback for Nova's end-to-end tests: MariaDB, PHP's built-in web
# server and Phorge's daemons, all bound to 127.0.0.1, all state under one directory.
#
#   PHORGE_SOURCE=/path/to/phorge scripts/phorge/setup.sh up      # idempotent
#   scripts/phorge/setup.sh status | down
#
# Environment:
#   PHORGE_SOURCE    a Phorge checkout (required for `up`)
#   ARCANIST_SOURCE  an Arcanist checkout (default: arcanist/ beside PHORGE_SOURCE)
#   PHORGE_STATE     state directory (default: ${TMPDIR:-/tmp}/nova-phorge)
#   PHORGE_PORT      web server port (default 18089); PHORGE_DB_PORT (default 13306)
#
# `up` copies the checkouts into the state directory (Phorge writes its config into
# conf/local/, and tests drop extensions into src/extensions/: the user's checkout is never
# touched), installs the Debian packages it needs when missing (as root), starts what is not
# running, upgrades the schema, and runs seed.php. It prints the path of seed.json (users,
# API tokens, the first revision, the build plan) on its last line.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STATE="${PHORGE_STATE:-${TMPDIR:-/tmp}/nova-phorge}"
PORT="${PHORGE_PORT:-18089}"
DB_PORT="${PHORGE_DB_PORT:-13306}"
HOST=127.0.0.1
ROOT="$STATE/phorge"
DB_DIR="$STATE/mysql"
SOCK="$STATE/mysql.sock"
DB_USER=phorge
DB_PASS=nova-e2e-local

PACKAGES=(php-cli php-mysql php-curl php-mbstring php-gd php-zip php-xml php-intl
          mariadb-server mariadb-client git)

say() { printf 'phorge-setup: %s\n' "$*" >&2; }
die() { say "$*"; exit "${2:-1}"; }

alive() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

wait_for() {  # wait_for DESCRIPTION COMMAND...  (bounded: 60 tries, 0.5 s apart)
  local what="$1"; shift
  for _ in $(seq 60); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  die "$what did not come up (logs in $STATE)" 3
}

ensure_packages() {
  local missing=()
  command -v php >/dev/null || missing+=(php-cli)
  command -v mariadbd >/dev/null || missing+=(mariadb-server)
  if command -v php >/dev/null; then
    local modules
    modules="$(php -m)"
    for ext in mysqli curl mbstring gd zip dom intl; do
      grep -qix "$ext" <<<"$modules" || missing+=("ext:$ext")
    done
  fi
  [[ ${#missing[@]} -eq 0 ]] && return 0
  [[ $(id -u) -eq 0 ]] || die "missing ${missing[*]}: run as root or apt-get install ${PACKAGES[*]}" 2
  say "installing ${PACKAGES[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${PACKAGES[@]}" >"$STATE/apt.log" 2>&1 \
    || { apt-get update -q >>"$STATE/apt.log" 2>&1 &&
         DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${PACKAGES[@]}" >>"$STATE/apt.log" 2>&1; } \
    || die "apt-get install failed, see $STATE/apt.log" 3
}

copy_tree() {  # copy_tree SRC DEST: a copy without .git, redone when SRC's HEAD moved
  local src="$1" dest="$2" rev
  rev="$(git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)"
  if [[ -f "$dest/.nova-source-rev" && "$(cat "$dest/.nova-source-rev")" == "$rev" ]]; then
    return 0
  fi
  say "copying $src ($rev) to $dest"
  local keep=""
  [[ -f "$dest/conf/local/local.json" ]] && keep="$(cat "$dest/conf/local/local.json")"
  rm -rf "$dest" && mkdir -p "$dest"
  tar -C "$src" --exclude=./.git -cf - . | tar -C "$dest" -xf -
  [[ -n "$keep" ]] && printf '%s\n' "$keep" >"$dest/conf/local/local.json"
  echo "$rev" >"$dest/.nova-source-rev"
}

start_db() {
  if alive "$STATE/mysql.pid"; then return 0; fi
  if [[ ! -d "$DB_DIR/mysql" ]]; then
    say "initialising MariaDB in $DB_DIR"
    mariadb-install-db --no-defaults --datadir="$DB_DIR" --user="$(id -un)" \
      --auth-root-authentication-method=socket --skip-test-db >"$STATE/mysql-init.log" 2>&1 \
      || die "mariadb-install-db failed, see $STATE/mysql-init.log" 3
  fi
  say "starting MariaDB on $HOST:$DB_PORT"
  setsid mariadbd --no-defaults --datadir="$DB_DIR" --socket="$SOCK" --port="$DB_PORT" \
    --bind-address="$HOST" --user="$(id -un)" --pid-file="$STATE/mysql.pid" \
    --log-error="$STATE/mysql.log" --skip-name-resolve --sql-mode=STRICT_ALL_TABLES \
    --max-allowed-packet=33554432 --innodb-buffer-pool-size=128M --local-infile=0 </dev/null >/dev/null 2>&1 &
  wait_for "MariaDB" mariadb-admin --no-defaults --socket="$SOCK" ping
  mariadb --no-defaults --socket="$SOCK" -u root <<SQL
CREATE USER IF NOT EXISTS '$DB_USER'@'$HOST' IDENTIFIED BY '$DB_PASS';
GRANT ALL PRIVILEGES ON *.* TO '$DB_USER'@'$HOST';
FLUSH PRIVILEGES;
SQL
}

configure() {
  # conf/local/local.json, written whole: `bin/config set` would try the database
  # (with the defaults) before mysql.* is known.
  mkdir -p "$ROOT/conf/local" "$STATE/phd" "$STATE/repo" "$STATE/files"
  php -r '
    list(, $path, $host, $port, $db_port, $user, $pass, $state) = $argv;
    $config = array(
      "mysql.host" => $host,
      "mysql.port" => $db_port,
      "mysql.user" => $user,
      "mysql.pass" => $pass,
      "storage.default-namespace" => "nova",
      "phabricator.base-uri" => "http://$host:$port/",
      "phabricator.timezone" => "UTC",
      "phd.log-directory" => "$state/phd",
      "phd.taskmasters" => 1,
      "repository.default-local-path" => "$state/repo",
      "storage.local-disk.path" => "$state/files",
      // Harbormaster\x27s HTTP step calls loopback: allow it (blocked by default).
      "security.outbound-blacklist" => array(),
      "cluster.mailers" => array(),
    );
    file_put_contents($path, json_encode($config, JSON_PRETTY_PRINT)."\n");
  ' "$ROOT/conf/local/local.json" "$HOST" "$PORT" "$DB_PORT" "$DB_USER" "$DB_PASS" "$STATE"
}

start_web() {
  if alive "$STATE/web.pid"; then return 0; fi
  say "starting php -S on $HOST:$PORT"
  # The router is webroot/index.php (src/docs/contributor/running_builtin_php_webserver).
  setsid php -d variables_order=EGPCS -d post_max_size=32M -S "$HOST:$PORT" \
    -t "$ROOT/webroot" "$ROOT/webroot/index.php" </dev/null >"$STATE/web.log" 2>&1 &
  echo $! >"$STATE/web.pid"
  wait_for "Phorge on $HOST:$PORT" curl -fsS "http://$HOST:$PORT/status/"
}

# `bin/phd status|stop` see every Phorge's daemons on the machine (they look processes up
# host-wide): another Phorge's daemons would be taken for ours, or stopped. This instance's
# daemons are told apart by their working directory, our copy's scripts/daemon/ (phd starts
# them there), and their PIDs are kept in $STATE/phd.pids.
own_daemons() {
  local dir
  dir="$(realpath "$ROOT/scripts/daemon" 2>/dev/null)" || return 0
  find /proc/[0-9]*/cwd -maxdepth 0 -lname "$dir" 2>/dev/null | cut -d/ -f3
  return 0
}

have_daemons() { [[ -n "$(own_daemons)" ]]; }

start_daemons() {
  # Harbormaster builds, Herald's build requests and lint messages are daemon work.
  if have_daemons; then return 0; fi
  say "starting Phorge daemons"
  # --force: phd would refuse to start while any other Phorge's daemons run
  "$ROOT/bin/phd" start --force >"$STATE/phd-start.log" 2>&1 || die "bin/phd start failed" 3
  wait_for "Phorge daemons" have_daemons
  own_daemons >"$STATE/phd.pids"
}

stop_daemons() {  # only this instance's: SIGINT, then SIGTERM, then SIGKILL
  local pids signal
  for signal in INT TERM KILL; do
    pids="$(own_daemons)"
    [[ -z "$pids" ]] && break
    # shellcheck disable=SC2086
    kill "-$signal" $pids 2>/dev/null || true
    for _ in $(seq 20); do [[ -z "$(own_daemons)" ]] && break; sleep 0.5; done
  done
  rm -f "$STATE/phd.pids"
}

up() {
  [[ -n "${PHORGE_SOURCE:-}" && -f "$PHORGE_SOURCE/webroot/index.php" ]] \
    || die "PHORGE_SOURCE must point at a Phorge checkout" 2
  local arc="${ARCANIST_SOURCE:-$(dirname "$PHORGE_SOURCE")/arcanist}"
  [[ -f "$arc/src/__phutil_library_init__.php" ]] \
    || die "no Arcanist at $arc (set ARCANIST_SOURCE)" 2
  mkdir -p "$STATE"
  ensure_packages
  copy_tree "$PHORGE_SOURCE" "$ROOT"
  copy_tree "$arc" "$STATE/arcanist"
  start_db
  configure
  "$ROOT/bin/storage" upgrade --force >"$STATE/storage.log" 2>&1 \
    || die "bin/storage upgrade failed, see $STATE/storage.log" 3
  start_web
  start_daemons
  php "$HERE/seed.php" "$ROOT" "$STATE/seed.json" "http://$HOST:$PORT" >&2 \
    || die "seed.php failed" 3
  echo "$STATE/seed.json"
}

down() {
  stop_daemons
  if alive "$STATE/web.pid"; then kill "$(cat "$STATE/web.pid")"; fi
  rm -f "$STATE/web.pid"
  if alive "$STATE/mysql.pid"; then
    mariadb-admin --no-defaults --socket="$SOCK" -u root shutdown || true
  fi
}

status() {
  alive "$STATE/mysql.pid" && echo "mariadb: running" || echo "mariadb: stopped"
  alive "$STATE/web.pid" && echo "web: http://$HOST:$PORT/" || echo "web: stopped"
  local pids
  pids="$(own_daemons | tr '\n' ' ')"
  [[ -n "$pids" ]] && echo "daemons: running (PIDs $pids)" || echo "daemons: stopped"
}

case "${1:-up}" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) die "usage: $0 [up|down|status]" 2 ;;
esac
