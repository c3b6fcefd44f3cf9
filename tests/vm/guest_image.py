"""Build (once) and cache the small Debian guest the KVM test boots.

The image is made from Debian packages only, without mounting anything:
- mmdebstrap makes a minbase bookworm root with systemd, sshd, python3, iperf3 and the Debian
  cloud kernel (initramfs-tools builds its initrd inside the root);
- the kernel and initrd are copied out for a direct kernel boot (root=/dev/vda);
- `mkfs.ext4 -d ROOT` turns the directory into a raw ext4 image (no loop mount).
The guest takes its static address from the kernel command line (`ip=...`, read by
systemd-network-generator for systemd-networkd) and trusts a key pair generated at build time.

Cached under /var/cache/benchlab/kvm-guest-<key>/, where <key> hashes the package list and this
recipe: a warm cache is reused as is (the test boots a qcow2 overlay, never the image itself).
"""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

CACHE_ROOT = Path(os.environ.get('BENCHLAB_IMAGE_CACHE', '/var/cache/benchlab'))
SUITE = 'bookworm'
MIRROR = 'deb http://deb.debian.org/debian bookworm main'
# drbd-utils: drbdadm-84 drives the cloud kernel's in-tree DRBD 8.4 module (the DRBD test);
# bonnie++ for the DRBD matrix; kmod for modprobe; lvm2, mdadm and fio for the device guard's holder
# classes (guard_holders.py: an LVM volume and an md mirror, dd and fio refused on their members).
PACKAGES = ['systemd-sysv', 'udev', 'openssh-server', 'python3', 'iperf3', 'iproute2',
            'linux-image-cloud-amd64', 'initramfs-tools', 'zstd', 'drbd-utils', 'bonnie++', 'kmod',
            'lvm2', 'mdadm', 'fio']
IMAGE_SIZE = '1G'
RECIPE_VERSION = '2'
CUSTOMIZE = [
    'echo kvmt-guest > "$1/etc/hostname"',
    'printf "/dev/vda / ext4 defaults,noatime 0 1\\n" > "$1/etc/fstab"',
    'mkdir -p -m 0700 "$1/root/.ssh"',
    'cp "$KVMT_PUBKEY" "$1/root/.ssh/authorized_keys"',
    'chmod 0600 "$1/root/.ssh/authorized_keys"',
    'chroot "$1" systemctl enable systemd-networkd.service systemd-network-generator.service',
    'chroot "$1" systemctl mask systemd-networkd-wait-online.service apt-daily.timer apt-daily-upgrade.timer'
    ' e2scrub_all.timer fstrim.timer lvm2-monitor.service mdmonitor.service mdmonitor-oneshot.timer'
    ' mdcheck_start.timer mdcheck_continue.timer 2>/dev/null || true',
    'cp -L "$1"/boot/vmlinuz-* "$KVMT_OUT/vmlinuz"',
    'cp -L "$1"/boot/initrd.img-* "$KVMT_OUT/initrd.img"',
    'rm -f "$1"/boot/initrd.img-*',
    'rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*',
]


def cache_key():
    h = hashlib.sha256()
    h.update('\n'.join([RECIPE_VERSION, SUITE, MIRROR, IMAGE_SIZE] + sorted(PACKAGES) + CUSTOMIZE).encode())
    return h.hexdigest()[:16]


def image_dir():
    return CACHE_ROOT / ('kvm-guest-' + cache_key())


def ensure_image(log=sys.stderr):
    """Return the cache directory holding rootfs.img, vmlinuz, initrd.img, id_ed25519[.pub]."""
    final = image_dir()
    if (final / 'done').exists():
        return final
    CACHE_ROOT.mkdir(parents=True, exist_ok=True)
    work = CACHE_ROOT / ('.kvm-guest-build-%d' % os.getpid())
    shutil.rmtree(work, ignore_errors=True)
    out = work / 'out'
    out.mkdir(parents=True)
    root = work / 'root'
    try:
        subprocess.run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'benchlab-kvm-test', '-f',
                        str(out / 'id_ed25519')], check=True)
        env = dict(os.environ, KVMT_PUBKEY=str(out / 'id_ed25519.pub'), KVMT_OUT=str(out))
        argv = ['mmdebstrap', '--variant=minbase', '--include=' + ','.join(PACKAGES),
                '--aptopt=Acquire::Check-Valid-Until "false"']
        argv += ['--customize-hook=' + step for step in CUSTOMIZE]
        argv += [SUITE, str(root), MIRROR]
        subprocess.run(argv, check=True, env=env, stdout=log, stderr=log)
        subprocess.run(['mkfs.ext4', '-q', '-F', '-L', 'kvmt-root', '-d', str(root), str(out / 'rootfs.img'),
                        IMAGE_SIZE], check=True, stdout=log, stderr=log)
        (out / 'packages').write_text('\n'.join(PACKAGES) + '\n')
        (out / 'done').write_text(cache_key() + '\n')
        if final.exists():
            shutil.rmtree(final)
        os.rename(out, final)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return final


if __name__ == '__main__':
    print(ensure_image())
