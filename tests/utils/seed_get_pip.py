"""Make ansible-test's pip bootstrap work without its download host.

ansible-test bootstraps pip into each virtual environment it creates by running a cached copy of
get-pip.py (~/.ansible/test/cache/get_pip_<version>.py) and downloads that script from a host these
machines cannot reach. This writes an equivalent script beside the pip wheel of the same version,
taken from PyPI (which is reachable): the script runs pip from the wheel to install the packages
ansible-test asks for, which is what get-pip.py does.

Usage: seed_get_pip.py PYTHON   (the python whose ansible_test decides the pip version)
"""

import glob
import os
import subprocess
import sys

SCRIPT = '''"""get-pip replacement written by benchlab.bench tests/utils/seed_get_pip.py."""
import os
import sys

WHEEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), %(wheel)r)
sys.path.insert(0, WHEEL)

from pip._internal.cli.main import main  # noqa: E402  (pip runs from its own wheel)

args = [a for a in sys.argv[1:] if a not in ('--no-setuptools', '--no-wheel')]
sys.exit(main(['install', '--upgrade', '--force-reinstall'] + args))
'''


def main():
    python = sys.argv[1] if len(sys.argv) > 1 else sys.executable
    version = subprocess.check_output([python, '-c', (
        'from ansible_test._internal.python_requirements import get_venv_packages;'
        'from ansible_test._internal.host_configs import NativePythonConfig;'
        'print(get_venv_packages(NativePythonConfig(version="3.11", path="/"))["pip"])')], text=True).strip()
    cache = os.path.expanduser('~/.ansible/test/cache')
    os.makedirs(cache, exist_ok=True)
    target = os.path.join(cache, 'get_pip_%s.py' % version.replace('.', '_'))
    wheels = glob.glob(os.path.join(cache, 'pip-%s-*.whl' % version))
    if not wheels:
        subprocess.check_call([python, '-m', 'pip', 'download', '--quiet', '--no-deps', '--only-binary=:all:',
                               '-d', cache, 'pip==%s' % version])
        wheels = glob.glob(os.path.join(cache, 'pip-%s-*.whl' % version))
    with open(target, 'w') as f:
        f.write(SCRIPT % {'wheel': os.path.basename(wheels[0])})
    print('ansible-test pip %s bootstrap: %s' % (version, target))


if __name__ == '__main__':
    main()
