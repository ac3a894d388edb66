#!/bin/bash
# vm: -t 900
# The compliance suite against our own driver over IPv4 (complib.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/complib.sh"

run_compliance 4
