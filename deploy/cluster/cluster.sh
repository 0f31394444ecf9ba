#!/usr/bin/env bash
# courseops on many hosts, on one machine: each host a network namespace joined to a bridge by a
# veth pair, so every connection between them crosses a real link that can be cut.
#
#   deploy/cluster/cluster.sh up        start everything (idempotent: `down` first)
#   deploy/cluster/cluster.sh down      stop every process and remove the namespaces
#   deploy/cluster/cluster.sh cut HOST  take HOST's link down (its processes keep running)
#   deploy/cluster/cluster.sh restore HOST
#   deploy/cluster/cluster.sh exec HOST CMD...   run CMD on HOST with the cluster's environment
#
# Hosts (addresses on $CLUSTER_NET.0/24; the bridge, on the machine itself, is .1):
#   data .10     PostgreSQL (a private cluster made with initdb, listening on the link only),
#                Redis, an SMTP sink that keeps each message as a file
#   web1 .21, web2 .22      gunicorn (production settings)
#   worker1 .31, worker2 .32 celery worker
#   beat1 .41, beat2 .42     celery beat, each restarted by a loop as a supervisor would
#   the machine itself       nginx in front of the two web hosts: http://$CLUSTER_NET.1:8080, and
#                            https://$CLUSTER_NET.1:8443 with a self-signed certificate made at
#                            `up` ($CLUSTER_DIR/nginx/tls.pem: the one to trust)
# Needs root, iproute2, nginx, redis-server, PostgreSQL's binaries; runs from the checkout's
# .venv. CLUSTER_DB_FROM=postgres://… copies an already migrated database instead of migrating
# from nothing (minutes). CLUSTER_PROXY_READ_TIMEOUT_S (default 120, gunicorn's --timeout): how
# long nginx waits for a web host that took a request and went silent. Any variable set in the caller's environment (JOB_SWEEP_EVERY_S, …) reaches every host.
set -Eeuo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
NET="${CLUSTER_NET:-10.99.0}"
P="${CLUSTER_PREFIX:-co}"
STATE="${CLUSTER_DIR:-/tmp/courseops-cluster}"
BR="${P}br0"
PGBIN="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
declare -A ADDR=([data]=10 [web1]=21 [web2]=22 [worker1]=31 [worker2]=32 [beat1]=41 [beat2]=42)
HOSTS="data web1 web2 worker1 worker2 beat1 beat2"

export DJANGO_SETTINGS_MODULE=courseops.settings.production
export DATABASE_URL="postgres://postgres@$NET.10:5432/courseops"
export REDIS_URL="redis://$NET.10:6379/0"
export SECRET_KEY="${CLUSTER_SECRET_KEY:-cluster-test-key-not-for-production-0123456789abcdefghij}"
export ALLOWED_HOSTS="$NET.1,localhost"
export SITE_URL="https://$NET.1:8443"
export SECURE_SSL_REDIRECT=false EMAIL_HOST="$NET.10" EMAIL_PORT=2525 EMAIL_USE_TLS=false
export AXES_PROXY_COUNT=1 LOG_LEVEL="${LOG_LEVEL:-WARNING}"
export PYTHONUNBUFFERED=1

ns() { echo "$P-$1"; }
on() { local host=$1; shift; ip netns exec "$(ns "$host")" "$@"; }

# start NAME HOST CMD...: a process group of its own, its pid in $STATE/NAME.pid
start() {
  local name=$1 host=$2; shift 2
  on "$host" setsid "$@" >"$STATE/$name.log" 2>&1 </dev/null &
  echo $! >"$STATE/$name.pid"
}

wait_port() { # HOST PORT SECONDS
  for _ in $(seq 1 $(($3 * 5))); do
    (exec 3<>"/dev/tcp/$NET.${ADDR[$1]}/$2") 2>/dev/null && return 0
    sleep 0.2
  done
  echo "cluster: $1:$2 did not answer within $3 s" >&2
  return 1
}

network_up() {
  ip link add "$BR" type bridge
  ip addr add "$NET.1/24" dev "$BR"
  ip link set "$BR" up
  for host in $HOSTS; do
    ip netns add "$(ns "$host")"
    ip link add "${P}v-$host" type veth peer name eth0 netns "$(ns "$host")"
    ip link set "${P}v-$host" master "$BR" up
    on "$host" ip addr add "$NET.${ADDR[$host]}/24" dev eth0
    on "$host" ip link set eth0 up
    on "$host" ip link set lo up
  done
}

