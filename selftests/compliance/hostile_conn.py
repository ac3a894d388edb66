# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Hostile-wire checks of the connection layer (hostile.py): off-path
CONNECTs, epochs, reflection."""


class ConnHostile:
    TESTS = []
