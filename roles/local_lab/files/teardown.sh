# shellcheck shell=bash
# benchlab.bench local_lab teardown: remove what the lab with prefix $1 created, also when a killed
# run left it half-built. Idempotent; prints "removed: <what>" for each thing it removed and
# "kept (not ours): <what>" for each thing with the lab's names that the lab did not make.
#
# Nothing is chosen by a name pattern. What is removed is what the lab recorded:
# - the lab state file /var/lib/benchlab/lab-<prefix>.json (written by the role BEFORE it creates
#   anything) lists the bridge, the containers, the loop images and the lab directory;
# - a container is removed only when its directory also holds the mark
#   /var/lib/lxc/<name>/benchlab-lab.json naming this lab and this container;
# - processes: those in the cgroups of those containers (exact names), loop devices: those backed by
#   a recorded image, mounts: those under a removed container's directory, routes and links: those
#   on the recorded bridge or the veths of removed containers (the veth is named after its container).
set -u
prefix=${1:-}
if ! [[ $prefix =~ ^[a-z][a-z0-9]{1,7}$ ]]; then
    echo "teardown.sh: refusing prefix '$prefix' (need 2-8 lowercase letters/digits)" >&2
    exit 2
fi
statefile=/var/lib/benchlab/lab-$prefix.json
lxcpath=/var/lib/lxc
rc=0

# The recorded objects, one "kind value" per line; values are checked against what the role writes.
read_state() {
    [ -e "$statefile" ] || return 0
    python3 - "$statefile" "$prefix" <<'EOF'
import json, re, sys
path, prefix = sys.argv[1], sys.argv[2]
try:
    with open(path) as f:
        st = json.load(f)
except (OSError, ValueError) as exc:
    sys.stderr.write('teardown.sh: %s cannot be read (%s): nothing of it is removed\n' % (path, exc))
    sys.exit(3)
if not isinstance(st, dict) or st.get('benchlab') != 1 or st.get('lab') != prefix:
    sys.stderr.write('teardown.sh: %s is not the state of lab %s: nothing of it is removed\n' % (path, prefix))
    sys.exit(3)
name = re.compile(r'^%s-[a-z0-9]{1,8}$' % re.escape(prefix))
if st.get('bridge') == prefix + 'br0':
    print('bridge', st['bridge'])
for c in st.get('containers') or []:
    if isinstance(c, str) and name.match(c):
        print('container', c)
labdir = '/var/lib/benchlab/%s' % prefix
for d in st.get('dirs') or []:
    if d == labdir:
        print('dir', d)
for i in st.get('images') or []:
    if isinstance(i, str) and re.match(r'^%s/%s-[a-z0-9]{1,8}\.img$' % (re.escape(labdir), re.escape(prefix)), i):
        print('image', i)
EOF
}
state=$(read_state) || { echo "teardown.sh: the lab state cannot be used, nothing removed" >&2; exit 1; }
recorded() { awk -v k="$1" '$1 == k {print $2}' <<<"$state"; }

# A container is ours when the lab recorded it and its directory carries the lab's mark.
is_marked() {
    local ct=$1 mark=$lxcpath/$1/benchlab-lab.json
    [ -f "$mark" ] || return 1
    python3 - "$mark" "$prefix" "$ct" <<'EOF'
import json, sys
try:
    with open(sys.argv[1]) as f:
        m = json.load(f)
except (OSError, ValueError):
    sys.exit(1)
sys.exit(0 if isinstance(m, dict) and m.get('benchlab') == 1 and m.get('lab') == sys.argv[2]
         and m.get('guest') == sys.argv[3] else 1)
EOF
}

ours=()
for ct in $(recorded container); do
    if [ ! -e "$lxcpath/$ct" ]; then continue; fi
    if is_marked "$ct"; then ours+=("$ct"); else echo "kept (not ours): container $ct (no benchlab mark of lab $prefix)"; fi
