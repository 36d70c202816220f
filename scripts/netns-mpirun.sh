#!/usr/bin/env bash
# Runs an MPI command on 2 processes in 2 network namespaces joined by a veth pair, so that
# Open MPI treats them as 2 hosts and talks TCP between them (no shared memory).
#
#   scripts/netns-mpirun.sh COMMAND [ARGS...]
#
# The command runs as `mpirun -n 2 COMMAND ARGS...` with one process in each namespace;
# its stdout is rank 0's. Needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN), `ip` from
# iproute2 and Open MPI's `mpirun`. Where namespaces cannot be made it prints
# `skipped: REASON` on stderr and exits 77 (so a test can tell a skip from a failure).
# Namespaces, links and temporary files are removed on exit.
set -euo pipefail

skip() {
    echo "skipped: $*" >&2
    exit 77
}

[ "$#" -ge 1 ] || { echo "usage: $0 COMMAND [ARGS...]" >&2; exit 2; }
command -v ip >/dev/null 2>&1 || skip "no \`ip\` (iproute2) on the PATH"
command -v mpirun >/dev/null 2>&1 || skip "no \`mpirun\` (Open MPI) on the PATH"
[ "$(id -u)" = 0 ] || skip "network namespaces need root"

tag="pg$$"
ns_a="${tag}a"
ns_b="${tag}b"
# A /24 picked from the process id, so that concurrent runs do not collide.
net="10.$((200 + $$ % 50)).$(($$ / 50 % 250))"
work=$(mktemp -d)

cleanup() {
    ip netns del "$ns_a" 2>/dev/null || true
    ip netns del "$ns_b" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

ip netns add "$ns_a" 2>/dev/null || skip "cannot create a network namespace (ip netns add failed)"
ip netns add "$ns_b" 2>/dev/null || skip "cannot create a second network namespace"
ip link add "${tag}x" type veth peer name "${tag}y" 2>/dev/null ||
    skip "cannot create a veth pair (no veth support or no CAP_NET_ADMIN)"
ip link set "${tag}x" netns "$ns_a"
ip link set "${tag}y" netns "$ns_b"
ip -n "$ns_a" addr add "$net.1/24" dev "${tag}x"
ip -n "$ns_b" addr add "$net.2/24" dev "${tag}y"
for ns in "$ns_a" "$ns_b"; do
    ip -n "$ns" link set lo up
done
ip -n "$ns_a" link set "${tag}x" up
ip -n "$ns_b" link set "${tag}y" up

# Open MPI starts its daemon on the second "host" through this launcher, in place of ssh: the
# host's address names its namespace.
cat >"$work/launch" <<EOF
#!/bin/sh
host="\$1"; shift
case "\$host" in
    $net.1) ns=$ns_a ;;
    $net.2) ns=$ns_b ;;
    *) echo "unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec "\$ns" sh -c "\$*"
EOF
chmod +x "$work/launch"
printf '%s slots=1\n%s slots=1\n' "$net.1" "$net.2" >"$work/hosts"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ip netns exec "$ns_a" mpirun -n 2 --hostfile "$work/hosts" --bind-to none \
    --mca plm_rsh_agent "$work/launch" --mca plm_rsh_no_tree_spawn 1 \
    --mca btl tcp,self --mca btl_tcp_if_include "$net.0/24" \
    --mca oob_tcp_if_include "$net.0/24" \
    "$@"
