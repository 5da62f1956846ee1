/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_types.c - the derived datatype engine through the public API, no
 * agent needed: size, extent and true extent of every constructor,
 * nesting (vector of struct, subarray of resized), zero counts and
 * zero-size types, negative strides and lower bounds, subarrays in C and
 * Fortran order, a type freed while a type built on it lives, commit,
 * and bad handles.
 */
#include <stddef.h>
#include <stdint.h>

#include <rmad.h>

#include "tap.h"

static int ext_is(rmad_datatype_t t, size_t size, ptrdiff_t lb,
		  ptrdiff_t ext, ptrdiff_t tlb, ptrdiff_t text)
{
	size_t s = 0;
	ptrdiff_t l = 0, e = 0, tl = 0, te = 0;

	if (rmad_type_size(t, &s) || rmad_type_get_extent(t, &l, &e) ||
	    rmad_type_get_true_extent(t, &tl, &te))
		return 0;
	if (s != size || l != lb || e != ext || tl != tlb || te != text) {
		diag("size %zu lb %td extent %td true lb %td true extent %td",
		     s, l, e, tl, te);
		return 0;
	}
	return 1;
}

int main(void)
{
	rmad_datatype_t c, v, hv, ix, hix, ib, hib, st, rs, sa, sf, d, z, nv,
			vs, sr, e;
	int bl[3] = { 2, 1, 3 }, dp[3] = { 0, 4, 10 };
	ptrdiff_t hd[3] = { 0, 40, 100 };
	int sizes[2] = { 4, 6 }, sub[2] = { 2, 3 }, start[2] = { 1, 2 };

	alarm_after(30);
	plan(22);
	ok(!rmad_type_contiguous(4, RMAD_INT32, &c) &&
	   ext_is(c, 16, 0, 16, 0, 16), "contiguous(4, INT32)");
	ok(!rmad_type_vector(3, 2, 4, RMAD_INT64, &v) &&
	   ext_is(v, 48, 0, 80, 0, 80), "vector(3, 2, 4, INT64): 3 blocks "
	   "of 2, stride 4 elements");
	ok(!rmad_type_create_hvector(3, 1, 24, RMAD_INT32, &hv) &&
	   ext_is(hv, 12, 0, 52, 0, 52), "hvector(3, 1, 24 bytes, INT32)");
	ok(!rmad_type_indexed(3, bl, dp, RMAD_DOUBLE, &ix) &&
	   ext_is(ix, 48, 0, 104, 0, 104), "indexed({2,1,3}, {0,4,10}, "
	   "DOUBLE)");
	ok(!rmad_type_create_hindexed(3, bl, hd, RMAD_INT8, &hix) &&
	   ext_is(hix, 6, 0, 103, 0, 103), "hindexed in bytes");
	ok(!rmad_type_create_indexed_block(3, 2, dp, RMAD_INT16, &ib) &&
	   ext_is(ib, 12, 0, 24, 0, 24), "indexed_block");
	ok(!rmad_type_create_hindexed_block(3, 2, hd, RMAD_INT16, &hib) &&
	   ext_is(hib, 12, 0, 104, 0, 104), "hindexed_block");
	{
		int sbl[2] = { 1, 1 };
		ptrdiff_t sd[2] = { 0, 8 };
		rmad_datatype_t sty[2] = { RMAD_INT32, RMAD_DOUBLE };

		ok(!rmad_type_create_struct(2, sbl, sd, sty, &st) &&
		   ext_is(st, 12, 0, 16, 0, 16),
		   "struct {int32 @0, double @8}");
		ok(!rmad_type_vector(2, 1, 2, st, &vs) &&
		   ext_is(vs, 24, 0, 48, 0, 48), "vector of that struct");
	}
	ok(!rmad_type_create_resized(RMAD_INT32, -4, 16, &rs) &&
	   ext_is(rs, 4, -4, 16, 0, 4), "resized(INT32, lb -4, extent 16)");
	ok(!rmad_type_create_subarray(2, sizes, sub, start, RMAD_ORDER_C,
				      RMAD_INT32, &sa) &&
	   ext_is(sa, 24, 0, 96, (1 * 6 + 2) * 4, 36),
	   "subarray 4x6, 2x3 from (1,2), C order");
	ok(!rmad_type_create_subarray(2, sizes, sub, start, RMAD_ORDER_FORTRAN,
				      RMAD_INT32, &sf) &&
	   ext_is(sf, 24, 0, 96, (1 + 2 * 4) * 4, (2 * 4 * 4 + 8)),
	   "subarray 4x6, 2x3 from (1,2), Fortran order");
	ok(!rmad_type_create_subarray(1, &sizes[1], &sub[1], &start[1],
				      RMAD_ORDER_C, rs, &sr) &&
	   ext_is(sr, 12, -4, 96, 32, 36), "subarray of a resized type");
	ok(!rmad_type_dup(v, &d) && ext_is(d, 48, 0, 80, 0, 80), "dup");
	ok(!rmad_type_contiguous(0, RMAD_INT64, &z) && ext_is(z, 0, 0, 0, 0, 0),
	   "zero count: size 0, extent 0");
	ok(!rmad_type_create_hvector(3, 1, -16, RMAD_INT64, &nv) &&
	   ext_is(nv, 24, -32, 40, -32, 40), "negative stride");
	{
		rmad_datatype_t empty, ev;

		ok(!rmad_type_contiguous(0, RMAD_INT32, &empty) &&
		   !rmad_type_vector(4, 2, 3, empty, &ev) &&
		   ext_is(ev, 0, 0, 0, 0, 0), "a vector of a zero-size type");
		rmad_type_free(&ev);
		rmad_type_free(&empty);
	}
	/* a type freed while one built on it lives */
	ok(!rmad_type_contiguous(2, st, &e) && !rmad_type_free(&st) &&
	   st == RMAD_DATATYPE_NULL && ext_is(e, 24, 0, 32, 0, 32) &&
	   !rmad_type_commit(&e), "struct freed under a contiguous of it");
	ok(rmad_type_free(&st) == RMAD_ERR_ARG &&
	   rmad_type_size((rmad_datatype_t)0x12345, &(size_t){ 0 }) ==
	   RMAD_ERR_ARG, "freed and garbage handles: RMAD_ERR_ARG");
	ok(rmad_type_commit(&(rmad_datatype_t){ RMAD_INT32 }) == RMAD_ERR_TYPE &&
	   rmad_type_free(&(rmad_datatype_t){ RMAD_INT32 }) == RMAD_ERR_ARG,
	   "a predefined type cannot be committed or freed");
	ok(rmad_type_vector(-1, 1, 1, RMAD_INT32, &(rmad_datatype_t){ 0 }) ==
	   RMAD_ERR_ARG &&
	   rmad_type_create_subarray(1, &sizes[0], &sizes[1], &start[0],
				     RMAD_ORDER_C, RMAD_INT32,
				     &(rmad_datatype_t){ 0 }) == RMAD_ERR_ARG,
	   "bad arguments: RMAD_ERR_ARG");
	{
		int ok_all = 1;
		rmad_datatype_t *all[] = { &c, &v, &hv, &ix, &hix, &ib, &hib,
					   &vs, &rs, &sa, &sf, &sr, &d, &z,
					   &nv, &e };

		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			ok_all &= !rmad_type_free(all[i]) &&
				  *all[i] == RMAD_DATATYPE_NULL;
		ok(ok_all, "every type freed");
	}
	return done_testing();
}
