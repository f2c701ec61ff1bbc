#!/usr/bin/env bash
# db/devdb.sh: find or start a PostgreSQL for local development and tests.
#
# Usage: db/devdb.sh [url|stop|clean]
#   url (default)  Print a database URL on stdout; diagnostics go to stderr.
#                  1. $DATABASE_URL, if set.
#                  2. Else the server at $WEFT_DEVDB_SYSTEM_ADDR (127.0.0.1:5432),
#                     if it lets user "postgres" in without a password.
#                  3. Else a private cluster in .data/pg, created and started on
#                     demand (Debian's postgresql package is installed if missing).
#   stop           Stop the private cluster, keeping its data.
#   clean          Stop the private cluster and delete its data directory.
#
# Environment:
#   DATABASE_URL            printed as is; nothing is probed or started
#   WEFT_DEVDB_SYSTEM_ADDR  host:port of an existing server to try first
#                           (default 127.0.0.1:5432; "off" skips step 2)
#   WEFT_DEVDB_PORT         port of the private cluster (default 55432; when the
#                           default is taken, the next free port up to 55452)
#   WEFT_DEVDB_DIR          data directory of the private cluster (default .data/pg)
#   WEFT_DEVDB_PGBIN        directory with initdb and pg_ctl (default: the newest
#                           /usr/lib/postgresql/*/bin, else whatever is on PATH)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
DEFAULT_PORT=55432

