# benchlab.bench — the two commands:
#   make bench   set up (venv, Python deps, benchmark tools via the collection's role) and run the
#                local matrix; prints the report path and a summary table
#   make test    the same set-up, then sanity, lint, unit and integration tests
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
COLL_LINK := .collections/ansible_collections/benchlab/bench
COMMUNITY_LIBVIRT := .collections/ansible_collections/community/libvirt
SANITY_ROOT := build/sanity/ansible_collections/benchlab/bench
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export ANSIBLE_FORCE_COLOR ?= 0
# Every pytest run of `make test` goes through the skip policy (tests/utils/skip_policy.py): each skip is
# printed with its reason (-rs), and one whose reason is not on tests/skips-allowed.yml fails the run.
SKIP_POLICY := PYTHONPATH=$(CURDIR)/tests/utils$(if $(PYTHONPATH),:$(PYTHONPATH))
PYTEST_ARGS := -rs -p skip_policy

.PHONY: bench test test-vm setup venv tools sanity units-ansible-test changelog lint target-py36 units fuzz fuzz-explore integration integration-lab integration-wiring integration-rest compat compat-venvs compat-units-core216 compat-units-core220 compat-core220-units compat-play compat-core220 perf build ee-context clean clean-lab libvirt-py

# The local lab: LXC guests on this machine (dir/loop storage, bridged/routed network) against
# the host, then torn down (playbooks/lab_bench.yml; the matrix is bench_lab_matrix).
# SCENARIO=<name>: the local rendition of a field report, scenarios/<name>/local.yml (its lab guests
# and matrix); without it, the quick lab matrix.
SCENARIO ?=
bench: setup
	@if [ -n "$(SCENARIO)" ] && [ ! -f "scenarios/$(SCENARIO)/local.yml" ]; then \
		echo "SCENARIO=$(SCENARIO): no scenarios/$(SCENARIO)/local.yml; one of: $$(ls scenarios | tr '\n' ' ')"; exit 2; fi
	$(BIN)/ansible-playbook playbooks/lab_bench.yml -i inventories/local $(if $(SCENARIO),-e @scenarios/$(SCENARIO)/local.yml)

# Remove the local lab (containers, processes, mounts, loop devices, routes, veths, bridge, images);
# safe on a half-built lab or none. The rootfs cache /var/cache/benchlab is kept.
clean-lab: venv $(COLL_LINK)
	$(BIN)/ansible-playbook playbooks/teardown.yml -i inventories/local

# The checks share the two cores, three at a time (they decide nothing by time): sanity, lint, the
# Python 3.6 check, the unit tests under this controller and under ansible-core 2.16 and 2.20,
# fuzzing, the compat playbooks. In this order: the compat venvs (pip, mostly waiting for downloads)
# and then the compat playbooks (mostly waiting for their tools' timed runs) start first, so that
# their waits fall beside the stages that keep a core busy. Then the integration tests, alone: they
# measure. Each stage's time is printed and kept in build/stages.json (tests/utils/stages.py).
CHECKS := compat-venvs compat-play:compat-venvs sanity units compat-units-core216:compat-venvs \
	compat-units-core220:compat-venvs lint fuzz target-py36
test: setup
	$(BIN)/python tests/utils/stages.py --jobs 3 $(CHECKS) -- integration

setup: venv $(COLL_LINK) $(COMMUNITY_LIBVIRT) tools

venv: $(VENV)/.installed

$(VENV)/.installed: requirements.txt tests/requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt -r tests/requirements.txt
	touch $@

# The checkout is the collection: make it findable as benchlab.bench without installing it.
$(COLL_LINK):
	mkdir -p $(dir $(COLL_LINK))
	ln -sfn ../../.. $(COLL_LINK)

# community.libvirt (role kvm_guest) ships only inside the `ansible` package on PyPI: extract just it.
$(COMMUNITY_LIBVIRT): | venv
	rm -rf build/dl && mkdir -p build/dl .collections
	$(BIN)/python -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: ansible==12.3.0 -d build/dl
	$(BIN)/python -c "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); [z.extract(n, '.collections') for n in z.namelist() if n.startswith('ansible_collections/community/libvirt/')]" build/dl/ansible-12.3.0-py3-none-any.whl
	rm -rf build/dl

# The libvirt Python binding (built against the system's libvirt) for the KVM tests; skipped with
# a note when libvirt-dev is not installed (.ci/run installs it; the tests then skip themselves).
libvirt-py: $(VENV)/.libvirt

