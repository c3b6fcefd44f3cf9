# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/run/locations.py: the one resolver of the report directory and the history database
(callback, compare_runs action, run_state lookup)."""

import os

from ansible_collections.benchlab.bench.plugins.plugin_utils.run import locations
from ansible_collections.benchlab.bench.plugins.plugin_utils.run.locations import history_db, report_dir


def test_report_dir_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert report_dir(None, environ={}) == str(tmp_path / 'benchlab-runs')
    assert report_dir(None, environ={'BENCHLAB_REPORT_DIR': '/r/env'}) == '/r/env'
    assert report_dir('/r/given', environ={'BENCHLAB_REPORT_DIR': '/r/env'}) == '/r/given'
    assert report_dir('~/runs', environ={}) == os.path.expanduser('~/runs')


def test_report_dir_from_the_callback_setting(monkeypatch):
    monkeypatch.setattr(locations, 'callback_setting', lambda name: '/r/ini' if name == 'output_dir' else None)
    assert report_dir(None, environ={}, from_callback=True) == '/r/ini'
    assert report_dir(None, environ={}) != '/r/ini'  # the callback itself has its option already


def test_report_dir_under_ansible_runner():
    env = {'AWX_ISOLATED_DATA_DIR': '/art/1'}
    assert report_dir('benchlab-runs', environ=env, runner_artifacts=True) == '/art/1/benchlab'
    assert report_dir('/mine', environ=env, runner_artifacts=True) == '/mine'
    env_set = dict(env, BENCHLAB_REPORT_DIR='benchlab-runs')
    assert report_dir('benchlab-runs', environ=env_set, runner_artifacts=True) == os.path.abspath('benchlab-runs')
    assert report_dir(None, environ=env) == os.path.abspath('benchlab-runs')  # only the callback goes there


def test_history_db(monkeypatch):
    monkeypatch.setattr(locations, 'callback_setting', lambda name: '/h/ini.sqlite')
    assert history_db('off', environ={}) is None
    assert history_db('/h/given.sqlite', environ={}) == '/h/given.sqlite'
    assert history_db(None, environ={'BENCHLAB_HISTORY_DB': '/h/env.sqlite'}, from_callback=True) == '/h/env.sqlite'
    assert history_db(None, environ={}, from_callback=True) == '/h/ini.sqlite'
    assert history_db(None, environ={'XDG_DATA_HOME': '/xdg'}) == '/xdg/benchlab/history.sqlite'