data_up() {
  mkdir -p "$STATE/pgsock" && chown postgres "$STATE" "$STATE/pgsock"
  runuser -u postgres -- "$PGBIN/initdb" -D "$STATE/pg" -U postgres --auth=trust >/dev/null
  echo "host all all $NET.0/24 trust" >>"$STATE/pg/pg_hba.conf"
  on data runuser -u postgres -- "$PGBIN/pg_ctl" -D "$STATE/pg" -l "$STATE/postgres.log" -w \
    -o "-c listen_addresses=$NET.10 -p 5432 -c unix_socket_directories=$STATE/pgsock \
        -c max_connections=200 -c fsync=off -c synchronous_commit=off" start >/dev/null
  on data redis-server --bind "$NET.10" --port 6379 --protected-mode no --save "" --appendonly no --daemonize yes \
    --pidfile "$STATE/redis.pid" --logfile "$STATE/redis.log" --dir "$STATE"
  start smtp data "$ROOT/.venv/bin/python" "$ROOT/deploy/cluster/smtp_sink.py" "$NET.10" 2525 \
    "$STATE/mail"
  wait_port data 5432 30 && wait_port data 6379 30 && wait_port data 2525 30
  "$PGBIN/createdb" -h "$NET.10" -U postgres courseops
}

app_up() {
  local py="$ROOT/.venv/bin/python" bin="$ROOT/.venv/bin"
  cd "$ROOT"
  if [ -n "${CLUSTER_DB_FROM:-}" ]; then
    # A database already migrated (the test suite's): copied in a few seconds, where migrating
    # from nothing takes minutes on a busy machine.
    "$PGBIN/pg_dump" -Fc --no-owner "$CLUSTER_DB_FROM" | on web1 "$PGBIN/pg_restore" --no-owner \
      -h "$NET.10" -U postgres -d courseops
  fi
  on web1 "$py" manage.py migrate -v 0
  echo "cluster: database ready (${SECONDS}s)"
  # Hashing and compressing every static file takes minutes on a busy 2-core machine: skipped
  # when the manifest is newer than the project's static files and the lock file (a package
  # upgrade), unless CLUSTER_COLLECTSTATIC=1.
  local manifest="$ROOT/staticfiles/staticfiles.json"
  if [ "${CLUSTER_COLLECTSTATIC:-}" = 1 ] || [ ! -f "$manifest" ] \
    || [ -n "$(find "$ROOT/static" "$ROOT/requirements.lock" -newer "$manifest" -print -quit)" ]; then
    on web1 "$py" manage.py collectstatic --no-input -v 0
    echo "cluster: static files collected (${SECONDS}s)"
  fi
  for host in web1 web2; do
    start "$host" "$host" "$bin/gunicorn" courseops.wsgi --bind "$NET.${ADDR[$host]}:8000" \
      --workers 2 --timeout 120 --log-level warning
  done
  for host in worker1 worker2; do
    start "$host" "$host" "$bin/celery" -A courseops worker --concurrency=1 \
      --hostname "$host@%h" --without-gossip --without-mingle --loglevel=INFO
  done
  for host in beat1 beat2; do  # the loop stands in for systemd's Restart=always
    start "$host" "$host" bash -c "while :; do '$bin/celery' -A courseops beat --loglevel=INFO; sleep 1; done"
  done
  mkdir -p "$STATE/nginx"
  # The production settings send the session and CSRF cookies over HTTPS only: logging in needs
  # TLS, so nginx ends it, as in front of a real deployment (deploy/nginx), with a certificate
  # for the bridge's address made now.
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj "/CN=courseops cluster" -addext "subjectAltName=IP:$NET.1" \
    -keyout "$STATE/nginx/tls.key" -out "$STATE/nginx/tls.pem" 2>/dev/null
  cat >"$STATE/nginx/nginx.conf" <<CONF
worker_processes 1;
pid $STATE/nginx/nginx.pid;
error_log $STATE/nginx/error.log warn;
events { worker_connections 1024; }
http {
  # Which web host answered each request (\$upstream_addr): the test counts each host's share.
  log_format hosts '\$remote_addr \$request_method \$uri \$status \$upstream_addr';
  access_log $STATE/nginx/access.log hosts;
  client_body_temp_path $STATE/nginx/body; proxy_temp_path $STATE/nginx/proxy;
  fastcgi_temp_path $STATE/nginx/fastcgi; uwsgi_temp_path $STATE/nginx/uwsgi;
  scgi_temp_path $STATE/nginx/scgi;
  upstream web {
    server $NET.21:8000 max_fails=1 fail_timeout=10s;
    server $NET.22:8000 max_fails=1 fail_timeout=10s;
  }
  server {
    listen $NET.1:8080;
    listen $NET.1:8443 ssl;
    ssl_certificate $STATE/nginx/tls.pem;
    ssl_certificate_key $STATE/nginx/tls.key;
    client_max_body_size 60m;
    location / {
      proxy_pass http://web;
      proxy_set_header Host \$http_host;
      proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto \$scheme;
      # A host that does not answer a connection within 1 s is passed over (never a request it
      # may have acted on: POSTs are not retried once sent).
      proxy_connect_timeout 1s;
      # A request the host took and never answered (its link cut mid-request) ends here: 504,
      # said as 503 below. Production waits gunicorn's --timeout (120 s, deploy/nginx); the
      # cluster test sets a shorter wait so the fault fits in CI.
      proxy_read_timeout ${CLUSTER_PROXY_READ_TIMEOUT_S:-120}s;
      proxy_next_upstream error timeout;
    }
    # No web host answered (all cut, or the one holding the request was cut): say so as the app
    # does, 503 with Retry-After, never a bare 502/504.
    error_page 502 504 =503 @unavailable;
    location @unavailable {
      add_header Retry-After 5 always;
      default_type text/plain;
      return 503 "Briefly unavailable; try again in a few seconds.";
    }
  }
}
CONF
  nginx -c "$STATE/nginx/nginx.conf" -p "$STATE/nginx"
  wait_port web1 8000 120 && wait_port web2 8000 120
}

