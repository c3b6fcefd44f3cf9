# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets at every depth: an option that can carry a secret is declared so that Ansible masks it in
the start-up line it logs to the target's syslog/journal (issue 28 section 1).

Ansible registers an option's value as a no_log value while it validates the arguments, before it
logs them; only the argument spec tells it which (no_log on the option, at whatever depth under
`options`). So every module's real argument spec (its main() run until it builds AnsibleModule) is
walked with its DOCUMENTATION (doc fragments included), and an option fails the contract when:
- its name or its documentation speaks of a secret, password, passphrase, token or key, and it does
  not declare no_log: true (a name Ansible's own sanity test flags must say no_log either way);
- its documentation speaks of such a thing and neither it nor a declared sub-option below it is
  no_log: a free-form value (a dict or list without sub-options, raw) is logged as it is, so the
  secret needs a declared sub-option of its own.
unless the option is on NOT_SECRETS below, each entry with the reason it carries no secret.
"""

import glob
import importlib
import os
import re
import sys
from pathlib import Path

import pytest
import yaml
from ansible.module_utils import basic

REPO = Path(__file__).resolve().parents[4]
SECRET_NAME = re.compile(r'secret|passw|passphrase|token|(^|[_-])keys?($|[_-])', re.I)
SECRET_TEXT = re.compile(r'secret|password|passphrase|token|\bkeys?\b', re.I)
# Ansible's own test of option names (validate-modules' no_log-needed) wants an explicit no_log on these
ANSIBLE_FLAGS = re.compile(r'pass|pwd|key|token|secret|credential|auth', re.I)

# Reviewed: these options name or mention a key, a token or a secret, and carry none.
NOT_SECRETS = {
    ('*', 'run_key'): 'the hash of a run\'s matrix cell and benchmark (the run\'s ownership mark), not a secret',
    ('work_cleanup', 'run_key'): 'the run key the directory is checked against (see run_key above)',
    ('openvz_ct', 'host_key_dir'): 'the directory of the container\'s host key pair on the host; the path is no secret',
    ('drbd_resource', 'resources[].cram_hmac_alg'): 'the name of the HMAC algorithm used with the secret, not the secret',
    ('drbd_resource', 'resources[].net.cram_hmac_alg'): 'the name of the HMAC algorithm, not the secret',
    ('compare_runs', 'history_db'): 'a SQLite path or a PostgreSQL URL, which may not carry a password (the history '
                                    'refuses one: plugin_utils/history/history.py); libpq reads it from PGPASSWORD, ~/.pgpass',
    ('run_benchmark', 'run'): 'a run of the plan; the key it mentions is its run key (see run_key above); its params are '
                              'a benchmark module\'s options, checked by that module\'s own argument spec when it runs',
    ('run_benchmark', 'runs'): 'the runs of a batch, each as O(run) (see run above)',
    ('fio', 'options'): 'fio job options (C(--key=value)); those that carry a credential (the http engine\'s '
                        'http_pass, http_s3_key, ...) are refused, never passed (module_utils/tools/fiojob.py)',
}


class _Captured(Exception):
    pass


def module_names():
    return sorted(os.path.basename(p)[:-3] for p in glob.glob(str(REPO / 'plugins/modules/*.py'))
                  if not p.endswith('__init__.py'))


def doc_spec(options):
    """An argument spec from documented options (an action-only module runs on the controller and has
    none of its own; its options are checked as documented)."""
    out = {}
    for name, doc in (options or {}).items():
        out[name] = dict((k, doc[k]) for k in ('type', 'elements', 'aliases', 'no_log') if k in doc)
        if doc.get('suboptions'):
            out[name]['options'] = doc_spec(doc['suboptions'])
    return out


def argspec(name, monkeypatch):
    """The argument_spec benchlab.bench.<name>'s main() gives AnsibleModule (an action-only module: the
    spec its action plugin validates the task's arguments with, else its documented options)."""
    mod = importlib.import_module('ansible_collections.benchlab.bench.plugins.modules.%s' % name)
    # a benchmark module builds its AnsibleModule in benchrun.run_module (ansible's basic module)
    if not hasattr(mod, 'AnsibleModule') and not hasattr(mod, 'run_module'):
        try:
            action = importlib.import_module('ansible_collections.benchlab.bench.plugins.action.%s' % name)
        except ImportError:
            action = None
        spec = getattr(action, 'ARGUMENT_SPEC', None) or getattr(action, 'ARGSPEC', None)
        return mod, spec if spec is not None else doc_spec(documented_options(mod))
    seen = {}

    def fake(*args, **kwargs):
        seen.update(kwargs['argument_spec'] if 'argument_spec' in kwargs else args[0])
        raise _Captured()

    if hasattr(mod, 'AnsibleModule'):
        monkeypatch.setattr(mod, 'AnsibleModule', fake)
    else:
        monkeypatch.setattr(basic, 'AnsibleModule', fake)
        monkeypatch.setattr(basic, '_load_params', lambda: {})
    monkeypatch.setattr(sys, 'argv', ['ansible_module'])
    with pytest.raises(_Captured):
        mod.main()
    return mod, seen


def documented_options(mod):
    """DOCUMENTATION's options, the doc fragments' merged in."""
    doc = yaml.safe_load(mod.DOCUMENTATION)
    options = dict(doc.get('options') or {})
    for fragment in doc.get('extends_documentation_fragment') or []:
        name = fragment.rsplit('.', 1)[-1]
        frag = importlib.import_module('ansible_collections.benchlab.bench.plugins.doc_fragments.%s' % name)
        for key, value in (yaml.safe_load(frag.ModuleDocFragment.DOCUMENTATION).get('options') or {}).items():
            options.setdefault(key, value)
    return options


def _text(doc):
    desc = (doc or {}).get('description') or ''
    return ' '.join(desc) if isinstance(desc, list) else str(desc)


def masked_below(spec):
    return any(o.get('no_log') is True or masked_below(o.get('options') or {}) for o in spec.values())


def problems(module, spec, docs, prefix=''):
    """Every option of `spec` (recursively) that breaks the contract: [(path, why)]."""
    found = []
    for name, opts in sorted(spec.items()):
        path = prefix + name
        doc = (docs or {}).get(name) or {}
        names = [name] + list(opts.get('aliases') or [])
        text = _text(doc)
        named = any(SECRET_NAME.search(n) for n in names)
        mentioned = bool(SECRET_TEXT.search(text))
        sub = opts.get('options')
        reviewed = (module, path) in NOT_SECRETS or ('*', path) in NOT_SECRETS
        if opts.get('no_log') is True:
            pass
        elif reviewed:
            if any(ANSIBLE_FLAGS.search(n) for n in names) and opts.get('no_log') is not False:
                found.append((path, 'reviewed as no secret: say so with no_log=False'))
        elif named:
            found.append((path, 'its name says it carries a secret/password/key/token: declare no_log=True '
                                '(or review it into NOT_SECRETS with the reason it carries none)'))
        elif mentioned and sub and not masked_below(sub):
            found.append((path, 'its documentation speaks of a secret/password/key/token (%r) but none of its '
                                'sub-options is no_log' % SECRET_TEXT.search(text).group(0)))
        elif mentioned and not sub:
            found.append((path, 'its documentation speaks of a secret/password/key/token (%r): declare the part '
                                'that carries it as a sub-option with no_log=True' % SECRET_TEXT.search(text).group(0)))
        if sub:
            found += problems(module, sub, doc.get('suboptions') or {},
                              path + ('[].' if opts.get('type') == 'list' else '.'))
    return found


@pytest.mark.parametrize('name', module_names())
def test_every_option_that_can_carry_a_secret_is_masked(name, monkeypatch):
    mod, spec = argspec(name, monkeypatch)
    bad = problems(name, spec, documented_options(mod))
    assert not bad, 'plugins/modules/%s.py: %s' % (name, '; '.join('%s: %s' % p for p in bad))


def test_the_secrets_of_drbd_resource_are_no_log_at_every_depth(monkeypatch):
    _mod, spec = argspec('drbd_resource', monkeypatch)
    res = spec['resources']['options']
    assert res['shared_secret']['no_log'] is True
    assert res['net']['options']['shared_secret'] == {'type': 'raw', 'no_log': True}
    assert all(not o.get('no_log') for k, o in res['net']['options'].items() if k != 'shared_secret')


def test_the_contract_fails_on_an_option_that_would_leak(monkeypatch):
    """It can fail: a new module with a token option, a free dict documented as holding a password, a
    nested key without no_log; and passes the same options declared no_log."""
    spec = {'api_token': {'type': 'str'},
            'settings': {'type': 'dict'},
            'targets': {'type': 'list', 'elements': 'dict', 'options': {
                'name': {'type': 'str'}, 'ssh_key': {'type': 'str'},
                'auth': {'type': 'dict', 'options': {'passphrase': {'type': 'str'}}}}}}
    docs = {'api_token': {'description': 'The API token.'},
            'settings': {'description': ['Connection settings, the password among them.']},
            'targets': {'description': 'Targets.', 'suboptions': {'name': {'description': 'Name.'},
                                                                  'ssh_key': {'description': 'Private key.'}}}}
    bad = dict(problems('newmod', spec, docs))
    assert sorted(bad) == ['api_token', 'settings', 'targets[].auth.passphrase', 'targets[].ssh_key'], bad
    assert 'password' in bad['settings'] and 'no_log=True' in bad['api_token']
    spec['api_token']['no_log'] = True
    spec['settings'] = {'type': 'dict', 'options': {'password': {'type': 'str', 'no_log': True}}}
    spec['targets']['options']['ssh_key']['no_log'] = True
    spec['targets']['options']['auth']['options']['passphrase']['no_log'] = True
    assert problems('newmod', spec, docs) == []
