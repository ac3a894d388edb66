#!/bin/bash
# vm: -t 900
# The compliance suite against our own driver over IPv6 (complib.sh): the
# same checks as test_compliance, plus those of the IPv6 envelope (flow
# label, hop limit, mandatory UDP checksum).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/complib.sh"

run_compliance 6
