#!/usr/bin/env bash
# The test cluster (docs/kubernetes.md): a real Kubernetes on an emulated
# multi-host cnperf lab.
#
#   scripts/k8s-cluster.sh up NAME [NODES]      control plane on host cp, NODES (default 2) nodes
#   scripts/k8s-cluster.sh down NAME            stop and remove everything of it (idempotent)
#   scripts/k8s-cluster.sh kubeconfig NAME [--lab]
#                                               the kubeconfig for the root namespace (via a
#                                               127.0.0.1 relay), or with --lab for inside the lab
#   scripts/k8s-cluster.sh status NAME          nodes and the daemons' PIDs
#   scripts/k8s-cluster.sh check NAME           smoke test: pods on every node, pod to pod,
#                                               ClusterIP and NodePort Services
#
# Needs the binaries and images of scripts/k8s-build.sh (CNPERF_K8S_CACHE,
# default /var/cache/cnperf/k8s), a cnperf binary (CNPERF, default
# /tmp/k8s-cnperf, else `cnperf` on PATH; `down` needs none) and
# `scripts/install-deps.sh k8s`.
# Creating and removing namespaces: run it under the machine's lab lock,
#   flock /tmp/cnperf-lab.lock scripts/k8s-cluster.sh up NAME
set -euo pipefail

