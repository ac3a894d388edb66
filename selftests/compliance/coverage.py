# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Feed a conformance run into the coverage table of requirements.md: every
requirement ID that the run checked (pass or fail) gets "compliance" in its
"Covered by" column.

    coverage.py RUN_OUTPUT [REQUIREMENTS_MD]

RUN_OUTPUT is what conformance.py printed, or the TAP output of
test_compliance.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv):
    run = argv[1]
    req = argv[2] if len(argv) > 2 else os.path.join(
        HERE, "..", "..", "Documentation", "metaroce", "requirements.md")
    checked = set()
    for line in open(run):
        mm = re.match(r"(MRC-[A-Z]+-\d+) +(pass|fail)\b", line) or \
            re.match(r"(?:not )?ok \d+ - (MRC-[A-Z]+-\d+)\b", line)
        if mm:
            checked.add(mm.group(1))
    out = []
    n = 0
    for line in open(req):
        mm = re.match(r"\| (MRC-[A-Z]+-\d+) \|", line)
        if mm and mm.group(1) in checked:
            cells = line.rstrip("\n").split("|")
            cov = cells[-2].strip()
            if "compliance" not in cov:
                cov = "compliance" if cov == "untested" else cov + ", compliance"
                cells[-2] = " %s " % cov
                line = "|".join(cells) + "\n"
                n += 1
        out.append(line)
    open(req, "w").write("".join(out))
    print("%d requirements checked by the run, %d rows updated" % (len(checked), n))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
