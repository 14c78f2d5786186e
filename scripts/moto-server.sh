#!/usr/bin/env bash
# Start or stop the loopback moto S3 server the S3 tests and benchmarks use.
#
#   eval "$(scripts/moto-server.sh start)"   # exports DSH_FS_S3_ENDPOINT=http://127.0.0.1:PORT
#   scripts/moto-server.sh stop
#
# PYTHON (default: .venv/bin/python, else python3) must have dsh-fs and moto[server] installed.
# The pid is kept in ${DSH_FS_MOTO_PIDFILE:-${TMPDIR:-/tmp}/dsh-fs-moto-<uid>-<checkout>.pid} (one per
# checkout: a second start while it runs is refused); stop ends exactly that process. See src/dsh_fs/testing/moto_server.py.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-}"
if [[ -z "$python" ]]; then
  if [[ -x "$here/.venv/bin/python" ]]; then python="$here/.venv/bin/python"; else python=python3; fi
fi
pidfile="${DSH_FS_MOTO_PIDFILE:-${TMPDIR:-/tmp}/dsh-fs-moto-$(id -u)-$(printf %s "$here" | cksum | cut -d' ' -f1).pid}"
case "${1:-}" in
  start)
    line="$("$python" -m dsh_fs.testing.moto_server start --pidfile "$pidfile")"
    echo "export $line"
    ;;
  stop)
    "$python" -m dsh_fs.testing.moto_server stop --pidfile "$pidfile"
    ;;
  *)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