# What the cluster starts must not inherit the caller's descriptors: a
# lock taken with `flock LOCK k8s-cluster.sh up` would stay held by the
# daemons as long as the cluster runs. 255 is bash's own (the script).
for fd in /proc/$$/fd/*; do
  fd=${fd##*/}
  if [ "$fd" -gt 2 ] 2>/dev/null && [ "$fd" -lt 255 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
done

K8S_VERSION=v1.34.4
cache=${CNPERF_K8S_CACHE:-/var/cache/cnperf/k8s}
bin=$cache/$K8S_VERSION/bin
images=$cache/$K8S_VERSION/images

# The address plan, all in 198.18.0.0/15 and clear of the lab plan's own
# ranges (docs/labs.md): hosts on 198.18.0.0/24 (cp .1, nodeI .(I+1)),
# Services 198.18.16.0/20, pods 198.18.64.0/18 with nodeI on 198.18.(64+I).0/24.
SERVICE_CIDR=198.18.16.0/20
SERVICE_API_IP=198.18.16.1
CLUSTER_CIDR=198.18.64.0/18
API_PORT=6443
MAX_NODES=60

die() { echo "k8s-cluster: $*" >&2; exit 2; }
fail() { echo "k8s-cluster: $*" >&2; exit 1; }
log() { echo "k8s-cluster: $*" >&2; }

usage() { die "usage: k8s-cluster.sh up NAME [NODES] | down NAME | kubeconfig NAME [--lab] | status NAME | check NAME | import NAME IMAGE.tar"; }

[ $# -ge 2 ] || usage
cmd=$1 name=$2
[[ $name =~ ^[a-z][a-z0-9]{0,11}$ ]] || die "cluster name '$name': want a lower-case letter, then up to 11 letters or digits"
[ "$(id -u)" = 0 ] || die "must run as root (namespaces, cgroups, mounts)"

run=/run/cnperf/k8s/$name     # sockets, runtime state, the PID list
var=/var/lib/cnperf/k8s/$name # PKI, kubeconfigs, etcd, images, logs
cgrel=cnperf-k8s/$name        # cgroup of everything started, in each v1 controller
cg_ctrls=(pids memory cpu cpuacct)
state=$run/pids

# cnperf_find prints the cnperf binary, or nothing when there is none.
cnperf_find() {
  local c=${CNPERF:-/tmp/k8s-cnperf}
  [ -x "$c" ] || c=$(command -v cnperf || true)
  if [ -n "$c" ] && [ -x "$c" ]; then echo "$c"; fi
}
# cnperf_bin prints the cnperf binary or stops. Call it as c=$(cnperf_bin)
# on a line of its own: inside another command's arguments its exit would
# not stop the script (set -e), which would run an empty command.
cnperf_bin() {
  local c; c=$(cnperf_find)
  [ -n "$c" ] || fail "no cnperf binary: set CNPERF, or build /tmp/k8s-cnperf from the repository root: CGO_ENABLED=0 go build -o /tmp/k8s-cnperf ./cmd/cnperf"
  echo "$c"
}
ns() { echo "cnperf-$name-$1"; }
kc() { "$bin/kubectl" --kubeconfig "$var/kubeconfig" "$@"; }

# ---------------------------------------------------------------- processes

# start_time PID: the process's start time in clock ticks (field 22 of
# stat), so a recorded PID reused by another process is never signalled.
start_time() { awk '{sub(/.*\) /, ""); print $20}' "/proc/$1/stat" 2>/dev/null || true; }

# cg_mk PATH: a cgroup in every v1 controller (kubelet wants its cgroup
# root in all of them), cpuset's with cpus and mems copied from the parent.
cg_mk() {
  local c p part
  for c in /sys/fs/cgroup/*/; do
    [ -f "${c}cgroup.procs" ] && [ "$c" != /sys/fs/cgroup/unified/ ] || continue
    p=${c%/}
    IFS=/ read -ra parts <<< "$1"
    for part in "${parts[@]}"; do
      p=$p/$part
      [ -d "$p" ] && continue
      mkdir "$p"
      if [ -f "$p/cpuset.cpus" ]; then
        cat "$(dirname "$p")/cpuset.cpus" > "$p/cpuset.cpus"
        cat "$(dirname "$p")/cpuset.mems" > "$p/cpuset.mems"
      fi
    done
  done
}

# launch ROLE CGROUP LOG CMD...: starts CMD detached (own session, stdin
# /dev/null) inside CGROUP, records its PID and start time under ROLE.
launch() {
  local role=$1 cg=$2 logf=$3; shift 3
  cg_mk "$cg"
  # setsid execs in place (a background job is no group leader), and the
  # shell execs CMD after joining the cgroups, so $! is CMD's PID.
  setsid sh -c 'cg=$1; shift; for c in pids memory cpu cpuacct; do echo $$ > /sys/fs/cgroup/$c/$cg/cgroup.procs; done; exec "$@"' \
    sh "$cg" "$@" > "$logf" 2>&1 < /dev/null &
  local pid=$!
  sleep 0.05
  printf '%s %s %s\n' "$pid" "$(start_time "$pid")" "$role" >> "$state"
}

# wait_for WHAT SECONDS CMD...: polls CMD until it succeeds.
wait_for() {
  local what=$1 secs=$2; shift 2
  local end=$(( $(date +%s) + secs ))
  until "$@" > /dev/null 2>&1; do
    [ "$(date +%s)" -lt "$end" ] || fail "timed out after ${secs}s waiting for $what"
    sleep 0.5
  done
}

# ---------------------------------------------------------------- PKI

# cert NAME CN [O] [SANS]: a P-256 key and a certificate signed by the CA.
cert() {
  local n=$1 cn=$2 o=${3:-} sans=${4:-} subj
  subj="/CN=$cn"; [ -n "$o" ] && subj="/O=$o$subj"
  openssl ecparam -name prime256v1 -genkey -noout -out "$var/pki/$n.key" 2>/dev/null
  openssl req -new -key "$var/pki/$n.key" -subj "$subj" -out "$var/pki/$n.csr" 2>/dev/null
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=serverAuth,clientAuth"
    if [ -n "$sans" ]; then echo "subjectAltName=$sans"; fi
  } > "$var/pki/$n.ext"
  openssl x509 -req -in "$var/pki/$n.csr" -CA "$var/pki/ca.crt" -CAkey "$var/pki/ca.key" \
    -CAcreateserial -days 3650 -sha256 -extfile "$var/pki/$n.ext" -out "$var/pki/$n.crt" 2>/dev/null
  rm -f "$var/pki/$n.csr" "$var/pki/$n.ext"
}

# kubeconfig OUT SERVER CERTNAME: a self-contained kubeconfig (certs inline).
kubeconfig() {
  cat > "$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $name
  cluster:
    server: $2
    certificate-authority-data: $(base64 -w0 "$var/pki/ca.crt")
users:
- name: $3
  user:
    client-certificate-data: $(base64 -w0 "$var/pki/$3.crt")
    client-key-data: $(base64 -w0 "$var/pki/$3.key")
contexts:
- name: $name
  context: {cluster: $name, user: $3}
current-context: $name
EOF
  chmod 600 "$1"
}

# ---------------------------------------------------------------- down

# cluster_pids: every PID recorded (if still the same process) and every
# PID in the cluster's cgroups (containers, shims and their children).
cluster_pids() {
  local pid st role c
  if [ -f "$state" ]; then
    while read -r pid st role; do
      [ -n "$st" ] && [ "$(start_time "$pid")" = "$st" ] && echo "$pid"
    done < "$state"
  fi
  for c in "${cg_ctrls[@]}"; do
    [ ! -d "/sys/fs/cgroup/$c/$cgrel" ] || find "/sys/fs/cgroup/$c/$cgrel" -name cgroup.procs -exec cat {} + 2>/dev/null || true
  done
  true
}

# lab_down removes the cluster's lab as `cnperf lab down` does, for want of
# a cnperf binary: the namespaces named for it that carry its mark (lo's
# alias "cnperf:NAME ..."; a user's namespace that only looks like the
# lab's is left), after ending what still runs in them.
lab_down() {
  local n pids i left=""
  for n in $(ip netns list | awk -v p="cnperf-$name-" 'index($1, p) == 1 {print $1}'); do
    ip -n "$n" -o link show lo 2>/dev/null | grep -q " alias cnperf:$name mode=" || continue
    pids=$(ip netns pids "$n" 2>/dev/null || true)
    if [ -n "$pids" ]; then
      # shellcheck disable=SC2086
      kill -TERM $pids 2>/dev/null || true
      for i in $(seq 1 20); do
        pids=$(ip netns pids "$n" 2>/dev/null || true)
        [ -z "$pids" ] && break
        sleep 0.1
      done
      # shellcheck disable=SC2086
      [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
    fi
    ip netns del "$n" || left="$left $n"
  done
  [ -z "$left" ] || fail "lab $name: namespaces could not be removed:$left"
  log "lab $name removed (without cnperf)"
}

down() {
  local pids p i
  pids=$(cluster_pids | sort -un)
  if [ -n "$pids" ]; then
    log "stopping $(echo "$pids" | wc -l) processes"
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null || true
    for i in $(seq 1 40); do
      pids=$(cluster_pids | sort -un)
      [ -z "$pids" ] && break
      if [ "$i" = 20 ]; then
        log "SIGKILL after 5 s: $(for p in $pids; do cat "/proc/$p/comm" 2>/dev/null; done | sort | uniq -c | tr -s ' \n' ' ')"
        kill -KILL $pids 2>/dev/null || true
      fi
      sleep 0.25
    done
    pids=$(cluster_pids | sort -un)
    [ -z "$pids" ] || fail "processes still alive after SIGKILL: $(echo $pids)"
  fi
  # Mounts: the nodes' mounts live in their own mount namespaces and went
  # with their last process; anything still under the cluster's dirs in
  # this namespace is unmounted, deepest first.
  local m
  for m in $(awk -v a="$run" -v b="$var" '$5 ~ "^"a"(/|$)" || $5 ~ "^"b"(/|$)" {print $5}' /proc/self/mountinfo | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m"
  done
  # Cgroups, deepest first, in every controller (kubelet makes its kubepods
  # tree in all of them).
  # A cgroup whose last task just exited may refuse rmdir for a moment.
  local left
  for i in $(seq 1 20); do
    left=""
    for c in /sys/fs/cgroup/*/; do
      [ -d "$c$cgrel" ] || continue
      find "$c$cgrel" -depth -type d -exec rmdir {} + 2>/dev/null || true
      [ -d "$c$cgrel" ] && left="$left $c$cgrel"
    done
    [ -z "$left" ] && break
    sleep 0.25
  done
  [ -z "$left" ] || fail "cgroups could not be removed:$left"
  for c in /sys/fs/cgroup/*/; do
    [ ! -d "${c}cnperf-k8s" ] || rmdir "${c}cnperf-k8s" 2>/dev/null || true
  done
  # The lab (its namespaces hold the routes, bridges and iptables rules):
  # by cnperf when there is one, else by hand, so that taking a cluster
  # down needs no cnperf binary.
  if ip netns list | grep -q "^cnperf-$name-"; then
    local c; c=$(cnperf_find)
    if [ -n "$c" ]; then
      "$c" lab down "$name" >&2
    else
      lab_down
    fi
  fi
  # Directories the nodes hid behind their own tmpfs, made by an `up` of
  # this cluster when they did not exist; removed once no cluster is left.
  local created=$var/created-dirs
  local dirs=""
  [ -f "$created" ] && dirs=$(cat "$created")
  rm -rf "$run" "$var"
  rmdir /run/cnperf/k8s /var/lib/cnperf/k8s 2>/dev/null || true
  rmdir /var/lib/cnperf 2>/dev/null || true
  if [ ! -d /run/cnperf/k8s ] && [ ! -d /var/lib/cnperf/k8s ]; then
    for d in $dirs; do rmdir "$d" 2>/dev/null || true; done
  fi
  log "cluster $name is down"
}

# ---------------------------------------------------------------- up

up() {
  local nodes=${1:-2}
  [[ $nodes =~ ^[0-9]+$ ]] && [ "$nodes" -ge 1 ] && [ "$nodes" -le $MAX_NODES ] ||
    die "NODES '$nodes': want 1 to $MAX_NODES"
  local b
  for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl k8s-relay; do
    [ -x "$bin/$b" ] || die "$bin/$b missing: run scripts/k8s-build.sh first"
  done
  [ -f "$images/pause.tar" ] || die "$images/pause.tar missing: run scripts/k8s-build.sh first"
  for b in containerd ctr runc nsenter unshare openssl iptables conntrack; do
    command -v "$b" > /dev/null || die "$b missing: run scripts/install-deps.sh k8s"
  done
  for b in bridge host-local loopback portmap; do
    [ -x "/usr/lib/cni/$b" ] || die "/usr/lib/cni/$b missing: run scripts/install-deps.sh k8s"
  done
  [ -d /sys/fs/cgroup/memory ] || die "no cgroup v1 memory controller at /sys/fs/cgroup/memory"
  if [ -e "$run" ] || [ -e "$var" ] || ip netns list | grep -q "^cnperf-$name-"; then
    die "cluster or lab $name exists: scripts/k8s-cluster.sh down $name first"
  fi
  local cnperf; cnperf=$(cnperf_bin)
  local t0; t0=$(date +%s.%N)
  mkdir -p "$run" "$var/pki" "$var/logs"
  : > "$state"
  # Anything failing from here leaves nothing behind.
  trap 'rc=$?; if [ $rc -ne 0 ]; then if [ -n "${CNPERF_K8S_KEEP:-}" ]; then log "up failed; kept for debugging (logs in $var/logs), then: k8s-cluster.sh down $name"; else log "up failed, removing what was made (CNPERF_K8S_KEEP=1 keeps it and its logs)"; down || true; fi; fi' EXIT

  # The directories a node hides behind its own tmpfs must exist to be
  # mounted on; note the ones made here so `down` removes them again.
  local d
  : > "$var/created-dirs"
  for d in /var/lib/cni /var/log/containers /run/containerd; do
    if [ ! -d "$d" ]; then mkdir -p "$d"; echo "$d" >> "$var/created-dirs"; fi
  done

  local hosts="cp" i
  for i in $(seq 1 "$nodes"); do hosts="$hosts,node$i"; done
  log "lab $name: hosts $hosts"
  "$cnperf" lab up "$name" --mode bare --hosts "$hosts" > "$var/logs/lab.txt"

  # --- PKI: one CA; identities as kubeadm names them, so RBAC's default
  # roles and the Node authorizer apply.
  log "certificates"
  openssl ecparam -name prime256v1 -genkey -noout -out "$var/pki/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$var/pki/ca.key" -subj "/CN=cnperf-k8s-$name-ca" -days 3650 -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
    -out "$var/pki/ca.crt" 2>/dev/null
  cert apiserver kube-apiserver "" "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:198.18.0.1,IP:$SERVICE_API_IP"
  cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
  cert admin kubernetes-admin system:masters
  cert controller-manager system:kube-controller-manager
  cert scheduler system:kube-scheduler
  cert kube-proxy system:kube-proxy
  openssl ecparam -name prime256v1 -genkey -noout -out "$var/pki/sa.key" 2>/dev/null
  openssl ec -in "$var/pki/sa.key" -pubout -out "$var/pki/sa.pub" 2>/dev/null

  # --- control plane on host cp (198.18.0.1), all in its namespace.
  local cpns; cpns=$(ns cp)
  local cpd=$var/cp
  mkdir -p "$cpd/etcd"
  kubeconfig "$cpd/controller-manager.kubeconfig" "https://127.0.0.1:$API_PORT" controller-manager
  kubeconfig "$cpd/scheduler.kubeconfig" "https://127.0.0.1:$API_PORT" scheduler
  log "control plane on $cpns (198.18.0.1)"
  # No fsync: a throwaway test cluster, and the disk is shared with labs.
  launch etcd "$cgrel/cp" "$var/logs/etcd.log" nsenter --net="/run/netns/$cpns" \
    "$bin/etcd" --name cp --data-dir "$cpd/etcd" --unsafe-no-fsync \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster cp=http://127.0.0.1:2380 --log-level warn
  launch kube-apiserver "$cgrel/cp" "$var/logs/kube-apiserver.log" nsenter --net="/run/netns/$cpns" \
    "$bin/kube-apiserver" --advertise-address=198.18.0.1 --bind-address=0.0.0.0 --secure-port=$API_PORT \
    --etcd-servers=http://127.0.0.1:2379 \
    --service-cluster-ip-range=$SERVICE_CIDR --service-node-port-range=30000-32767 \
    --client-ca-file="$var/pki/ca.crt" \
    --tls-cert-file="$var/pki/apiserver.crt" --tls-private-key-file="$var/pki/apiserver.key" \
    --kubelet-client-certificate="$var/pki/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$var/pki/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types=InternalIP \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$var/pki/sa.pub" --service-account-signing-key-file="$var/pki/sa.key" \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --allow-privileged=true --profiling=false --v=1
  # The relay: 127.0.0.1:PORT in the root namespace to the API server.
  local port=16443
  while ss -Hltn "sport = :$port" | grep -q .; do port=$((port + 1)); done
  launch k8s-relay "$cgrel/relay" "$var/logs/relay.log" \
    "$bin/k8s-relay" "127.0.0.1:$port" "/run/netns/$cpns" "127.0.0.1:$API_PORT"
  echo "$port" > "$var/relay-port"
  kubeconfig "$var/kubeconfig" "https://127.0.0.1:$port" admin
  kubeconfig "$var/kubeconfig-lab" "https://198.18.0.1:$API_PORT" admin
  wait_for "the API server" 90 kc get --raw /readyz
  launch kube-controller-manager "$cgrel/cp" "$var/logs/kube-controller-manager.log" nsenter --net="/run/netns/$cpns" \
    "$bin/kube-controller-manager" --kubeconfig="$cpd/controller-manager.kubeconfig" \
    --authentication-kubeconfig="$cpd/controller-manager.kubeconfig" \
    --authorization-kubeconfig="$cpd/controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --leader-elect=false \
    --cluster-signing-cert-file="$var/pki/ca.crt" --cluster-signing-key-file="$var/pki/ca.key" \
    --root-ca-file="$var/pki/ca.crt" --service-account-private-key-file="$var/pki/sa.key" \
    --use-service-account-credentials=true --service-cluster-ip-range=$SERVICE_CIDR \
    --cluster-cidr=$CLUSTER_CIDR --allocate-node-cidrs=false --v=1
  launch kube-scheduler "$cgrel/cp" "$var/logs/kube-scheduler.log" nsenter --net="/run/netns/$cpns" \
    "$bin/kube-scheduler" --kubeconfig="$cpd/scheduler.kubeconfig" \
    --authentication-kubeconfig="$cpd/scheduler.kubeconfig" \
    --authorization-kubeconfig="$cpd/scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --leader-elect=false --v=1

  # --- nodes
  local j
  for i in $(seq 1 "$nodes"); do
    node_up "$i" "$nodes"
  done
  # The control plane host routes every pod network too, so a client there
  # (a driver run with kubeconfig-lab) reaches pods directly.
  for j in $(seq 1 "$nodes"); do
    ip -n "$cpns" route add "198.18.$((64 + j)).0/24" via "198.18.0.$((j + 1))" dev eth0
  done

  # --- ready: nodes registered and Ready, their pod CIDRs recorded (the
  # controller-manager allocates none: each node's is fixed by the plan),
  # and the default ServiceAccount there (pods are refused without it).
  log "waiting for $nodes nodes"
  wait_for "$nodes nodes to register" 120 sh -c "[ \$('$bin/kubectl' --kubeconfig '$var/kubeconfig' get nodes -o name | wc -l) -ge $nodes ]"
  for i in $(seq 1 "$nodes"); do
    kc patch node "node$i" --type merge -p "{\"spec\":{\"podCIDR\":\"198.18.$((64 + i)).0/24\",\"podCIDRs\":[\"198.18.$((64 + i)).0/24\"]}}" > /dev/null
  done
  kc wait --for=condition=Ready node --all --timeout=120s > /dev/null
  wait_for "the default ServiceAccount" 60 kc get serviceaccount default
  trap - EXIT
  local t1; t1=$(date +%s.%N)
  printf '%s\n' "$t0 $t1" > "$var/up-times"
  log "cluster $name up in $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s"
  kc get nodes -o wide >&2
  echo "$var/kubeconfig"
}

# node_up I N: host nodeI (198.18.0.(I+1)) with containerd, kubelet and
# kube-proxy, pods on 198.18.(64+I).0/24.
node_up() {
  local i=$1 n=$2 node="node$1"
  local nsn; nsn=$(ns "$node")
  local addr="198.18.0.$((i + 1))" podnet="198.18.$((64 + i)).0/24" podgw="198.18.$((64 + i)).1"
  local nd=$var/$node nr=$run/$node
  mkdir -p "$nd/cni/net.d" "$nd/kubelet" "$nd/pod-logs" "$nd/sysctl" "$nr"
  log "$node on $nsn ($addr), pods $podnet"

  # Routes to the other nodes' pod networks; the node forwards for its pods.
  local j
  for j in $(seq 1 "$n"); do
    [ "$j" = "$i" ] && continue
    ip -n "$nsn" route add "198.18.$((64 + j)).0/24" via "198.18.0.$((j + 1))" dev eth0
  done
  ip netns exec "$nsn" sysctl -qw net.ipv4.ip_forward=1

  cert "$node" "system:node:$node" system:nodes "DNS:$node,IP:$addr"
  kubeconfig "$nd/kubelet.kubeconfig" "https://198.18.0.1:$API_PORT" "$node"
  kubeconfig "$nd/kube-proxy.kubeconfig" "https://198.18.0.1:$API_PORT" kube-proxy

  cat > "$nd/cni/net.d/10-cnperf.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "cnperf-k8s-$name",
  "plugins": [
    {
      "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$podnet", "gateway": "$podgw"}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": "$nd/cni/ipam"
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF

  local pause_ref; pause_ref=$(cat "$images/pause.ref")
  # CAP_SYS_RESOURCE is bit 24 of the bounding set.
  local restrict_oom=false
  (( (16#$(awk '/^CapBnd/ {print $2}' /proc/self/status) >> 24) & 1 )) || restrict_oom=true
  cat > "$nd/containerd.toml" <<EOF
version = 2
root = "$nd/containerd"
state = "$nr/containerd"
# opt would populate /opt/containerd; the others are snapshotters never used.
disabled_plugins = ["io.containerd.internal.v1.opt",
  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "$nr/containerd.sock"
[ttrpc]
  address = "$nr/containerd.sock.ttrpc"
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause_ref"
  # Pod network namespaces under the state dir, not /run/netns.
  netns_mounts_under_state_dir = true
  # No process here may lower its oom_score_adj (no CAP_SYS_RESOURCE in this
  # machine's bounding set): runc would fail setting the pause's -998.
  restrict_oom_score_adj = $restrict_oom
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$nr/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$nd/cni/net.d"
    max_conf_num = 1
EOF

  cat > "$nd/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $addr
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $var/pki/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $var/pki/$node.crt
tlsPrivateKeyFile: $var/pki/$node.key
containerRuntimeEndpoint: unix://$nr/containerd.sock
imageServiceEndpoint: unix://$nr/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: /$cgrel/$node
cgroupsPerQOS: true
enforceNodeAllocatable: [pods]
failSwapOn: false
failCgroupV1: false
protectKernelDefaults: true
podLogsDir: $nd/pod-logs
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
rotateCertificates: false
serverTLSBootstrap: false
maxPods: 110
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
EOF

  cat > "$nd/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $nd/kube-proxy.kubeconfig}
mode: iptables
clusterCIDR: $CLUSTER_CIDR
hostnameOverride: $node
bindAddress: $addr
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# 0: leave the kernel's conntrack table size and timeouts alone (the table
# size is machine-wide).
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF

  # kubelet insists on its kernel tunables (it would set vm.overcommit_memory,
  # kernel.panic, kernel.panic_on_oops machine-wide); with
  # protectKernelDefaults it only checks them, and inside the node's own
  # mount namespace it reads these files, so the machine is left alone.
  local want k v real
  want="vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000"
  local binds=""
  for k in $want; do
    v=${k#*=} k=${k%%=*}
    real=$(cat "/proc/sys/$k")
    if [ "$real" != "$v" ]; then
      echo "$v" > "$nd/sysctl/${k//\//.}"
      binds="$binds $nd/sysctl/${k//\//.}:/proc/sys/$k"
    fi
  done

  local cnperf_tar=""
  [ -f "$images/cnperf.tar" ] && cnperf_tar=$images/cnperf.tar
  # The node's daemons share one mount namespace of their own (every mount
  # private): container rootfs, pod shm, volumes and the CRI's pod netns
  # files stay in it and vanish with its last process. /run/netns,
  # /run/containerd (shim sockets) and /var/lib/cni (the CNI cache) get a
  # tmpfs there, so nothing of the node lands in the machine's own.
  cat > "$nd/run.sh" <<EOF
#!/bin/sh
set -eu
for d in /run/netns /run/containerd /var/lib/cni /var/log/containers; do
  mount -t tmpfs -o mode=0755,size=64m tmpfs "\$d"
done
for b in $binds; do mount --bind "\${b%%:*}" "\${b#*:}"; done
containerd --config "$nd/containerd.toml" > "$var/logs/$node-containerd.log" 2>&1 &
echo \$! > "$nr/containerd.pid"
i=0
until ctr --address "$nr/containerd.sock" version > /dev/null 2>&1; do
  i=\$((i + 1)); [ \$i -lt 100 ] || { echo "containerd did not start" >&2; exit 1; }
  sleep 0.1
done
ctr --address "$nr/containerd.sock" -n k8s.io images import "$images/pause.tar"
[ -z "$cnperf_tar" ] || ctr --address "$nr/containerd.sock" -n k8s.io images import "$cnperf_tar"
"$bin/kubelet" --config "$nd/kubelet.yaml" --kubeconfig "$nd/kubelet.kubeconfig" \\
  --root-dir "$nd/kubelet" --cert-dir "$nd/kubelet/pki" \\
  --hostname-override $node --node-ip $addr \\
  --node-labels cnperf.io/cluster=$name,cnperf.io/host=$node,cnperf.io/cni=bridge --v=1 \\
  > "$var/logs/$node-kubelet.log" 2>&1 &
echo \$! > "$nr/kubelet.pid"
"$bin/kube-proxy" --config "$nd/kube-proxy.yaml" --v=1 > "$var/logs/$node-kube-proxy.log" 2>&1 &
echo \$! > "$nr/kube-proxy.pid"
wait
EOF
  launch "$node" "$cgrel/$node/daemons" "$var/logs/$node.log" \
    nsenter --net="/run/netns/$nsn" unshare --mount --propagation private sh "$nd/run.sh"
}

# ---------------------------------------------------------------- check

# check: the smoke test CI runs after `up`: all nodes Ready, an rr server
# pod (the workload image) on each node, then from the last node's pod by
# exec: pod to pod (across nodes when there are several), a ClusterIP
# Service, a NodePort on another node's address; and from host cp (outside
# the pod network) the pod and the NodePort. Removes what it made.
check() {
  [ -f "$var/kubeconfig" ] || fail "cluster $name is not up"
  local n img t0
  t0=$(date +%s)
  img=$(cat "$images/cnperf.ref" 2>/dev/null) || fail "no workload image: scripts/k8s-build.sh CNPERF_BINARY"
  n=$(kc get nodes -o name | wc -l)
  kc wait --for=condition=Ready node --all --timeout=60s > /dev/null || fail "not all nodes are Ready"
  local i m=""
  m=$(printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: cnperf-check}\n')
  for i in $(seq 1 "$n"); do
    m=$m$(printf '\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: rr-node%s, namespace: cnperf-check, labels: {app: cnperf-check, node: node%s}}\nspec:\n  nodeName: node%s\n  terminationGracePeriodSeconds: 1\n  containers:\n  - {name: rr, image: "%s", imagePullPolicy: Never, command: [/cnperf, serve, rr, --listen, ":5202"], ports: [{containerPort: 5202}]}\n' "$i" "$i" "$i" "$img")
  done
  m=$m$(printf '\n---\napiVersion: v1\nkind: Service\nmetadata: {name: rr, namespace: cnperf-check}\nspec:\n  selector: {node: node1}\n  ports: [{port: 5202, targetPort: 5202}]\n')
  m=$m$(printf '\n---\napiVersion: v1\nkind: Service\nmetadata: {name: rr-nodeport, namespace: cnperf-check}\nspec:\n  type: NodePort\n  selector: {node: node1}\n  ports: [{port: 5202, targetPort: 5202, nodePort: 30202}]\n')
  echo "$m" | kc apply -f - > /dev/null
  trap 'kc delete namespace cnperf-check --wait=false > /dev/null 2>&1 || true' RETURN
  kc -n cnperf-check wait --for=condition=Ready pod --all --timeout=90s > /dev/null ||
    { kc -n cnperf-check get pods -o wide >&2; fail "check: pods not Ready"; }
  kc -n cnperf-check get pods -o wide >&2
  local ip1 svc from="rr-node$n" nodeport_addr
  ip1=$(kc -n cnperf-check get pod rr-node1 -o jsonpath='{.status.podIP}')
  svc=$(kc -n cnperf-check get service rr -o jsonpath='{.spec.clusterIP}')
  # The NodePort on the last node's address (across nodes to node1's pod
  # when there are several).
  nodeport_addr=198.18.0.$((n + 1))
  probe() { # probe WHAT CMD...: one second of rr, its trans/s
    local out
    out=$("$@" 2>&1) || { echo "$out" >&2; fail "check: $1 failed"; }
    echo "$out" | awk -v w="$WHAT" '/trans\/s$/ && /transactions/ {print "k8s-cluster: check ok  " w ": " $(NF-1) " trans/s"}' >&2
  }
  WHAT="pod rr-node$n -> pod rr-node1 $ip1" probe kc -n cnperf-check exec "$from" -- /cnperf rr --server "$ip1:5202" -t 1s
  WHAT="pod rr-node$n -> ClusterIP $svc" probe kc -n cnperf-check exec "$from" -- /cnperf rr --server "$svc:5202" -t 1s
  WHAT="pod rr-node$n -> NodePort $nodeport_addr:30202" probe kc -n cnperf-check exec "$from" -- /cnperf rr --server "$nodeport_addr:30202" -t 1s
  local cnperf; cnperf=$(cnperf_bin)
  WHAT="host cp -> pod $ip1" probe nsenter --net="/run/netns/$(ns cp)" "$cnperf" rr --server "$ip1:5202" -t 1s
  WHAT="host cp -> NodePort $nodeport_addr:30202" probe nsenter --net="/run/netns/$(ns cp)" "$cnperf" rr --server "$nodeport_addr:30202" -t 1s
  kc delete namespace cnperf-check --timeout=60s > /dev/null
  trap - RETURN
  log "check passed in $(( $(date +%s) - t0 )) s"
}

# ---------------------------------------------------------------- import

# import_image puts an image tarball (`cnperf image save`, docker save) in
# every node's containerd, where pods with imagePullPolicy Never find it.
import_image() {
  local tar=$1 sock n=0
  [ -f "$tar" ] || die "image $tar: no such file"
  [ -f "$state" ] || fail "cluster $name is not up"
  for sock in "$run"/node*/containerd.sock; do
    [ -S "$sock" ] || continue
    ctr --address "$sock" -n k8s.io images import "$tar" > /dev/null || fail "import $tar on $(basename "$(dirname "$sock")")"
    n=$((n + 1))
  done
  [ "$n" -gt 0 ] || fail "cluster $name has no node's containerd to import into"
  log "imported $tar on $n nodes"
}

# ---------------------------------------------------------------- status

status() {
  [ -f "$state" ] || fail "cluster $name is not up"
  local pid st role f
  while read -r pid st role; do
    if [ "$(start_time "$pid")" = "$st" ]; then echo "$role pid $pid running"; else echo "$role pid $pid gone"; fi
  done < "$state"
  for f in "$run"/node*/*.pid; do
    [ ! -f "$f" ] || echo "$(basename "$(dirname "$f")") $(basename "$f" .pid) pid $(cat "$f")"
  done
  # Memory of everything started (daemons, shims, pods): the cgroup tree's
  # resident memory, and its usage with the page cache.
  local m=/sys/fs/cgroup/memory/$cgrel
  if [ -f "$m/memory.stat" ]; then
    awk '$1 == "total_rss" {r = $2} $1 == "total_cache" {c = $2}
      END {printf "memory: %.0f MiB resident, %.0f MiB with page cache\n", r / 1048576, (r + c) / 1048576}' "$m/memory.stat"
  fi
  kc get nodes -o wide
}

case $cmd in
  up) [ $# -le 3 ] || usage; up "${3:-2}" ;;
  down) [ $# -eq 2 ] || usage; down ;;
  kubeconfig)
    [ $# -le 3 ] || usage
    f=$var/kubeconfig
    if [ $# -eq 3 ]; then [ "$3" = --lab ] || usage; f=$var/kubeconfig-lab; fi
    [ -f "$f" ] || fail "cluster $name is not up"
    echo "$f" ;;
  status) [ $# -eq 2 ] || usage; status ;;
  check) [ $# -eq 2 ] || usage; check ;;
  import) [ $# -eq 3 ] || usage; import_image "$3" ;;
  *) usage ;;
esac