done
# containers with the lab's names that the lab did not record or mark: reported, left alone
for d in "$lxcpath/$prefix"-*; do
    [ -e "$d" ] || continue
    ct=$(basename "$d")
    case " ${ours[*]-} " in *" $ct "*) continue ;; esac
    grep -qxF "container $ct" <<<"$state" || echo "kept (not ours): container $ct (not recorded by lab $prefix)"
done

# 1. containers: stop (kill), which ends every process inside
for ct in "${ours[@]}"; do
    if [ "$(lxc-info -n "$ct" -s -H 2>/dev/null)" = RUNNING ]; then
        lxc-stop -n "$ct" -k >/dev/null 2>&1 && echo "removed: process tree of container $ct"
    fi
done

# 2. processes left in those containers' cgroups (a container whose monitor died): exact names
for f in /proc/[0-9]*/cgroup; do
    pid=${f#/proc/}; pid=${pid%/cgroup}
    [ "$pid" = "$$" ] && continue
    cg=$(cat "$f" 2>/dev/null) || continue
    for ct in "${ours[@]}"; do
        if grep -qE "(lxc\.(payload|monitor)\.|/lxc/)${ct}(/|$)" <<<"$cg"; then
            kill -9 "$pid" 2>/dev/null && echo "removed: process $pid (container $ct)"
            break
        fi
    done
done

# 3. mounts under those containers (deepest first), then the loop devices of the recorded images
for ct in "${ours[@]}"; do
    while read -r m; do
        [ -n "$m" ] || continue
        umount "$m" 2>/dev/null || umount -l "$m" || rc=1
        echo "removed: mount $m"
    done < <(findmnt -rn -o TARGET | awk -v d="$lxcpath/$ct" 'index($0, d "/") == 1 || $0 == d' | sort -r)
done
images=$(recorded image)
while read -r dev back; do
    [ -n "$dev" ] || continue
    if grep -qxF -- "$back" <<<"$images"; then
        m=$(findmnt -rn -o TARGET -S "$dev" | head -n1)
        if [ -n "$m" ]; then umount "$m" 2>/dev/null || umount -l "$m"; echo "removed: mount $m"; fi
        losetup -d "$dev" && echo "removed: loop device $dev ($back)" || rc=1
    fi
done < <(losetup --noheadings --list --output NAME,BACK-FILE 2>/dev/null)

# 4. the container directories (only when nothing is mounted there any more)
for ct in "${ours[@]}"; do
    d=$lxcpath/$ct
    if findmnt -rn -o TARGET | awk -v d="$d" 'index($0, d "/") == 1 || $0 == d {f=1} END {exit !f}'; then
        echo "teardown.sh: $d still has mounts, left in place" >&2; rc=1; continue
    fi
    lxc-destroy -n "$ct" >/dev/null 2>&1 || true
    rm -rf --one-file-system "$d"
    echo "removed: container $ct"
done

# 5. routes into the lab on the lab's links, then the links (veths of removed containers, the bridge)
links=()
for ct in "${ours[@]}"; do links+=("$ct"); done
for b in $(recorded bridge); do links+=("$b"); done
for l in "${links[@]}"; do
    [ -e "/sys/class/net/$l" ] || continue
    while read -r route; do
        [ -n "$route" ] || continue
        # shellcheck disable=SC2086  # the route's own words
        ip route del $route dev "$l" 2>/dev/null && echo "removed: route $route dev $l"
    done < <(ip -o route show root 198.18.0.0/15 dev "$l" 2>/dev/null | awk '{print $1}')
    ip link del "$l" 2>/dev/null && echo "removed: link $l"
done

# 6. the lab directory (images, keys, known_hosts, logs), then the state file; the rootfs cache is kept
for d in $(recorded dir); do
    if [ -e "$d" ]; then rm -rf --one-file-system "$d" && echo "removed: lab directory $d"; fi
done
if [ "$rc" = 0 ] && [ -e "$statefile" ]; then
    rm -f "$statefile" && echo "removed: lab state $statefile"
fi
exit $rc
