# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""benchlab.bench.sysinfo, and every other target module (meta/runtime.yml plugin_routing), on the
controller: the module runs as usual; when it cannot start on the target
(a Python too old for the collection or for this ansible-core) the task fails with one message
naming the host and what to install (plugin_utils/common/compat.py). Documentation: plugins/modules/sysinfo.py."""

from __future__ import annotations

from ansible_collections.benchlab.bench.plugins.plugin_utils.common.compat import TargetModuleAction


class ActionModule(TargetModuleAction):
    """The module, with the target Python check."""
