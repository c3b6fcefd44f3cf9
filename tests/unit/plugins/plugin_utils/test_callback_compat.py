# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/common/callback_compat.py on the running ansible-core's own TaskResult (``make compat``
runs this file under 2.16 and 2.20 as well: private attributes there, public ones from 2.19),
and plugin_utils/common/collection_info.py against galaxy.yml and a MANIFEST.json."""

import json
from pathlib import Path

import yaml
from ansible.executor.task_result import TaskResult
from ansible.inventory.host import Host
from ansible.playbook.task import Task

from ansible_collections.benchlab.bench.plugins.plugin_utils.common.callback_compat import (
    inventory_sources, playbook_file, result_data, result_host, result_task)
from ansible_collections.benchlab.bench.plugins.plugin_utils.common.collection_info import collection_version

REPO = Path(__file__).resolve().parents[4]


def test_task_result_parts():
    host, task = Host('h1'), Task()
    res = TaskResult(host, task, {'bench_result': {'tool': 'dd'}, 'changed': True}, {})
    assert result_host(res).get_name() == 'h1'
    assert result_task(res) is task
    assert result_data(res)['bench_result'] == {'tool': 'dd'}


def test_playbook_and_inventory_missing_give_none():
    assert playbook_file(object()) is None
    assert inventory_sources(object()) is None


def test_collection_version_from_galaxy_yml():
    galaxy = yaml.safe_load((REPO / 'galaxy.yml').read_text())
    assert collection_version(str(REPO)) == str(galaxy['version'])


def test_collection_version_prefers_manifest(tmp_path):
    (tmp_path / 'MANIFEST.json').write_text(json.dumps({'collection_info': {'version': '9.8.7'}}))
    (tmp_path / 'galaxy.yml').write_text('version: 1.0.0\n')
    assert collection_version(str(tmp_path)) == '9.8.7'
    assert collection_version(str(tmp_path / 'nothing')) is None
