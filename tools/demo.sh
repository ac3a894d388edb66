#!/bin/bash
# Boot the bundled VM and run the demo (tools/demo-guest.sh) in it.
here=$(dirname "$(readlink -f "$0")")
exec "$here/vm/run.sh" -t 300 -- tools/demo-guest.sh