$(VENV)/.libvirt: tests/requirements-libvirt.txt | venv
	if pkg-config --exists libvirt 2>/dev/null; then \
		$(BIN)/python -m pip install --quiet --disable-pip-version-check -r tests/requirements-libvirt.txt && touch $@; \
	else echo "libvirt-dev not installed: the KVM tests will skip"; fi

# Install the benchmark tools through the collection's own role, on this machine.
tools: venv $(COLL_LINK)
	$(BIN)/ansible-playbook playbooks/install.yml -i inventories/local

# ansible-test needs the collection under ansible_collections/<ns>/<name>: test a copy of the
# tracked (and new, not ignored) files there. Its pip bootstrap is seeded from PyPI (offline-safe).
define sanity_copy
	rm -rf build/sanity && mkdir -p $(SANITY_ROOT)
	git ls-files --cached --others --exclude-standard | grep -v '^\.collections' | \
		while read -r f; do [ -e "$$f" ] && echo "$$f"; done | tar -cf - -T - | tar -xf - -C $(SANITY_ROOT)
	cd $(SANITY_ROOT) && git init -q && git add -A
	$(BIN)/python tests/utils/seed_get_pip.py $(BIN)/python
endef

sanity: venv
	$(sanity_copy)
	cd $(SANITY_ROOT) && $(CURDIR)/$(BIN)/ansible-test sanity --venv --python 3.11 --color no

# The unit tests the Ansible way: `ansible-test units` in the same copy, module_utils tests in its
# target-side context (no controller code importable), the others as controller tests; its venv
# gets tests/unit/requirements.txt. Not in `make test` (about 4 minutes here; `make units` runs the
# same tests through pytest). UNITS_AT= narrows it (e.g. tests/unit/plugins/module_utils/); default all.
UNITS_AT ?=
units-ansible-test: venv
	$(sanity_copy)
	cd $(SANITY_ROOT) && $(CURDIR)/$(BIN)/ansible-test units --venv --python 3.11 --color no $(UNITS_AT)

# The changelog: fold changelogs/fragments into changelogs/changelog.yaml for the version in galaxy.yml
# and generate CHANGELOG.rst, with antsibull-changelog in a throwaway venv (not a dependency).
# `make changelog` after merging; tests/unit/test_changelog.py says when CHANGELOG.rst is stale.
ANTSIBULL := build/antsibull-changelog
changelog: venv $(COLL_LINK)
	test -x $(ANTSIBULL)/bin/antsibull-changelog || { $(PYTHON) -m venv $(ANTSIBULL) && \
		$(ANTSIBULL)/bin/python -m pip install --quiet --disable-pip-version-check antsibull-changelog==0.36.0; }
	PATH=$(CURDIR)/$(BIN):$$PATH ANSIBLE_COLLECTIONS_PATH=$(CURDIR)/.collections \
		$(ANTSIBULL)/bin/antsibull-changelog release --version "$$($(BIN)/python -c 'import yaml; print(yaml.safe_load(open("galaxy.yml"))["version"])')"
	$(ANTSIBULL)/bin/antsibull-changelog lint

lint: venv $(COLL_LINK)
	$(BIN)/ansible-lint

# Target code (plugins/modules, plugins/module_utils: what runs on the hosts) needs no more than
# Python 3.6: vermin --target=3.6- and a compile with pyenv's 3.6 over every file there.
# `tests/utils/target_py36.py --fix` removes `from __future__ import annotations`.
# Without a Python 3.6 the compile is an allowed skip (tests/skips-allowed.yml), named with how to get one.
target-py36: venv
	$(BIN)/python tests/utils/target_py36.py

units: venv $(COLL_LINK)
	$(SKIP_POLICY) $(BIN)/python -m pytest $(PYTEST_ARGS) tests/unit -q

# Every parse_* filter over 10,000 generated and mutated outputs each (seeded: reproducible);
# a finding is saved under build/fuzz-findings/ and fails the target.
fuzz: venv $(COLL_LINK)
	$(BIN)/python tests/fuzz/fuzz_parsers.py -n $(or $(FUZZ_N),10000)

