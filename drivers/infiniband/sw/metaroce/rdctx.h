/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdctx.c: the responder's READ and ATOMIC contexts (spec 10.4).
 */
#ifndef MROCE_RDCTX_H
#define MROCE_RDCTX_H

#include "transport.h"

struct mroce_rdctx *mroce_rdctx_free(struct mroce_qp *qp);
void mroce_rdctx_delivered(struct mroce_stream *st, u32 ssn);
void mroce_rdctx_reset(struct mroce_stream *st);

#endif /* MROCE_RDCTX_H */
