# -*- coding: utf-8 -*-
# Copyright: benchlab.bench contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: libvirt_mark
short_description: Read the benchlab mark of a libvirt domain definition
version_added: 0.1.0
description:
  - Every domain the C(benchlab.bench.kvm_guest) role defines carries, under C(<metadata>), an element
    C(guest) in the XML namespace C(https://benchlab.example/xmlns/guest/1) with the guest's C(name), the
    time it was C(created) and one C(image) element per file the role made for it.
  - This filter parses a domain's XML (from C(virsh dumpxml) or the role's own definition file) and returns
    that mark. The role destroys, undefines or redefines only a domain whose mark names it (and deletes only
    the files the mark lists), unless C(kvm_guest_adopt) is true.
options:
  _input:
    description: The domain XML; empty for no domain.
    type: str
    required: true
author:
  - benchlab.bench maintainers (@benchlab)
'''

EXAMPLES = r'''
- name: Read the mark of the domain that has the guest's name
  ansible.builtin.set_fact:
    mark: "{{ domain_xml.get_xml | benchlab.bench.libvirt_mark }}"
'''

RETURN = r'''
_value:
  description:
    - C(marked) (the domain carries the benchlab mark), C(name), C(created) (ISO 8601), C(images) (the files
      the role made for the guest, absolute paths), C(domain) (the domain's own C(<name>)) and C(uuid).
    - For empty input, C(marked) is false and C(domain) is null.
  type: dict
'''

import os
import xml.etree.ElementTree as ET

from ansible.errors import AnsibleFilterError

NS = 'https://benchlab.example/xmlns/guest/1'


def libvirt_mark(xml):
    out = {'marked': False, 'name': None, 'created': None, 'images': [], 'domain': None, 'uuid': None}
    if xml is None or not str(xml).strip():
        return out
    text = str(xml)
    if '<!DOCTYPE' in text or '<!ENTITY' in text:
        raise AnsibleFilterError('libvirt_mark: refusing a domain XML with a DTD or entities')
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise AnsibleFilterError('libvirt_mark: the domain XML cannot be read: %s' % exc)
    if root.tag != 'domain':
        raise AnsibleFilterError('libvirt_mark: expected a <domain> document, got <%s>' % root.tag)
    out['domain'] = root.findtext('name')
    out['uuid'] = root.findtext('uuid')
    mark = root.find('metadata/{%s}guest' % NS)
    if mark is None:
        return out
    out['name'] = (mark.findtext('{%s}name' % NS) or '').strip() or None
    out['created'] = (mark.findtext('{%s}created' % NS) or '').strip() or None
    images = []
    for el in mark.findall('{%s}image' % NS):
        path = (el.text or '').strip()
        # only absolute, normalised paths: a mark cannot point the teardown at '..' tricks or relative names
        if path and os.path.isabs(path) and os.path.normpath(path) == path:
            images.append(path)
    out['images'] = images
    out['marked'] = out['name'] is not None and out['name'] == out['domain']
    return out


class FilterModule(object):
    def filters(self):
        return {'libvirt_mark': libvirt_mark}
