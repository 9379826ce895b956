#!/usr/bin/env python3
"""Makes Patroni 3.0.2's etcd3 leader-key renewal conditional, as Patroni 3.0.3 does (patroni/patroni#2689).

Debian 12 ships Patroni 3.0.2. There, a primary whose lease expired while it was stopped (a hang, a paused VM or
container, a long GC-like stall) renews by granting a new lease and writing the leader key unconditionally: it
takes the key back from the node promoted in the meantime, which is demoted and rewound, and whatever that node
committed on its new timeline is discarded. Found by .ci/compose-smoke's paused primary. Patched, the renewal writes
the key only while it still holds this node's name, or creates it when there is none; otherwise it reports the lock
lost and Patroni demotes this node.

  patroni-leader-key-fix.py PATRONI_PACKAGE_DIR    patches PATRONI_PACKAGE_DIR/dcs/etcd3.py in place (once)
Fails when the file has neither the 3.0.2 code nor the patch: a newer Patroni needs looking at, not this.
"""
import os
import sys

MARK = "# quotevault: conditional leader-key renewal (patroni/patroni#2689)"

OLD = """                try:
                    self._run_and_handle_exceptions(self._client.put, self.leader_path,
                                                    self._name, self._lease, retry=_retry)
                except ReturnFalseException:
                    pass
        return bool(self._lease)
"""

NEW = """                %s
                key, name = base64_encode(self.leader_path), base64_encode(self._name)
                put = {'request_put': {'key': key, 'value': name, 'lease': self._lease}}
                ours = {'key': key, 'target': 'VALUE', 'value': name}
                absent = {'key': key, 'target': 'CREATE', 'create_revision': '0'}
                try:
                    if not self._run_and_handle_exceptions(self._client.txn, ours, put, retry=_retry) and \\
                            not self._run_and_handle_exceptions(self._client.txn, absent, put, retry=_retry):
                        logger.warning('the leader key is held by another node: not renewed')
                        return False
                except ReturnFalseException:
                    return False
        return bool(self._lease)
""" % MARK


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    path = os.path.join(sys.argv[1], "dcs", "etcd3.py")
    text = open(path).read()
    if MARK in text:
        print(f"{path}: already patched")
        return
    if text.count(OLD) != 1:
        sys.exit(f"{path}: not Patroni 3.0.2's _update_leader; check whether this Patroni has patroni/patroni#2689")
    with open(path + ".new", "w") as file:
        file.write(text.replace(OLD, NEW))
    os.replace(path + ".new", path)
    print(f"{path}: leader-key renewal made conditional")


if __name__ == "__main__":
    main()
