/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * darray.c - an MPI distributed-array type (MPI_Type_create_darray,
 * MPI-3.1 4.1.4) built from rmad's constructors.
 *
 * The process grid is row-major whatever the array's order, so rank r
 * has coordinate c[i] in dimension i.  In each dimension it owns blocks
 * of darg indices, one in every psize: those that start at
 * (c + k psize) darg, the last one cut at gsize.  A BLOCK distribution
 * is that with one block (darg defaults to ceil(gsize / psize) and must
 * cover the dimension), CYCLIC with darg 1 by default, NONE the whole
 * dimension (psize 1).  The dimensions nest from the fastest in storage
 * (the last for MPI_ORDER_C, the first for MPI_ORDER_FORTRAN) outward:
 * dimension i's blocks are an hvector of the inner type resized to the
 * stride of one index of i, plus the cut last block, and the whole type
 * is resized to the global array: lower bound 0, extent the product of
 * the gsizes times the old type's extent.  Its elements come in storage
 * order, as MPI's typemap has them.
 */
#include <stdlib.h>

#include "rmpi.h"

#define DA_MAXDIMS	64

/* Drop a type this file made (a predefined one is left alone). */
static void drop(rmad_datatype_t *t)
{
	if (*t > (rmad_datatype_t)255)
		rmad_type_free(t);
	*t = 0;
}

/*
 * The indices of one dimension of g that coordinate c of p owns, blocks
 * of b of them every p b, as a type of inner (one index: stride bytes).
 */
static int dim_type(long g, long p, long c, long b, MPI_Aint stride,
		    rmad_datatype_t inner, rmad_datatype_t *out)
{
	long first = c * b, nblk, last, lastlen, nfull;
	int bl[2];
	ptrdiff_t dp[2];
	rmad_datatype_t ty[2] = { 0, 0 }, cell = 0;
	int n = 0, err;

	if (first >= g)		/* owns nothing here */
		return rmad_type_contiguous(0, inner, out);
	nblk = (g - 1 - first) / (p * b) + 1;
	last = first + (nblk - 1) * p * b;
	lastlen = g - last < b ? g - last : b;
	nfull = lastlen == b ? nblk : nblk - 1;
	/* one index of this dimension apart, whatever inner's extent */
	err = rmad_type_create_resized(inner, 0, stride, &cell);
	if (!err && nfull) {
		err = rmad_type_create_hvector((int)nfull, (int)b,
					       (ptrdiff_t)(p * b) * stride,
					       cell, &ty[n]);
		bl[n] = 1;
		dp[n++] = (ptrdiff_t)first * stride;
	}
	if (!err && lastlen < b) {
		ty[n] = cell;
		bl[n] = (int)lastlen;
		dp[n++] = (ptrdiff_t)last * stride;
	}
	if (!err)
		err = rmad_type_create_struct(n, bl, dp, ty, out);
	if (ty[0] != cell)
		drop(&ty[0]);
	drop(&cell);
	return err;
}

int rmpi_darray(const int *iv, int ni, rmad_datatype_t old,
		rmad_datatype_t *out)
{
	int size, rank, nd, order;
	const int *gs, *dist, *darg, *ps;
	long coord[DA_MAXDIMS], rest;
	ptrdiff_t lb, ext;
	MPI_Aint stride, total;
	rmad_datatype_t cur = old, next;
	int err;

	if (ni < 4)
		return RMAD_ERR_TYPE;
	size = iv[0];
	rank = iv[1];
	nd = iv[2];
	if (nd < 1 || nd > DA_MAXDIMS || ni != 4 * nd + 4 || size < 1 ||
	    rank < 0 || rank >= size)
		return RMAD_ERR_TYPE;
	gs = iv + 3;
	dist = gs + nd;
	darg = dist + nd;
	ps = darg + nd;
	order = ps[nd];
	if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
		return RMAD_ERR_TYPE;
	/* the grid, row-major; MPI checked it at creation, and again here */
	rest = rank;
	total = 1;
	for (int i = nd - 1; i >= 0; i--) {
		if (gs[i] < 1 || ps[i] < 1)
			return RMAD_ERR_TYPE;
		coord[i] = rest % ps[i];
		rest /= ps[i];
	}
	if (rest)
		return RMAD_ERR_TYPE;	/* rank outside the grid */
	err = rmad_type_get_extent(old, &lb, &ext);
	if (err)
		return err;
	stride = (MPI_Aint)ext;
	for (int k = 0; k < nd; k++) {
		int i = order == MPI_ORDER_C ? nd - 1 - k : k;
		long g = gs[i], p = ps[i], b;

		switch (dist[i]) {
		case MPI_DISTRIBUTE_NONE:
			if (p != 1)
				err = RMAD_ERR_TYPE;
			b = g;
			break;
		case MPI_DISTRIBUTE_BLOCK:
			b = darg[i] == MPI_DISTRIBUTE_DFLT_DARG ?
			    (g + p - 1) / p : darg[i];
			if (b < 1 || b * p < g)
				err = RMAD_ERR_TYPE;
			break;
		case MPI_DISTRIBUTE_CYCLIC:
			b = darg[i] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg[i];
			if (b < 1)
				err = RMAD_ERR_TYPE;
			break;
		default:
			err = RMAD_ERR_TYPE;
			b = 0;
			break;
		}
		if (!err && (g > (long)(INT32_MAX / 2) || b > (long)INT32_MAX))
			err = RMAD_ERR_TYPE;
		if (err)
			break;
		err = dim_type(g, p, coord[i], b, stride, cur, &next);
		if (cur != old)
			drop(&cur);
		if (err)
			return err;
		cur = next;
		if (stride > ((MPI_Aint)1 << 50) / g)
			err = RMAD_ERR_TYPE;	/* beyond any window */
		stride *= g;
	}
	total = stride;
	if (!err)
		err = rmad_type_create_resized(cur, 0, (ptrdiff_t)total, out);
	if (cur != old)
		drop(&cur);
	return err;
}
