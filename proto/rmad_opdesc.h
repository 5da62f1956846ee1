/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rmad_opdesc.h - one descriptor per op-element opcode: what the op
 * carries and returns, and how it travels between agents.  The client
 * and the agent both decide from this table, so the two sides cannot
 * disagree about an opcode.
 */
#ifndef RMAD_OPDESC_H
#define RMAD_OPDESC_H

#include <stdint.h>

#include "rmad_abi.h"
#include "rmad_shm.h"
#include "rmad_wire.h"

struct rmad_opdesc {
	uint8_t rma;			/* a data operation (put ... cas) */
	uint8_t data_in;		/* origin data goes to the target
					 * (not for get_accumulate with NO_OP) */
	uint8_t result;			/* data comes back from the target */
	uint8_t result_in_origin;	/* ... into the origin buffer (get),
					 * not a separate result buffer */
	uint8_t acc;			/* an accumulate: atomic per element,
					 * ordered per the window's hints */
	uint8_t am_type;		/* RMAD_AM_RMA_* it travels as */
	uint8_t answer;			/* RMAD_AM_RMA_ACK or _RESP */
};

static const struct rmad_opdesc rmad_opdesc[RMAD_OPC_MAX] = {
	[RMAD_OPC_PUT] = { 1, 1, 0, 0, 0, RMAD_AM_RMA_PUT, RMAD_AM_RMA_ACK },
	[RMAD_OPC_GET] = { 1, 0, 1, 1, 0, RMAD_AM_RMA_GET, RMAD_AM_RMA_RESP },
	[RMAD_OPC_ACC] = { 1, 1, 0, 0, 1, RMAD_AM_RMA_ACC, RMAD_AM_RMA_ACK },
	[RMAD_OPC_GACC] = { 1, 1, 1, 0, 1, RMAD_AM_RMA_GACC, RMAD_AM_RMA_RESP },
	[RMAD_OPC_CAS] = { 1, 1, 1, 0, 1, RMAD_AM_RMA_CAS, RMAD_AM_RMA_RESP },
};

/* The descriptor of opc; an all-zero one for sync and unknown opcodes. */
static inline const struct rmad_opdesc *rmad_op_desc(unsigned int opc)
{
	static const struct rmad_opdesc none;

	return opc < RMAD_OPC_MAX ? &rmad_opdesc[opc] : &none;
}

/* Does this op send origin data?  A get_accumulate with NO_OP does not. */
static inline int rmad_op_data_in(unsigned int opc, unsigned int op)
{
	return rmad_op_desc(opc)->data_in &&
	       !(opc == RMAD_OPC_GACC && op == RMAD_NO_OP);
}

/* The answer a request of wire type am_type expects, or 0 if it is not
 * a data operation's request. */
static inline int rmad_am_answer_of(unsigned int am_type)
{
	for (unsigned int opc = 0; opc < RMAD_OPC_MAX; opc++)
		if (rmad_opdesc[opc].rma && rmad_opdesc[opc].am_type == am_type)
			return rmad_opdesc[opc].answer;
	return 0;
}

/* Does the result land in a buffer of its own (get_accumulate, cas)? */
static inline int rmad_op_result_buf(unsigned int opc)
{
	const struct rmad_opdesc *d = rmad_op_desc(opc);

	return d->result && !d->result_in_origin;
}

#endif