# Exploration (not part of make test or CI): new inputs every time, many more of them. The fuzzer
# with a seed from the clock (printed; FUZZ_SEED= replays one) and FUZZ_EXPLORE_N inputs per filter,
# then the Hypothesis property tests under the `explore` profile (tests/unit/conftest.py: not
# derandomized, 5000 examples each). Both save what breaks the parsers' contract under
# build/fuzz-findings/; tests/fuzz/regressions/README.md says how a finding becomes a regression input
# that every make test replays.
fuzz-explore: venv $(COLL_LINK)
	seed=$${FUZZ_SEED:-$$(date +%s)}; echo "fuzz seed $$seed"; rc=0; \
	$(BIN)/python tests/fuzz/fuzz_parsers.py -n $(or $(FUZZ_EXPLORE_N),100000) --seed $$seed || rc=1; \
	$(SKIP_POLICY) BENCHLAB_HYPOTHESIS=explore $(BIN)/python -m pytest $(PYTEST_ARGS) tests/unit/plugins/filter/test_parse_filters_fuzz.py -q -p no:cacheprovider || rc=1; \
	exit $$rc

# The integration tests in two steps. First two pytest sessions at once: the scenario renditions on the
# shared LXC lab (left for the next step: BENCHLAB_SHARED_LAB=keep) and tests of wiring that neither
# measure nor look at anything but what they made themselves (check mode, libvirt's test driver,
# ansible-doc, a lab of their own prefix). Then every other test, in one session: those measure (quiet
# verdicts, throttled devices, runs started together) or look at the whole machine, so nothing else
# runs meanwhile; the shared lab is reused (BENCHLAB_SHARED_LAB=reuse) and then torn down.
INTEGRATION_LAB := tests/integration/test_scenarios.py
INTEGRATION_WIRING := tests/integration/test_drbd.py tests/integration/test_kvm_guest_role.py tests/integration/test_docs.py \
	tests/integration/test_installed_collection.py tests/integration/test_openvz_ct_role.py \
	tests/integration/test_import_playbook.py tests/integration/test_execution_environment.py tests/integration/test_hostile_edges.py \
	tests/integration/test_local_lab.py::test_half_built_lab_is_repaired_rebuild_changes_nothing_and_plan_failure_tears_down
INTEGRATION_PYTEST := $(SKIP_POLICY) $(BIN)/python -m pytest $(PYTEST_ARGS) -q -p no:cacheprovider
integration: setup libvirt-py
	$(BIN)/python tests/utils/stages.py --jobs 2 --out build/stages-integration.json \
		integration-lab integration-wiring -- integration-rest; rc=$$?; \
	$(BIN)/ansible-playbook playbooks/teardown.yml -i inventories/local -e local_lab_prefix=bls >/dev/null || rc=1; exit $$rc

integration-lab: venv $(COLL_LINK)
	BENCHLAB_SHARED_LAB=keep $(INTEGRATION_PYTEST) $(INTEGRATION_LAB) --durations=10

integration-wiring: venv $(COLL_LINK)
	$(INTEGRATION_PYTEST) $(INTEGRATION_WIRING) --durations=10

integration-rest: venv $(COLL_LINK)
	BENCHLAB_SHARED_LAB=reuse $(INTEGRATION_PYTEST) tests/integration $(addprefix --deselect ,$(INTEGRATION_LAB) $(INTEGRATION_WIRING)) --durations=30

# The supported range of controllers, each in its own venv: ansible-core 2.16 (Python 3.11; also
# every benchmark module on real Python 3.6 and 3.13 targets and the Python 2.7 message) and 2.20
# (pyenv's Python 3.12): the unit tests and the quick local matrix, one repetition; the same
# matrix run under the default 2.19 (which runs the whole suite besides). About 4 minutes.
# Without pyenv's interpreters (a plain Debian machine) the parts that need them end as allowed skips
# (tests/skips-allowed.yml) that name what is missing and how to get it.
CORE216 := .venv-core216
CORE220 := .venv-core220
PYTHON312 ?= $(shell pyenv prefix 3.12 2>/dev/null)/bin/python3.12
NO_PYTHON312 := no Python 3.12 for ansible-core 2.20 (the venv $(CORE220)): pyenv install 3.12, or make compat PYTHON312=/path/to/python3.12

compat: compat-units-core216 compat-units-core220 compat-play

# the controller venvs of make compat, made before the runs that use them (make test runs these at once)
compat-venvs: venv $(CORE216)/.installed
	if [ -x "$(PYTHON312)" ]; then $(MAKE) --no-print-directory $(CORE220)/.installed; fi

