# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private to benchlab.bench: the trap codes a benchmark module puts on its record (``flags``).

On the controller, plugin_utils/explain/traps.py holds the one vocabulary (code -> title and explanation).
A record carries these codes as data so the controller never reads the warning text.
"""

BELOW_2X_RAM = 'below_2x_ram'                      # the data set is smaller than twice the RAM
ZERO_DATA = 'zero_data'                            # the tool wrote zeros / compressible data
NOT_QUIET = 'not_quiet'                            # other processes used the CPU during the run
SOURCE_ON_TEST_STORAGE = 'source_on_test_storage'  # a source file was read from the storage under test
UNSAFE_OPTIONS = 'unsafe_options'                  # allow_unsafe_options let through what benchlab does not check

TARGET_CODES = (BELOW_2X_RAM, ZERO_DATA, NOT_QUIET, SOURCE_ON_TEST_STORAGE, UNSAFE_OPTIONS)

# Verdicts from the evidence of a run's observation (the record's `observed`, module_utils/observe/observe.py),
# decided on the controller per run (plugin_utils/explain/explain.py) and per cell:
WRITES_ELIDED = 'writes_elided'          # the narrowest layer got < 0.5 of the bytes the tool wrote, none pending
WRITE_AMPLIFIED = 'write_amplified'      # the first device got more than 1.5 times them
NOT_DURABLE = 'not_durable'              # the tool's sync returned with < 0.9 of them on the narrowest layer
SERVED_FROM_CACHE = 'served_from_cache'  # a read whose narrowest layer delivered < 0.5 of the bytes read
DEVICE_BOUND = 'device_bound'            # a device layer >= 90 % busy
CPU_BOUND = 'cpu_bound'                  # a core >= 90 % busy with the tool, or all cores (bonnie++ per-char too)
LINK_BOUND = 'link_bound'                # an interface at >= 90 % of its known speed or shaping rate
STEAL = 'steal'                          # >= 5 % of the CPU time stolen by the hypervisor
HOST_BUSY = 'host_busy'                  # the hypervisor host busy with other work (host-side observation)

EVIDENCE_CODES = (WRITES_ELIDED, WRITE_AMPLIFIED, NOT_DURABLE, SERVED_FROM_CACHE, DEVICE_BOUND, CPU_BOUND, LINK_BOUND, STEAL,
                  HOST_BUSY)


def record_flags(params, extra=()):
    """The sorted, distinct codes of a record: `extra` (what the module found) and what its
    params say as data (the guards' quiet verdict, dd's data: zero)."""
    codes = set(c for c in extra if c)
    params = params or {}
    guards = params.get('guards') if isinstance(params.get('guards'), dict) else {}
    if guards.get('quiet') is False:
        codes.add(NOT_QUIET)
    if params.get('data') == 'zero' and params.get('test', 'write') != 'read':
        codes.add(ZERO_DATA)
    return sorted(codes)