log() { printf 'devdb: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }

# tcp_open HOST PORT: does anything accept TCP connections there?
tcp_open() {
  # shellcheck disable=SC2016 # $1/$2 expand in the inner bash
  timeout 3 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null
}

# trust_ok HOST PORT: does the server there let user "postgres" into database
# "postgres" without a password, over plain TCP (what the printed URL says)?
trust_ok() {
  local host=$1 port=$2 err
  if have psql; then
    if err=$(env -u PGPASSWORD -u PGSERVICE PGPASSFILE=/nonexistent/.pgpass PGCONNECT_TIMEOUT=5 \
      psql -X -w -q -At -c 'select 1' \
      -d "host=$host port=$port user=postgres dbname=postgres sslmode=disable" \
      </dev/null 2>&1 >/dev/null); then
      return 0
    fi
    log "psql: ${err//$'\n'/ }"
  fi
  # No (working) psql: speak just enough of the wire protocol. Send a
  # StartupMessage (protocol 3.0, user=postgres, database=postgres) and expect
  # AuthenticationOk ('R', length 8, code 0) followed by anything but an
  # ErrorResponse ('E'); a password request or an error means no.
  local reply
  # shellcheck disable=SC2016 # $1/$2 expand in the inner bash
  reply=$(timeout 5 bash -c '
    exec 3<>"/dev/tcp/$1/$2" || exit 1
    printf "\x00\x00\x00\x29\x00\x03\x00\x00user\x00postgres\x00database\x00postgres\x00\x00" >&3
    head -c 10 <&3 | od -An -tx1 | tr -d " \n"
    printf "X\x00\x00\x00\x04" >&3 2>/dev/null || true
  ' _ "$host" "$port" 2>/dev/null) || true
  [[ $reply == 520000000800000000* && $reply != *45 ]]
}

# Step 2: an existing server that trusts user postgres.
system_url() {
  local addr=${WEFT_DEVDB_SYSTEM_ADDR:-127.0.0.1:5432}
  [[ $addr == off ]] && return 1
  local host=${addr%:*} port=${addr##*:}
  if ! tcp_open "$host" "$port"; then
    log "no server on $addr; using the private cluster"
    return 1
  fi
  if ! trust_ok "$host" "$port"; then
    log "$addr does not accept user postgres without a password; using the private cluster"
    return 1
  fi
  echo "postgres://postgres@$host:$port/postgres?sslmode=disable"
}

# ---- the private cluster ----------------------------------------------------

DATADIR=""  # resolved data directory (symlinks followed)
OWNER=""    # OS user that owns and runs the cluster
BIN=""      # directory with initdb, pg_ctl, pg_isready

set_datadir() {
  local d=${WEFT_DEVDB_DIR:-$ROOT/.data/pg}
  [[ $d == /* ]] || d="$ROOT/$d"
  CONFIGURED_DIR=${d%/}
  DATADIR=$CONFIGURED_DIR
  if [[ -L $DATADIR ]]; then DATADIR=$(readlink -f "$DATADIR"); fi
}

# Serialise concurrent runs (e.g. two `make test` at once) with a lock on fd 9.
take_lock() {
  have flock || return 0
  mkdir -p "$(dirname "$CONFIGURED_DIR")"
  exec 9>"$CONFIGURED_DIR.lock"
  flock -w 600 9 || die "timed out waiting for $CONFIGURED_DIR.lock"
}

set_owner() {
  if [[ $EUID -ne 0 ]]; then OWNER=$(id -un); return; fi
  if [[ -d $DATADIR ]] && [[ $(stat -c %U "$DATADIR") != root ]]; then
    OWNER=$(stat -c %U "$DATADIR")
  else
    # The server refuses to run as root; Debian's package creates "postgres".
    OWNER=postgres
  fi
}

# as_owner CMD...: run CMD as the cluster owner (from /, which it can read).
as_owner() {
  if [[ $EUID -ne 0 ]]; then "$@"; return; fi
  if have runuser; then
    (cd / && runuser -u "$OWNER" -- "$@")
  else
    (cd / && su -s /bin/bash "$OWNER" -c "$(printf '%q ' "$@")")
  fi
}

# detached CMD...: run CMD with stdin from /dev/null, stdout to stderr and no
# other inherited file descriptors, so a server it leaves running holds neither
# our lock nor a caller's pipe (make, $(...), a CI runner would wait on it).
detached() {
  (
    for fd in /proc/self/fd/*; do
      fd=${fd##*/}
      if [[ $fd =~ ^[0-9]+$ ]] && ((fd > 2)); then eval "exec $fd>&-" 2>/dev/null || true; fi
    done
    "$@"
  ) </dev/null >&2
}

pg_major() { "$1/pg_ctl" --version 2>/dev/null | sed -nE 's/.*\(PostgreSQL\) ([0-9]+).*/\1/p'; }

# find_bin [MAJOR]: set BIN to server binaries (of version MAJOR if given).
find_bin() {
  local want=${1:-} d
  BIN=""
  if [[ -n ${WEFT_DEVDB_PGBIN:-} ]]; then
    BIN=$WEFT_DEVDB_PGBIN
  elif [[ -n $want && -x /usr/lib/postgresql/$want/bin/pg_ctl ]]; then
    BIN=/usr/lib/postgresql/$want/bin
  elif [[ -z $want ]]; then
    for d in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V); do
      [[ -x $d/initdb && -x $d/pg_ctl ]] && BIN=$d
    done
  fi
  if [[ -z $BIN ]] && have pg_ctl && have initdb; then
    BIN=$(dirname "$(command -v pg_ctl)")
  fi
  [[ -n $BIN && -x $BIN/pg_ctl ]] || { BIN=""; return 1; }
  if [[ -n $want && $(pg_major "$BIN") != "$want" ]]; then
    BIN=""
    return 1
  fi
}

# shellcheck disable=SC2086 # $sudo is empty or "sudo -n", split on purpose
install_postgres() {
  have apt-get || die "no PostgreSQL server binaries (initdb, pg_ctl) found; install PostgreSQL, or set WEFT_DEVDB_PGBIN or DATABASE_URL"
  local sudo=""
  if [[ $EUID -ne 0 ]]; then
    if ! { have sudo && sudo -n true 2>/dev/null; }; then
      die "PostgreSQL is not installed and apt-get needs root: run 'sudo apt-get install postgresql', or set DATABASE_URL"
    fi
    sudo="sudo -n"
  fi
  log "installing PostgreSQL with apt-get (once; this takes a minute)"
  # Keep the package from starting its own cluster on 5432: policy-rc.d
  # exit code 101 means "action forbidden" to invoke-rc.d.
  local policy=/usr/sbin/policy-rc.d made_policy=""
  if [[ ! -e $policy ]]; then
    $sudo sh -c "printf '#!/bin/sh\nexit 101\n' >$policy && chmod 755 $policy" && made_policy=1
    # shellcheck disable=SC2064 # expand now
    trap "$sudo rm -f $policy" EXIT
  fi
  local rc=0
  detached $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q || rc=$?
  if [[ $rc -eq 0 ]]; then
    detached $sudo env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -q --no-install-recommends postgresql || rc=$?
  fi
  if [[ -n $made_policy ]]; then $sudo rm -f "$policy" && trap - EXIT; fi
  [[ $rc -eq 0 ]] || die "apt-get install postgresql failed"
}

running() {
  as_owner "$BIN/pg_ctl" -D "$DATADIR" status >/dev/null 2>&1 || return 1
  # pg_ctl only checks that the PID in postmaster.pid is alive; after a reboot
  # or container restart that PID may belong to something else by now.
  local pid
  pid=$(sed -n 1p "$DATADIR/postmaster.pid" 2>/dev/null) || return 0
  if [[ -r /proc/$pid/comm && $(</proc/"$pid"/comm) != postgres* ]]; then
    log "removing stale $DATADIR/postmaster.pid (PID $pid is not PostgreSQL)"
    rm -f "$DATADIR/postmaster.pid"
    return 1
  fi
}
running_port() { sed -n 4p "$DATADIR/postmaster.pid"; }

choose_port() {
  local p=${WEFT_DEVDB_PORT:-$DEFAULT_PORT}
  if ! tcp_open 127.0.0.1 "$p"; then echo "$p"; return; fi
  [[ -z ${WEFT_DEVDB_PORT:-} ]] || die "port $p is in use; set WEFT_DEVDB_PORT to a free port"
  for ((p = DEFAULT_PORT + 1; p <= DEFAULT_PORT + 20; p++)); do
    if ! tcp_open 127.0.0.1 "$p"; then
      log "port $DEFAULT_PORT is in use; using $p"
      echo "$p"
      return
    fi
  done
  die "ports $DEFAULT_PORT-$((DEFAULT_PORT + 20)) are all in use; set WEFT_DEVDB_PORT"
}

# When root, the data directory must be reachable by $OWNER. If the checkout is
# not (e.g. it lives under /root, mode 700), keep the cluster in the owner's
# home instead and leave a symlink at the configured place.
place_datadir() {
  local parent
  parent=$(dirname "$DATADIR")
  mkdir -p "$parent"
  if [[ $EUID -eq 0 ]] && ! as_owner test -x "$parent" 2>/dev/null; then
    if [[ -n ${WEFT_DEVDB_DIR:-} ]]; then
      die "user $OWNER cannot reach $parent; pick another WEFT_DEVDB_DIR"
    fi
    local home alt
    home=$(getent passwd "$OWNER" | cut -d: -f6)
    alt="$home/weft-devdb-$(printf %s "$ROOT" | cksum | cut -d' ' -f1)"
    log "user $OWNER cannot reach $parent; keeping the cluster in $alt ($CONFIGURED_DIR links to it)"
    mkdir -p "$alt"
    ln -sfn "$alt" "$CONFIGURED_DIR"
    DATADIR=$alt
  fi
  mkdir -p "$DATADIR"
  chmod 700 "$DATADIR"
  if [[ $EUID -eq 0 ]]; then chown "$OWNER:" "$DATADIR"; fi
}

init_cluster() {
  id -u "$OWNER" >/dev/null 2>&1 || die "running as root, but there is no '$OWNER' OS user to own the cluster"
  place_datadir
  log "creating a PostgreSQL $(pg_major "$BIN") cluster in $DATADIR"
  as_owner "$BIN/initdb" -D "$DATADIR" -U postgres -A trust -E UTF8 --no-locale </dev/null >/dev/null
  printf "\n# Written by weft's db/devdb.sh: listen address, port and socket.\ninclude_if_exists = 'weft-devdb.conf'\n" \
    >>"$DATADIR/postgresql.conf"
}

start_cluster() {
  local port sock conf
  port=$(choose_port)
  # Unix socket in the data directory, unless the path is too long for one.
  sock=$DATADIR
  if ((${#DATADIR} + 20 > 107)); then
    log "data directory path too long for a unix socket; TCP only"
    sock=""
  fi
  conf="$DATADIR/weft-devdb.conf"
  {
    echo "# Rewritten by db/devdb.sh on every start."
    echo "listen_addresses = '127.0.0.1'"
    echo "port = $port"
    echo "unix_socket_directories = '${sock//\'/\'\'}'"
    echo "max_connections = 200"
  } >"$conf"
  if [[ $EUID -eq 0 ]]; then chown "$OWNER:" "$conf"; fi
  log "starting the private cluster on 127.0.0.1:$port (log: $DATADIR/server.log)"
  detached as_owner "$BIN/pg_ctl" -D "$DATADIR" -l "$DATADIR/server.log" -w -t 120 start || {
    tail -n 20 "$DATADIR/server.log" >&2 2>/dev/null || true
    die "the private cluster did not start"
  }
}

wait_ready() {
  local port=$1 i
  for ((i = 0; i < 60; i++)); do
    if [[ -x $BIN/pg_isready ]]; then
      "$BIN/pg_isready" -q -h 127.0.0.1 -p "$port" -t 2 && return 0
    else
      tcp_open 127.0.0.1 "$port" && return 0
    fi
    sleep 1
  done
  die "the private cluster on port $port does not accept connections (see $DATADIR/server.log)"
}

# Step 3: make sure the private cluster exists and runs; print its URL.
private_url() {
  set_datadir
  take_lock
  set_owner
  local version=""
  if [[ -f $DATADIR/PG_VERSION ]]; then
    version=$(<"$DATADIR/PG_VERSION")
    find_bin "$version" ||
      die "$DATADIR was made by PostgreSQL $version, whose binaries are missing; run 'make clean-db' to start over"
  else
    if [[ -d $DATADIR ]] && [[ -n $(ls -A "$DATADIR") ]]; then
      die "$DATADIR exists but is not a PostgreSQL data directory; remove it or set WEFT_DEVDB_DIR"
    fi
    if ! find_bin; then
      [[ -z ${WEFT_DEVDB_PGBIN:-} ]] || die "no initdb/pg_ctl in WEFT_DEVDB_PGBIN=$WEFT_DEVDB_PGBIN"
      install_postgres
      find_bin || die "PostgreSQL binaries still not found after installing"
    fi
    init_cluster
  fi
  if ! running; then start_cluster; fi
  local port
  port=$(running_port)
  [[ $port =~ ^[0-9]+$ ]] || die "cannot read the port from $DATADIR/postmaster.pid"
  wait_ready "$port"
  echo "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
}

stop_private() {
  set_datadir
  take_lock
  [[ -f $DATADIR/PG_VERSION ]] || return 0
  set_owner
  if find_bin "$(<"$DATADIR/PG_VERSION")"; then
    if running; then
      log "stopping the private cluster in $DATADIR"
      detached as_owner "$BIN/pg_ctl" -D "$DATADIR" -m fast -w -t 60 stop
    fi
  elif [[ -f $DATADIR/postmaster.pid ]]; then
    die "cannot tell whether the cluster in $DATADIR runs: its PostgreSQL binaries are missing"
  fi
}

clean_private() {
  stop_private
  # Never delete something that is neither ours nor a data directory.
  if [[ -d $DATADIR && ! -f $DATADIR/PG_VERSION && $DATADIR != "$ROOT"/.data/* ]] && [[ -n $(ls -A "$DATADIR") ]]; then
    die "$DATADIR is not a PostgreSQL data directory; not deleting it"
  fi
  if [[ -e $DATADIR || -L $CONFIGURED_DIR ]]; then
    log "deleting $DATADIR"
    rm -rf "$DATADIR"
    if [[ -L $CONFIGURED_DIR ]]; then rm -f "$CONFIGURED_DIR"; fi
  fi
}

# with_database prints the server URL $1 with its database switched to $2,
# creating that database first; without psql it keeps the server's default.
with_database() {
  local url=$1 name=$2
  if ! have psql; then
    log "psql not found; using the server's default database"
    echo "$url"
    return
  fi
  if [[ -z $(psql "$url" -XtAc "SELECT 1 FROM pg_database WHERE datname = '$name'" 2>/dev/null) ]]; then
    psql "$url" -Xqc "CREATE DATABASE \"$name\"" >/dev/null 2>&1 ||
      [[ -n $(psql "$url" -XtAc "SELECT 1 FROM pg_database WHERE datname = '$name'" 2>/dev/null) ]] ||
      die "cannot create database $name"
    log "created database $name"
  fi
  echo "${url/\/postgres\?//$name?}"
}

main() {
  case ${1:-url} in
    url)
      if [[ -n ${DATABASE_URL:-} ]]; then
        echo "$DATABASE_URL"
        return
      fi
      local url
      url=$(system_url || private_url)
      # `url NAME` gives weft its own database on that server (make run);
      # tests create theirs from the server URL.
      if [[ -n ${2:-} ]]; then with_database "$url" "$2"; else echo "$url"; fi
      ;;
    stop) stop_private ;;
    clean) clean_private ;;
    *)
      echo "usage: $0 [url [DATABASE]|stop|clean]" >&2
      return 2
      ;;
  esac
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then main "$@"; fi
