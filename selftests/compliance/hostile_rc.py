# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Hostile-wire checks of the RC transport (hostile.py): READ responses,
segment windows, extension lengths, responder limits."""


class RcHostile:
    TESTS = []
