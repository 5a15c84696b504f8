#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server for Culprit's tests and prints the line that exports its URL:
#
#     eval "$(bash scripts/postgres-test-server.sh)"     # sets CULPRIT_TEST_PG_URL
#     bash scripts/postgres-test-server.sh --stop        # stops it and deletes its data
#
# The cluster lives in a temporary directory ($CULPRIT_PG_DIR, default /tmp/culprit-pg-test), listens on
# 127.0.0.1 only (never on a public interface), on port 5433 or the next free one, and has a database and a
# password-protected user, both named `culprit`. Run as root, it installs Debian's `postgresql` when missing and
# runs the server as the `postgres` user; run as another user with PostgreSQL installed, it runs the server as
# that user. Running it again while the server is up only prints the URL again.
set -euo pipefail

data_root="${CULPRIT_PG_DIR:-/tmp/culprit-pg-test}"
data_dir="$data_root/data"
log_file="$data_root/server.log"
database=culprit
role=culprit
password=culprit

say() { echo "postgres-test-server: $*" >&2; }

# The newest installed server's binaries (Debian keeps them out of PATH, under /usr/lib/postgresql/<version>/bin).
find_bin_dir() {
    local dir
    dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then
        echo "$dir"
    elif command -v initdb >/dev/null 2>&1; then
        dirname "$(command -v initdb)"
    fi
}

bin_dir="$(find_bin_dir)"
if [ -z "$bin_dir" ]; then
    if [ "$(id -u)" -eq 0 ]; then
        say "installing Debian's postgresql"
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
        bin_dir="$(find_bin_dir)"
    fi
    if [ -z "$bin_dir" ]; then
        say "PostgreSQL is not installed; install it with: sudo apt-get install -y postgresql"
        exit 1
    fi
fi

# Root may not run the server, so it runs as `postgres`; anyone else runs it as themselves.
if [ "$(id -u)" -eq 0 ]; then
    owner=postgres
    as_owner() { runuser -u "$owner" -- "$@"; }
else
    owner="$(id -un)"
    as_owner() { "$@"; }
fi

server_running() {
    [ -f "$data_dir/PG_VERSION" ] && as_owner "$bin_dir/pg_ctl" -D "$data_dir" status >/dev/null 2>&1
}

if [ "${1:-}" = "--stop" ]; then
    if server_running; then
        as_owner "$bin_dir/pg_ctl" -D "$data_dir" -m fast -w stop >/dev/null
    fi
    rm -rf "$data_root"
    say "stopped and removed $data_root"
    exit 0
fi

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

if server_running; then
    port="$(cat "$data_root/port")"
else
    rm -rf "$data_root"
    mkdir -p "$data_root"
    chown "$owner" "$data_root"
    chmod 700 "$data_root"
    port="${CULPRIT_PG_PORT:-5433}"
    while port_in_use "$port"; do
        port=$((port + 1))
    done
    echo "$port" > "$data_root/port"
    password_file="$data_root/superuser-password"
    (umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$password_file")
    chown "$owner" "$password_file"
    # Local (Unix socket) connections are trusted so this script can create the role; TCP needs a password.
    as_owner "$bin_dir/initdb" -D "$data_dir" -U postgres --pwfile="$password_file" --auth-local=trust \
        --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$data_root/initdb.log" 2>&1 || {
        cat "$data_root/initdb.log" >&2
        exit 1
    }
    cat >> "$data_dir/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$data_root'
max_connections = 100
shared_buffers = 128MB
# A test server: losing the last commits on a power cut is fine, and it makes tests faster.
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
    as_owner "$bin_dir/pg_ctl" -D "$data_dir" -l "$log_file" -w -t 60 start >/dev/null || {
        cat "$log_file" >&2
        exit 1
    }
    as_owner "$bin_dir/psql" -h "$data_root" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -q <<EOF
CREATE ROLE $role LOGIN PASSWORD '$password';
CREATE DATABASE $database OWNER $role;
EOF
    say "started PostgreSQL ($bin_dir) on 127.0.0.1:$port, data in $data_dir"
fi

echo "export CULPRIT_TEST_PG_URL=postgresql://$role:$password@127.0.0.1:$port/$database"
