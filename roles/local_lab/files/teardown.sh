# shellcheck shell=bash
# benchlab.bench local_lab teardown: remove everything a lab with prefix $1 created, also when a
# killed run left it half-built. Idempotent; prints "removed: <what>" for each thing it removed.
# Only names starting with the prefix are touched: containers <prefix>-*, links <prefix>br0 and
# <prefix>-*, loop devices backed by files under /var/lib/benchlab/<prefix>, mounts under
# /var/lib/lxc/<prefix>-*.
set -u
prefix=${1:-}
if ! [[ $prefix =~ ^[a-z][a-z0-9]{1,7}$ ]]; then
    echo "teardown.sh: refusing prefix '$prefix' (need 2-8 lowercase letters/digits)" >&2
    exit 2
fi
labdir=/var/lib/benchlab/$prefix
lxcpath=/var/lib/lxc
rc=0

# 1. containers: stop (kill), which ends every process inside
for ct in $(lxc-ls -1 2>/dev/null | grep -E "^${prefix}-" || true); do
    if [ "$(lxc-info -n "$ct" -s -H 2>/dev/null)" != STOPPED ]; then
        lxc-stop -n "$ct" -k >/dev/null 2>&1 && echo "removed: process tree of container $ct"
    fi
done

# 2. processes left in the lab's cgroups (a container whose monitor died)
for f in /proc/[0-9]*/cgroup; do
    pid=${f#/proc/}; pid=${pid%/cgroup}
    if grep -qE "lxc\.(payload|monitor)\.${prefix}-|/lxc/${prefix}-" "$f" 2>/dev/null; then
        [ "$pid" = "$$" ] && continue
        kill -9 "$pid" 2>/dev/null && echo "removed: process $pid"
    fi
done

# 3. mounts under the containers (deepest first), then the loop devices of the lab images
for m in $(findmnt -rn -o TARGET | grep -E "^${lxcpath}/${prefix}-" | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" || rc=1
    echo "removed: mount $m"
done
while read -r dev back; do
    [ -n "$dev" ] || continue
    case "$back" in
        "$labdir"/*)
            m=$(findmnt -rn -o TARGET -S "$dev" | head -n1)
            if [ -n "$m" ]; then umount "$m" 2>/dev/null || umount -l "$m"; echo "removed: mount $m"; fi
            losetup -d "$dev" && echo "removed: loop device $dev ($back)" || rc=1 ;;
    esac
done < <(losetup --noheadings --list --output NAME,BACK-FILE 2>/dev/null)

# 4. container directories (only when nothing is mounted there any more)
for d in "$lxcpath/${prefix}"-*; do
    [ -e "$d" ] || continue
    if findmnt -rn -o TARGET | grep -qE "^${d}(/|$)"; then
        echo "teardown.sh: $d still has mounts, left in place" >&2; rc=1; continue
    fi
    ct=$(basename "$d")
    lxc-destroy -n "$ct" >/dev/null 2>&1 || true
    rm -rf --one-file-system "$d"
    echo "removed: container $ct"
done

# 5. routes into the lab left on lab interfaces, then the links (veths and the bridge)
while read -r route; do
    [ -n "$route" ] || continue
    ip route del $route 2>/dev/null && echo "removed: route $route"
done < <(ip -o route show root 198.18.0.0/15 2>/dev/null | grep -E " dev ${prefix}(br0|-)" || true)
for l in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^(${prefix}br0|${prefix}-.+)$" || true); do
    ip link del "$l" 2>/dev/null && echo "removed: link $l"
done

# 6. the lab state (images, keys, logs); the rootfs cache under /var/cache/benchlab is kept
if [ -e "$labdir" ]; then
    rm -rf --one-file-system "$labdir" && echo "removed: lab directory $labdir"
fi
exit $rc
