#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# vm: -t 900
#
# Hostile wire: host B has no MetaRoCE device and plays a hostile peer (and
# off-path spoofer) of device ra in host A, whose verbs side is driven by the
# target agent (selftests/compliance/target.py); selftests/compliance/
# hostile.py sends packets that are each well formed but relate to each
# other or to the target's state as an attacker would arrange them.  One TAP
# point per finding of the security review, named in the line; the kernel
# log check of the VM harness catches KASAN and lockdep reports.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/complib.sh"
out=/tmp/mroce-hostile.txt

setup_two_hosts
for ip in 10.77.0.3 10.77.0.4 10.77.0.5 10.77.0.6 10.77.0.7; do
	ip -n $NS_B addr add $ip/24 dev vb nodad
done
target_up
ip netns exec $NS_B timeout 700 /usr/bin/python3 -u $COMP/hostile.py \
	$IP_B $IP_A 4794 10.77.0.3 10.77.0.4 10.77.0.5 10.77.0.6 10.77.0.7 > $out 2>&1
rc=$?

grep -E '^F[0-9]+ +(pass|fail)' $out > $out.checked

# Finding 12: the connection dump (CIDs, entropies, peer addresses) is
# for CAP_NET_ADMIN only; root still gets it.
if [ -x "$MR" ]; then
	nobody=$(ip netns exec $NS_A setpriv --reuid=65534 --regid=65534 \
		--clear-groups $MR show 2>&1)
	st=fail
	grep -q "Operation not permitted" <<<"$nobody" &&
		ip netns exec $NS_A $MR show | grep -q "^device ra" && st=pass
	echo "F12 $st CONN_GET as nobody: $(head -c 200 <<<"$nobody" | tr '\n' ' ')" >> $out.checked
fi
# Finding 13: no token is compared with == or != (MRC-SEC-004: constant
# time, crypto_memneq); the static check the review asked for.
DRV=$(dirname "$0")/../../drivers/infiniband/sw/metaroce
cmp=$(grep -nE '[a-z_>.]*token[a-z_)]* *[!=]= |[!=]= *[a-z_(>.-]*token' $DRV/*.c)
st=pass
[ -n "$cmp" ] && st=fail
echo "F13 $st token comparisons with ==/!=: $(tr '\n' ' ' <<<"${cmp:-none}" | head -c 300)" >> $out.checked
tap_plan $(($(wc -l < $out.checked) + 3))
while read -r id st note; do
	ok_if "finding ${id#F}: $note" test "$st" = pass
done < $out.checked
ok_if "hostile run completed (exit $rc)" \
	bash -c "! grep -q '^aborted' $out && grep -q '^summary' $out"
diag "$(grep -vE '^F[0-9]+ ' $out)"
kill $agent 2>/dev/null
wait $agent 2>/dev/null
ok_if "device deleted" rdma link delete ra
ok_if "module unloads" modprobe -r metaroce
tap_done
