#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r'''
---
module: drbd_resource
short_description: Render DRBD resource files, validate them with drbdadm and install them
version_added: 0.1.0
description:
  - Checks the resource definitions (protocol, C(on) sections, minors, addresses, secrets) and
    fails naming the field before anything is written or drbdadm runs.
  - Input is data, never syntax. Every value that goes into the file is checked against what
    drbdadm's own lexer accepts. Option values are one word of letters, digits and C(/ . _ -).
    Device paths are absolute, without C(..). Addresses are IPv4/IPv6 with a port. The shared
    secret and handler commands are one quoted line without double quotes, backslashes or control
    characters. A C(;), brace, quote, C(#), newline or stray space is refused, naming the field.
  - Resource and node names may not be drbdadm keywords (C(resource), C(on), C(volume), ...) nor
    C(all), which drbdadm expands to every resource of the host.
  - Handlers (and the legacy C(incon_degr_cmd)) are shell commands DRBD runs as root; they are
    refused unless O(allow_handlers=true).
  - Every file starts with the header line C(# benchlab.bench managed resource <name>; lab=<lab>; do not edit).
    An existing C(<name>.res) is overwritten (or removed with O(state=absent)) only when it carries
    that header for the same resource and lab; any other file is refused, naming it, unless
    O(adopt=true).
  - Renders each resource to C(<config_dir>/<name>.res) in DRBD 8.4 or 9 syntax, translating the
    0.7-era keys C(syncer) and C(incon_degr_cmd) to their modern places or refusing them with a
    message naming the replacement.
  - Every rendered file is checked with the real C(drbdadm ... sh-nop) (no kernel module needed)
    before it is installed; DRBD 9 tools check it together with the host's main configuration.
    On a rejection the module fails with drbdadm's message and the offending line, and installs
    nothing.
  - Files are written atomically with mode 0600 (they may hold the shared secret); a file is only
    rewritten when its content differs.
  - The shared secret never appears in the module's output, diff or failure messages.
author:
  - benchlab.bench maintainers (@benchlab)
options:
  resources:
    description:
      - The resources, as described for the C(drbd_resources) variable of the
        C(benchlab.bench.drbd) role.
      - With O(state=absent) only C(name) is used.
      - Every key is declared (an unknown one is refused), so that Ansible masks the shared secret
        (O(resources[].shared_secret), O(resources[].net.shared_secret)) in the start-up line it logs to the
        target's syslog or journal, as well as in everything the module returns.
      - The values are checked by the module itself (see the description), naming the field.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: Resource name.
        type: raw
      protocol:
        description: Replication protocol (V(A), V(B) or V(C); default V(C)).
        type: raw
      device:
        description: C(/dev/drbd<minor>) for every node (or set O(resources[].minor)).
        type: raw
      minor:
        description: Device minor for every node.
        type: raw
      disk:
        description: Backing disk for every node.
        type: raw
      meta_disk:
        description: C(internal) (default), C(/dev/sdb1 [0]) (external with index), or a mapping C(device)/C(index).
        type: raw
      port:
        description: TCP port for nodes whose address has none.
        type: raw
      nodes:
        description: The C(on) sections, one per node (two for DRBD 8.4, two or more for DRBD 9).
        type: list
        elements: dict
        suboptions:
          name:
            description: The node's host name as C(uname -n) prints it.
            type: raw
          address:
            description: C(10.0.0.1:7788), C([fd00::1]:7788) or an address with O(resources[].nodes[].port).
            type: raw
          port:
            description: TCP port.
            type: raw
          node_id:
            description: DRBD 9 node-id (default the position in the list).
            type: raw
          device:
            description: Per-node device.
            type: raw
          minor:
            description: Per-node minor.
            type: raw
          disk:
            description: Per-node backing disk.
            type: raw
          meta_disk:
            description: Per-node meta-disk.
            type: raw
      net:
        description:
          - The C(net) options, spelled with underscores (they become dashes in the file). The options
            drbdadm 9.22 or drbdadm-84 accepts in a C(net) section; any other is refused.
        type: dict
        suboptions:
          after_sb_0pri:
            description: The net option C(after-sb-0pri).
            type: raw
          after_sb_1pri:
            description: The net option C(after-sb-1pri).
            type: raw
          after_sb_2pri:
            description: The net option C(after-sb-2pri).
            type: raw
          allow_remote_read:
            description: The net option C(allow-remote-read).
            type: raw
          allow_two_primaries:
            description: The net option C(allow-two-primaries).
            type: raw
          always_asbp:
            description: The net option C(always-asbp).
            type: raw
          congestion_extents:
            description: The net option C(congestion-extents).
            type: raw
          congestion_fill:
            description: The net option C(congestion-fill).
            type: raw
          connect_int:
            description: The net option C(connect-int).
            type: raw
          cram_hmac_alg:
            description: The net option C(cram-hmac-alg).
            type: raw
          csums_after_crash_only:
            description: The net option C(csums-after-crash-only).
            type: raw
          csums_alg:
            description: The net option C(csums-alg).
            type: raw
          data_integrity_alg:
            description: The net option C(data-integrity-alg).
            type: raw
          fencing:
            description: The net option C(fencing).
            type: raw
          ko_count:
            description: The net option C(ko-count).
            type: raw
          max_buffers:
            description: The net option C(max-buffers).
            type: raw
          max_epoch_size:
            description: The net option C(max-epoch-size).
            type: raw
          on_congestion:
            description: The net option C(on-congestion).
            type: raw
          ping_int:
            description: The net option C(ping-int).
            type: raw
          ping_timeout:
            description: The net option C(ping-timeout).
            type: raw
          protocol:
            description: The net option C(protocol).
            type: raw
          rcvbuf_size:
            description: The net option C(rcvbuf-size).
            type: raw
          rr_conflict:
            description: The net option C(rr-conflict).
            type: raw
          shared_secret:
            description:
              - The peer authentication secret (C(shared-secret)), as an alternative to the resource's
                O(resources[].shared_secret). Never logged (Ansible masks it in the start-up log line), printed or
                returned.
            type: raw
          sndbuf_size:
            description: The net option C(sndbuf-size).
            type: raw
          socket_check_timeout:
            description: The net option C(socket-check-timeout).
            type: raw
          tcp_cork:
            description: The net option C(tcp-cork).
            type: raw
          timeout:
            description: The net option C(timeout).
            type: raw
          transport:
            description: The net option C(transport).
            type: raw
          unplug_watermark:
            description: The net option C(unplug-watermark).
            type: raw
          use_rle:
            description: The net option C(use-rle).
            type: raw
          verify_alg:
            description: The net option C(verify-alg).
            type: raw
          on_disconnect:
            description: Legacy (DRBD 0.7); refused with the replacement named.
            type: raw
      disk_options:
        description: disk options (on_io_error, resync_rate, c_plan_ahead, al_extents, resync_after, ...).
        type: raw
      startup:
        description: startup options (wfc_timeout, degr_wfc_timeout, ...).
        type: raw
      options:
        description: Resource options (DRBD 9 auto_promote, quorum, ...; cpu_mask).
        type: raw
      handlers:
        description: Handlers (pri_on_incon_degr, local_io_error, ...); refused unless O(allow_handlers=true).
        type: raw
      shared_secret:
        description:
          - Peer authentication secret (needs O(resources[].cram_hmac_alg)). Never logged (Ansible masks it in the
            start-up log line), printed or returned.
        type: raw
      cram_hmac_alg:
        description: HMAC algorithm for the secret (sha1, sha256, ...).
        type: raw
      connection_mesh:
        description: Write a DRBD 9 connection-mesh of all nodes (default with more than two nodes).
        type: raw
      syncer:
        description:
          - Legacy (DRBD 0.7/8.3). rate, al_extents, after, verify_alg, csums_alg, ... are moved to their
            DRBD 8.4/9 places; group is refused.
        type: raw
      incon_degr_cmd:
        description: Legacy (DRBD 0.7); becomes handlers.pri_on_incon_degr (needs O(allow_handlers=true)).
        type: raw
      primary:
        description: The node that becomes primary and holds the benchmark filesystem (default the first node).
        type: raw
      mount:
        description: Mount point of the benchmark filesystem on the primary (used by the role).
        type: raw
      fstype:
        description: Filesystem made on the DRBD device (default C(ext4)).
        type: raw
  state:
    description: V(present) installs the files, V(absent) removes them.
    type: str
    choices: [present, absent]
    default: present
  syntax:
    description:
      - The configuration syntax. V(auto) follows the loaded kernel module, else the installed
        drbd-utils (9.x without a module writes DRBD 9 syntax).
      - V(8.4) with drbd-utils 9 is validated with their bundled C(drbdadm-84).
    type: str
    choices: [auto, '8.4', '9']
    default: auto
  config_dir:
    description: Directory the resource files go to.
    type: path
    default: /etc/drbd.d
  main_config:
    description:
      - The main drbd.conf. When it exists and the syntax is 9, each new file is validated in its
        context (C(drbdadm -c main -t new -E old sh-nop)), catching clashes with other resources.
    type: path
    default: /etc/drbd.conf
  validate:
    description: Validate every rendered file with drbdadm before installing it.
    type: bool
    default: true
  adopt:
    description:
      - Overwrite (or with O(state=absent) remove) an existing C(<name>.res) that benchlab did not
        write (no benchlab header, or the header of another resource or lab). Off by default, and such a
        file is refused and left as it is.
    type: bool
    default: false
  lab:
    description:
      - The lab the files belong to, written into their header. A file with another lab's header
        is treated as not written by this lab (refused unless O(adopt=true)).
      - Letters, digits, C(_ . -), at most 64 characters.
    type: str
    default: default
  allow_handlers:
    description:
      - Write C(handlers) (and the legacy C(incon_degr_cmd)). DRBD runs them as root through a
        shell, so they are refused unless this is true. Each command must still be one line
        without double quotes, backslashes or control characters.
    type: bool
    default: false
  drbdadm:
    description: The drbdadm executable (default found in PATH).
    type: path
attributes:
  check_mode:
    support: full
    description: Checks, renders and validates (in a private temporary directory) but installs nothing.
  diff_mode:
    support: full
    description: Shows each file's change, with the secret replaced by asterisks.
notes:
  - Needs drbd-utils (drbdadm) for validation and for O(syntax=auto).
'''

EXAMPLES = r'''
- name: Install the reference post's resource
  benchlab.bench.drbd_resource:
    resources:
      - name: drbd0
        protocol: C
        device: /dev/drbd0
        disk: /dev/hda4
        meta_disk: /dev/hda3 [0]
        net: {max_epoch_size: 8000, max_buffers: 10000}
        syncer: {rate: 150M, al_extents: 521}
        nodes:
          - {name: node1, address: 10.2.0.1:7788}
          - {name: node2, address: 10.2.0.2:7788}
'''

RETURN = r'''
syntax:
  description: The syntax written (V(8.4) or V(9)).
  returned: when state is present
  type: str
version:
  description:
    - C(utils), C(kernel) (null without a loaded module) and C(api) from C(drbdadm --version).
    - C(module), the version of the kernel module C(modprobe drbd) would load (C(modinfo -F version drbd)),
      when none is loaded; drbdadm itself dispatches to drbdadm-84 for an 8.4 module, so does the syntax choice.
  returned: when drbdadm was found
  type: dict
files:
  description:
    - One entry per resource with C(name), C(path), C(changed), C(notes) (legacy key translations)
      and C(adopted) (the file replaced or removed had no benchlab mark of this resource and lab).
  returned: always
  type: list
  elements: dict
validate_cmd:
  description: The drbdadm argv of the last validation (paths of the temporary candidate file).
  returned: when validated
  type: list
  elements: str
'''

import os
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_text

from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_config import check_resources
from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_drbdadm import (
    choose_syntax, describe_errors, parse_drbdadm_errors, parse_version, validator_argv)
from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_render import (
    file_mark, ownership_problem, render_resource)
from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_secrets import (
    REDACTED, config_files_secrets, redact, secret_forms)
from ansible_collections.benchlab.bench.plugins.module_utils.run.common import given_options
from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_config import REFUSED
from ansible_collections.benchlab.bench.plugins.module_utils.drbd.drbd_values import (
    NET_OPTIONS, DrbdConfigError, DrbdParseError, check_lab, check_name)
from ansible_collections.benchlab.bench.plugins.module_utils.run.runner import run

MODE = 0o600

RAW = dict(type='raw')


def _option(name):
    """A drbd.conf option as a sub-option, spelled with underscores (Ansible's names are identifiers)."""
    return name.replace('-', '_'), dict(RAW)


def resource_spec():
    """The options of one resource, every key declared: Ansible registers a no_log option's value before
    it logs the module's arguments to the target's syslog/journal (AnsibleModule._log_invocation, the same
    in ansible-core 2.16 to 2.20), which the module's own masking comes too late for. A free-form dict
    would be logged in clear."""
    net = dict(_option(o) for o in NET_OPTIONS + tuple(k[1] for k in REFUSED if k[0] == 'net' and len(k) == 2))
    net['shared_secret'] = dict(type='raw', no_log=True)
    node = dict((k, dict(RAW)) for k in ('name', 'address', 'port', 'node_id', 'device', 'minor', 'disk', 'meta_disk'))
    spec = dict((k, dict(RAW)) for k in ('name', 'protocol', 'device', 'minor', 'disk', 'meta_disk', 'port',
                                         'disk_options', 'startup', 'options', 'handlers', 'cram_hmac_alg',
                                         'connection_mesh', 'syncer', 'primary', 'mount', 'fstype'))
    spec.update(nodes=dict(type='list', elements='dict', options=node), net=dict(type='dict', options=net),
                shared_secret=dict(type='raw', no_log=True),
                incon_degr_cmd=dict(type='raw'))
    return spec


def _secrets(resources):
    """Every shared secret in the raw input, before anything else looks at it."""
    found = []
    for res in resources or []:
        if not isinstance(res, dict):
            continue
        for value in (res.get('shared_secret'), (res.get('net') or {}).get('shared_secret') if isinstance(
                res.get('net'), dict) else None, (res.get('net') or {}).get('shared-secret') if isinstance(
                res.get('net'), dict) else None):
            if isinstance(value, str) and value:
                found.append(value)
    return found


def _ours(text, name, lab):
    """Whether `text` carries benchlab's mark for resource `name` of `lab`."""
    mark = file_mark(text)
    return mark is not None and mark['name'] in (None, name) and mark['lab'] in (None, lab)


def _read(path):
    try:
        with open(path, 'rb') as f:
            return to_text(f.read(), errors='surrogate_or_strict')
    except (IOError, OSError):
        return None


def _module_version(module):
    """The version of the DRBD kernel module on disk (not loaded yet), None when there is none."""
    modinfo = module.get_bin_path('modinfo')
    if not modinfo:
        return None
    res = run(module, [modinfo, '-F', 'version', 'drbd'])
    line = res.stdout.strip().splitlines()[0].strip() if res.rc == 0 and res.stdout.strip() else ''
    return line or None


def _drbdadm84(drbdadm):
    here = os.path.dirname(os.path.realpath(drbdadm))
    for cand in (os.path.join(here, '..', 'lib', 'drbd', 'drbdadm-84'), '/usr/lib/drbd/drbdadm-84',
                 '/lib/drbd/drbdadm-84'):
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return os.path.normpath(cand)
    return None


def _install(path, text):
    """Write `text` to `path` atomically (a 0600 temporary file in the same directory, renamed)."""
    fd, tmp = tempfile.mkstemp(prefix='.benchlab-', suffix='.res.tmp', dir=os.path.dirname(path))
    try:
        os.fchmod(fd, MODE)
        with os.fdopen(fd, 'w') as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def known_secrets(module, p):
    """(new, all): the new secrets and those of the installed configuration (a diff shows the old
    file, drbdadm may quote another resource's lines), with the prefix drbdadm quotes of a rejected
    long one: from here on Ansible masks them in everything returned."""
    new_secrets = _secrets(p['resources'])
    secrets = list(new_secrets)
    secrets += [s for s in config_files_secrets(p['main_config'], [p['config_dir']]) if s not in secrets]
    module.no_log_values.update(secret_forms(secrets))
    return new_secrets, secrets


def remove_resources(module, p, lab):
    """state absent: remove the resources' files (benchlab's own, or adopted), every file checked
    before the first one goes."""
    config_dir = p['config_dir']
    files, changed, plan = [], False, []
    for i, res in enumerate(p['resources']):
        try:
            name = check_name(res.get('name'), 'drbd_resources[%d].name' % i)
        except DrbdConfigError as e:
            module.fail_json(msg=str(e), files=[])
        path = os.path.join(config_dir, name + '.res')
        text = _read(path) if os.path.lexists(path) else None
        if os.path.lexists(path) and text is None:
            text = ''
        problem = ownership_problem(path, text, name, lab, p['adopt'], 'remove')
        if problem:
            module.fail_json(msg=problem, files=[])
        plan.append((name, path, text))
    for name, path, text in plan:
        gone = text is not None
        if gone and not module.check_mode:
            os.unlink(path)
        adopted = gone and not _ours(text, name, lab)
        files.append(dict(name=name, path=path, changed=gone, notes=[], adopted=adopted))
        changed = changed or gone
    module.exit_json(changed=changed, files=files)


def drbd_version(module, p, warnings):
    """(drbdadm, version): the drbdadm to use and the drbd-utils / kernel module versions (None
    without drbdadm, allowed in check mode before the install)."""
    drbdadm = p['drbdadm'] or module.get_bin_path('drbdadm')
    version = None
    if drbdadm:
        res = run(module, [drbdadm, '--version'])
        try:
            version = parse_version(res.stdout)
        except DrbdParseError as e:
            module.fail_json(msg='cannot read the drbd-utils version: %s' % e, rc=res.rc, stderr=res.stderr)
        version['module'] = _module_version(module) if version['kernel'] is None else None
    elif p['validate'] or p['syntax'] == 'auto':
        if not module.check_mode:
            module.fail_json(msg='drbdadm not found: install drbd-utils first (the drbd role does: tasks install.yml)')
        warnings.append('drbdadm not found: rendered without validation (check mode before the install)')
    return drbdadm, version


def refuse_foreign(module, p, rendered, lab):
    """Only benchlab's own files are replaced: anything else is refused before drbdadm runs."""
    for norm, _text, path in rendered:
        before = _read(path) if os.path.lexists(path) else None
        if os.path.lexists(path) and before is None:
            before = ''
        problem = ownership_problem(path, before, norm['name'], lab, p['adopt'])
        if problem:
            module.fail_json(msg=problem, files=[])


def validate_rendered(module, p, rendered, syntax, version, drbdadm, secrets):
    """drbdadm checks every candidate file before any is installed; the last validator argv."""
    last_cmd = None
    work = tempfile.mkdtemp(prefix='benchlab-drbd-')
    try:
        os.chmod(work, 0o700)
        for norm, text, path in rendered:
            cand = os.path.join(work, norm['name'] + '.res')
            fd = os.open(cand, os.O_WRONLY | os.O_CREAT | os.O_EXCL, MODE)
            with os.fdopen(fd, 'w') as f:
                f.write(text)
            main_config = p['main_config'] if p['main_config'] and os.path.isfile(p['main_config']) else None
            try:
                argv = validator_argv(syntax, version, drbdadm, _drbdadm84(drbdadm), cand, main_config,
                                      path if main_config else None)
            except DrbdConfigError as e:
                module.fail_json(msg=str(e), files=[])
            result = run(module, argv)
            last_cmd = result.argv
            if result.rc != 0:
                errors = parse_drbdadm_errors(result.stderr + '\n' + result.stdout, cand)
                msg = ('drbdadm rejected the rendered resource %s (nothing was installed): %s'
                       % (norm['name'], describe_errors(errors, text, path)))
                module.fail_json(msg=redact(msg, secrets), cmd=result.argv, rc=result.rc,
                                 errors=[dict(e, message=redact(e['message'], secrets)) for e in errors],
                                 rendered=redact(text, secrets), files=[])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return last_cmd


def install_rendered(module, rendered, lab, secrets, new_secrets):
    """(files, diffs, changed): install the rendered files that differ (mode 0600), secrets masked
    in the diffs."""
    files, diffs, changed = [], [], False
    for norm, text, path in rendered:
        before = _read(path)
        mode_wrong = before is not None and (os.stat(path).st_mode & 0o7777) != MODE
        file_changed = before != text or mode_wrong
        if file_changed and not module.check_mode:
            if before != text:
                _install(path, text)
            else:
                os.chmod(path, MODE)
        if before != text:
            # a rotated secret shows as a changed line, neither value printed
            shown = redact(redact(before or '', new_secrets), secrets, REDACTED + ' (old)')
            diffs.append(dict(before_header=path if before is not None else '%s (absent)' % path,
                              after_header=path, before=shown,
                              after=redact(text, secrets)))
        files.append(dict(name=norm['name'], path=path, changed=file_changed, notes=norm['notes'],
                          adopted=before is not None and not _ours(before, norm['name'], lab)))
        changed = changed or file_changed
    return files, diffs, changed


def main():
    module = AnsibleModule(
        argument_spec=dict(
            resources=dict(type='list', elements='dict', required=True, options=resource_spec()),
            state=dict(type='str', choices=['present', 'absent'], default='present'),
            syntax=dict(type='str', choices=['auto', '8.4', '9'], default='auto'),
            config_dir=dict(type='path', default='/etc/drbd.d'),
            main_config=dict(type='path', default='/etc/drbd.conf'),
            validate=dict(type='bool', default=True),
            drbdadm=dict(type='path'),
            adopt=dict(type='bool', default=False),
            lab=dict(type='str', default='default'),
            allow_handlers=dict(type='bool', default=False),
        ),
        supports_check_mode=True,
    )
    # the resources as given: no key Ansible added (None for an option not given, the canonical copy of an alias)
    p = dict(module.params, resources=given_options(module.params['resources'], resource_spec()))
    config_dir = p['config_dir']
    new_secrets, secrets = known_secrets(module, p)
    try:
        lab = check_lab(p['lab'])
    except DrbdConfigError as e:
        module.fail_json(msg=str(e), files=[])
    if p['state'] == 'absent':
        remove_resources(module, p, lab)

    # Input is data: the checks run before drbdadm sees anything (again below with the real syntax).
    try:
        check_resources(p['resources'], '9' if p['syntax'] == 'auto' else p['syntax'], p['allow_handlers'])
    except DrbdConfigError as e:
        module.fail_json(msg=redact(str(e), secrets), files=[])
    warnings = []
    drbdadm, version = drbd_version(module, p, warnings)
    try:
        syntax = choose_syntax(version or {}, p['syntax'] if version or p['syntax'] != 'auto' else '9')
        norms = check_resources(p['resources'], syntax, p['allow_handlers'])
    except DrbdConfigError as e:
        module.fail_json(msg=redact(str(e), secrets), files=[])
    if not os.path.isdir(config_dir):
        if module.check_mode:
            warnings.append('%s does not exist yet' % config_dir)
        else:
            module.fail_json(msg='config_dir %s does not exist (is drbd-utils installed?)' % config_dir)

    rendered = [(norm, render_resource(norm, lab), os.path.join(config_dir, norm['name'] + '.res')) for norm in norms]
    refuse_foreign(module, p, rendered, lab)
    # Validate all candidates first: nothing is installed unless every file passes.
    last_cmd = None
    if p['validate'] and drbdadm:
        last_cmd = validate_rendered(module, p, rendered, syntax, version, drbdadm, secrets)
    files, diffs, changed = install_rendered(module, rendered, lab, secrets, new_secrets)
    result = dict(changed=changed, syntax=syntax, version=version, files=files)
    if last_cmd:
        result['validate_cmd'] = last_cmd
    for w in warnings:
        module.warn(w)
    if module._diff:
        result['diff'] = diffs
    module.exit_json(**result)


if __name__ == '__main__':
    main()
