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
    fails naming the field before anything is written.
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
        C(benchlab.bench.drbd) role (name, protocol, device/minor, disk, meta_disk, nodes, net,
        disk_options, startup, options, handlers, shared_secret, cram_hmac_alg, connection_mesh and
        the legacy syncer/incon_degr_cmd).
      - With O(state=absent) only C(name) is used.
    type: list
    elements: dict
    required: true
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
  description: C(utils), C(kernel) (null without a loaded module) and C(api) from C(drbdadm --version).
  returned: when drbdadm was found
  type: dict
files:
  description: One entry per resource with C(name), C(path), C(changed) and C(notes) (legacy key translations).
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

from ansible_collections.benchlab.bench.plugins.module_utils.drbd import (
    REDACTED, DrbdConfigError, DrbdParseError, check_resources, choose_syntax, config_secrets, describe_errors,
    parse_drbdadm_errors, parse_version, redact, render_resource, validator_argv)
from ansible_collections.benchlab.bench.plugins.module_utils.runner import run

MODE = 0o600


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


def _read(path):
    try:
        with open(path, 'rb') as f:
            return to_text(f.read(), errors='surrogate_or_strict')
    except (IOError, OSError):
        return None


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


def main():
    module = AnsibleModule(
        argument_spec=dict(
            resources=dict(type='list', elements='dict', required=True),
            state=dict(type='str', choices=['present', 'absent'], default='present'),
            syntax=dict(type='str', choices=['auto', '8.4', '9'], default='auto'),
            config_dir=dict(type='path', default='/etc/drbd.d'),
            main_config=dict(type='path', default='/etc/drbd.conf'),
            validate=dict(type='bool', default=True),
            drbdadm=dict(type='path'),
        ),
        supports_check_mode=True,
    )
    p = module.params
    config_dir = p['config_dir']
    # The new secrets and those of the installed configuration (a diff shows the old file, drbdadm
    # may quote another resource's lines): from here on Ansible masks them in everything returned.
    new_secrets = _secrets(p['resources'])
    secrets = list(new_secrets)
    for path in [p['main_config']] + (sorted(os.path.join(config_dir, n) for n in os.listdir(config_dir)
                                             if n.endswith('.res')) if os.path.isdir(config_dir) else []):
        secrets.extend(s for s in config_secrets(_read(path)) if s not in secrets)
    module.no_log_values.update(secrets)

    if p['state'] == 'absent':
        files, changed = [], False
        for i, res in enumerate(p['resources']):
            name = res.get('name')
            if not isinstance(name, str) or not name or '/' in name:
                module.fail_json(msg='drbd_resources[%d].name: %r is not a resource name' % (i, name))
            path = os.path.join(config_dir, name + '.res')
            gone = os.path.lexists(path)
            if gone and not module.check_mode:
                os.unlink(path)
            files.append(dict(name=name, path=path, changed=gone, notes=[]))
            changed = changed or gone
        module.exit_json(changed=changed, files=files)

    drbdadm = p['drbdadm'] or module.get_bin_path('drbdadm')
    version = None
    warnings = []
    if drbdadm:
        res = run(module, [drbdadm, '--version'])
        try:
            version = parse_version(res.stdout)
        except DrbdParseError as e:
            module.fail_json(msg='cannot read the drbd-utils version: %s' % e, rc=res.rc, stderr=res.stderr)
    elif p['validate'] or p['syntax'] == 'auto':
        if not module.check_mode:
            module.fail_json(msg='drbdadm not found: install drbd-utils first (the drbd role does: tasks install.yml)')
        warnings.append('drbdadm not found: rendered without validation (check mode before the install)')
    try:
        syntax = choose_syntax(version or {}, p['syntax'] if version or p['syntax'] != 'auto' else '9')
        norms = check_resources(p['resources'], syntax)
    except DrbdConfigError as e:
        module.fail_json(msg=redact(str(e), secrets), files=[])

    if not os.path.isdir(config_dir):
        if module.check_mode:
            warnings.append('%s does not exist yet' % config_dir)
        else:
            module.fail_json(msg='config_dir %s does not exist (is drbd-utils installed?)' % config_dir)

    files, diffs, changed, last_cmd = [], [], False, None
    rendered = []
    for norm in norms:
        text = render_resource(norm)
        path = os.path.join(config_dir, norm['name'] + '.res')
        rendered.append((norm, text, path))

    # Validate all candidates first: nothing is installed unless every file passes.
    if p['validate'] and drbdadm:
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
        files.append(dict(name=norm['name'], path=path, changed=file_changed, notes=norm['notes']))
        changed = changed or file_changed

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
