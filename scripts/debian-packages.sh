#!/usr/bin/env bash
# Installs the Debian packages Culprit's benchmarks, monitors and tests use, when run as root; otherwise prints
# exactly what to install. Sourced by demo.sh and test.sh.
CULPRIT_DEBIAN_PACKAGES=(git fio stress-ng sysbench rt-tests dbench linux-perf procps fonts-dejavu-core postgresql postgresql-client iperf3 mariadb-server)

culprit_install_packages() {
    local missing=()
    for pkg in "${CULPRIT_DEBIAN_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -eq 0 ]; then
        echo "culprit: installing Debian packages: ${missing[*]}" >&2
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        echo "culprit: missing Debian packages; install them with:" >&2
        echo "  sudo apt-get install -y ${missing[*]}" >&2
        return 1
    fi
}