down() {
  [ -f "$STATE/nginx/nginx.pid" ] && kill "$(cat "$STATE/nginx/nginx.pid")" 2>/dev/null || true
  for pidfile in "$STATE"/*.pid; do
    [ -f "$pidfile" ] || continue
    pid="$(cat "$pidfile")"
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  done
  if [ -d "$STATE/pg" ]; then
    runuser -u postgres -- "$PGBIN/pg_ctl" -D "$STATE/pg" -m immediate stop >/dev/null 2>&1 || true
  fi
  sleep 1
  # Whatever still runs on a cluster host (by the namespace's own list of its processes) ends.
  for host in $HOSTS; do
    if ip netns list | grep -qw "$(ns "$host")"; then
      for pid in $(ip netns pids "$(ns "$host")"); do kill -KILL "$pid" 2>/dev/null || true; done
      ip netns del "$(ns "$host")"
    fi
    # A namespace is freed in the background; its links with it. Deleting our end now means an
    # `up` straight after finds the names free.
    ip link del "${P}v-$host" 2>/dev/null || true
  done
  ip link del "$BR" 2>/dev/null || true
  rm -rf "$STATE"
}

case "${1:-}" in
  up)
    down
    mkdir -p "$STATE"
    trap 'echo "cluster: up failed; logs in $STATE" >&2' ERR
    network_up
    data_up
    echo "cluster: network and data host up (${SECONDS}s)"
    app_up
    echo "cluster: up after ${SECONDS}s, http://$NET.1:8080 and https://$NET.1:8443 (logs and mail in $STATE)"
    ;;
  down) down ;;
  # The bridge's end of the host's link: packets each way are dropped without a word (no reset,
  # no "unreachable"), as when a switch port or a cable dies; the host's processes keep running.
  cut) ip link set "${P}v-$2" down ;;
  restore) ip link set "${P}v-$2" up ;;
  exec) host=$2; shift 2; cd "$ROOT"; on "$host" "$@" ;;
  *) sed -n '2,20p' "$0"; exit 2 ;;
esac
