# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pack an installed collection (a directory with MANIFEST.json and FILES.json, such as the copy of
community.libvirt the Makefile extracts from the `ansible` package) into a collection artifact
(<namespace>-<name>-<version>.tar.gz) that `ansible-galaxy collection install` accepts, for
installing benchlab.bench with its dependencies where Galaxy cannot be reached.

    collection_tarball.py COLLECTION_DIR OUTPUT_DIR     prints the tarball's path

The `ansible` package leaves out some files its FILES.json lists (CI configuration), and
ansible-galaxy refuses an artifact whose FILES.json names a file it does not hold: FILES.json is
written anew for the files that are there (sha256 of each), and MANIFEST.json's checksum of it.
"""

import hashlib
import io
import json
import os
import sys
import tarfile


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def add_file(tar, name, data):
    member = tarfile.TarInfo(name)
    member.size, member.mode = len(data), 0o644
    tar.addfile(member, io.BytesIO(data))


def pack(src, out_dir):
    with open(os.path.join(src, 'MANIFEST.json'), encoding='utf-8') as f:
        manifest = json.load(f)
    info = manifest['collection_info']
    entries = [dict(name='.', ftype='dir', chksum_type=None, chksum_sha256=None, format=1)]
    files = []
    for root, dirs, names in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d != '__pycache__')
        rel_root = os.path.relpath(root, src)
        for d in dirs:
            entries.append(dict(name=os.path.normpath(os.path.join(rel_root, d)), ftype='dir', chksum_type=None,
                                chksum_sha256=None, format=1))
        for n in sorted(names):
            rel = os.path.normpath(os.path.join(rel_root, n))
            if rel in ('MANIFEST.json', 'FILES.json') or n.endswith('.pyc'):
                continue
            with open(os.path.join(root, n), 'rb') as f:
                data = f.read()
            files.append((rel, data))
            entries.append(dict(name=rel, ftype='file', chksum_type='sha256', chksum_sha256=sha256(data), format=1))
    files_json = json.dumps(dict(files=entries, format=1), indent=4).encode()
    manifest['file_manifest_file'] = dict(name='FILES.json', ftype='file', chksum_type='sha256',
                                          chksum_sha256=sha256(files_json), format=1)
    manifest_json = json.dumps(manifest, indent=4).encode()
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, '%s-%s-%s.tar.gz' % (info['namespace'], info['name'], info['version']))
    with tarfile.open(path, 'w:gz') as tar:
        for name, data in [('MANIFEST.json', manifest_json), ('FILES.json', files_json)]:
            add_file(tar, name, data)
        for entry in entries[1:]:  # the directories too: ansible-galaxy extracts each FILES.json entry
            if entry['ftype'] == 'dir':
                member = tarfile.TarInfo(entry['name'])
                member.type, member.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(member)
        for name, data in files:
            add_file(tar, name, data)
    return path


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    print(pack(argv[0], argv[1]))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
