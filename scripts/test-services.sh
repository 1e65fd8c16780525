#!/usr/bin/env bash
# What the test suite needs beyond Python packages: a PostgreSQL server on
# 127.0.0.1:5432, a MariaDB server on 127.0.0.1:3306 (root, no password: the MySQL
# source tests create and drop their own databases) and Debian's Chromium for the
# browser test. Fails loudly.
set -euo pipefail

if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  echo "test-services: PostgreSQL not answering on 127.0.0.1:5432, starting it" >&2
  if command -v pg_ctlcluster >/dev/null; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
  fi
  for _ in $(seq 1 30); do
    pg_isready -h 127.0.0.1 -p 5432 -q && break
    sleep 1
  done
  pg_isready -h 127.0.0.1 -p 5432 -q || { echo "test-services: PostgreSQL cannot be reached on 127.0.0.1:5432" >&2; exit 1; }
fi

if ! mysqladmin -u root -h 127.0.0.1 -P 3306 ping >/dev/null 2>&1; then
  echo "test-services: MariaDB not answering on 127.0.0.1:3306, starting it" >&2
  if [ -x /usr/sbin/mariadbd ]; then
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd || true
  fi
  for _ in $(seq 1 30); do
    mysqladmin -u root -h 127.0.0.1 -P 3306 ping >/dev/null 2>&1 && break
    sleep 1
  done
  mysqladmin -u root -h 127.0.0.1 -P 3306 ping >/dev/null 2>&1 || { echo "test-services: MariaDB cannot be reached on 127.0.0.1:3306" >&2; exit 1; }
fi

if [ ! -x /usr/bin/chromium ]; then
  echo "test-services: installing Debian's chromium for the browser test" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
fi