compat-units-core216: venv $(CORE216)/.installed $(COLL_LINK)
	$(SKIP_POLICY) BENCHLAB_EXPECT_CORE=2.16 $(CORE216)/bin/python -m pytest $(PYTEST_ARGS) tests/unit -q -p no:cacheprovider

compat-units-core220: venv $(COLL_LINK)
	if [ -x "$(PYTHON312)" ]; then $(MAKE) --no-print-directory compat-core220-units; \
	else $(BIN)/python tests/utils/skip_policy.py --skip "$(NO_PYTHON312)"; fi

# the quick local matrix and the secret's start-up line under each core; every module on real
# Python 3.6 and 3.13 targets (2.16)
compat-play: venv $(CORE216)/.installed $(COLL_LINK)
	$(SKIP_POLICY) BENCHLAB_EXPECT_CORE=2.16 $(CORE216)/bin/python -m pytest $(PYTEST_ARGS) tests/compat -q -p no:cacheprovider
	if [ -x "$(PYTHON312)" ]; then $(MAKE) --no-print-directory compat-core220; \
	else $(BIN)/python tests/utils/skip_policy.py --skip "$(NO_PYTHON312)"; fi
	$(SKIP_POLICY) BENCHLAB_EXPECT_CORE=2.19 $(BIN)/python -m pytest $(PYTEST_ARGS) tests/compat/test_core_playbook.py tests/compat/test_secret_startup_line.py -q -p no:cacheprovider

compat-core220-units: $(CORE220)/.installed $(COLL_LINK)
	$(SKIP_POLICY) BENCHLAB_EXPECT_CORE=2.20 $(CORE220)/bin/python -m pytest $(PYTEST_ARGS) tests/unit -q -p no:cacheprovider

compat-core220: $(CORE220)/.installed $(COLL_LINK)
	$(SKIP_POLICY) BENCHLAB_EXPECT_CORE=2.20 $(CORE220)/bin/python -m pytest $(PYTEST_ARGS) tests/compat/test_core_playbook.py tests/compat/test_secret_startup_line.py -q -p no:cacheprovider

$(CORE216)/.installed: tests/requirements-core216.txt
	test -x $(CORE216)/bin/python || $(PYTHON) -m venv $(CORE216)
	$(CORE216)/bin/python -m pip install --quiet --disable-pip-version-check -r tests/requirements-core216.txt
	touch $@

$(CORE220)/.installed: tests/requirements-core220.txt
	test -x "$(PYTHON312)" || { echo "$(NO_PYTHON312)"; exit 1; }
	test -x $(CORE220)/bin/python || $(PYTHON312) -m venv $(CORE220)
	$(CORE220)/bin/python -m pip install --quiet --disable-pip-version-check -r tests/requirements-core220.txt
	touch $@

# The performance figures (a benchmark, not a test): fidelity of dd/fio through the modules,
# playbook overhead per cell, the 100,000-record report. Writes perf/results.json.
perf: setup
	$(BIN)/python perf/perf.py

# The qemu (TCG) guests, each test with its own private libvirtd: one guest (boot + bench.yml +
# teardown), the DRBD pair (replication measured, failure paths) and four guests at once (disk bus
# side by side, 1/2/4-guest iperf steps). The guest image is built first (once, cached in
# /var/cache/benchlab), then the three tests run at the same time (tests/vm/run_all.py; -j 1: one
# after the other). Not part of `make test`; see docs/development.md for its time.
test-vm: setup libvirt-py
	$(BIN)/python tests/vm/run_all.py

build: venv
	mkdir -p build && $(BIN)/ansible-galaxy collection build --force --output-path build .

# The AWX execution environment's build context (execution-environment.yml) in build/ee: the
# collection and community.libvirt as tarballs in build/ee-dist. No image is built here.
ee-context: venv $(COMMUNITY_LIBVIRT)
	rm -rf build/ee build/ee-dist && mkdir -p build/ee-dist
	$(BIN)/ansible-galaxy collection build --force --output-path build/ee-dist .
	$(BIN)/python tests/utils/collection_tarball.py $(COMMUNITY_LIBVIRT) build/ee-dist
	$(BIN)/ansible-builder create -f execution-environment.yml -c build/ee

clean:
	rm -rf build .collections benchlab-runs .pytest_cache $(CORE216) $(CORE220)
