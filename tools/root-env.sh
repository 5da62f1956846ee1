# SPDX-License-Identifier: BSD-3-Clause
# tools/root-env.sh - sourced: what Open MPI's mpirun needs to run as root
# on loopback with more ranks than cores.  Harmless for other users.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
