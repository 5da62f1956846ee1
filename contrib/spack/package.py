# SPDX-License-Identifier: BSD-3-Clause
# contrib/spack/package.py - a Spack recipe for rmad.  Copy it into a
# Spack repository as packages/rmad/package.py (`spack repo create`,
# then `spack install rmad`).  Written against Spack's documented
# AutotoolsPackage API (spack.readthedocs.io, "Packaging Guide" and
# "Build Systems: Autotools"); Spack itself could not be run where this
# recipe was written, so its configure line was checked by hand
# (README, "Installing").

from spack.package import *


class Rmad(AutotoolsPackage):
    """One-sided communication (MPI-3 RMA) runtime whose per-node agent
    makes all progress: put, get, accumulate, atomics, lock/unlock,
    fence, PSCW and flush complete while the target process computes.
    librmad-mpi runs an unmodified MPI program's one-sided calls on the
    agents."""

    homepage = "https://rmad.invalid/"
    url = "https://rmad.invalid/releases/rmad-0.2.0.tar.gz"
    git = "https://rmad.invalid/rmad.git"

    maintainers("rmad-maintainers")
    license("BSD-3-Clause")

    version("main", branch="main")
    # The release tarball is `make dist`'s rmad-0.2.0.tar.gz; put its
    # sha256sum here when it is published.
    version("0.2.0")

    variant(
        "mpi",
        default=True,
        description="Build librmad-mpi, the PMPI layer for Open MPI programs",
    )
    variant(
        "fabrics",
        values=any_combination_of("tcp", "shm", "verbs", "efa").with_default("tcp,shm"),
        description="libfabric providers the agents use (tcp brings ofi_rxm)",
    )
    variant("trace", default=False, description="Build the op trace points (--enable-trace)")

    # from a git checkout: configure is made by autoreconf
    depends_on("autoconf", type="build", when="@main")
    depends_on("automake", type="build", when="@main")
    depends_on("libtool", type="build", when="@main")
    depends_on("pkgconfig", type="build")

    depends_on("pmix@4:")
    depends_on("libfabric@1.14:")
    depends_on("libfabric fabrics=tcp,rxm", when="fabrics=tcp")
    depends_on("libfabric fabrics=shm", when="fabrics=shm")
    depends_on("libfabric fabrics=verbs,rxm", when="fabrics=verbs")
    depends_on("libfabric fabrics=efa", when="fabrics=efa")
    depends_on("hwloc@2:")
    depends_on("libevent@2.1:")
    depends_on("userspace-rcu@0.12:")
    # librmad-mpi interposes Open MPI's PMPI profile (rmad-mpi(7))
    depends_on("openmpi@4.1:", when="+mpi")

    conflicts("platform=darwin", msg="rmad needs Linux (memfd, futex, SCM_RIGHTS)")
    conflicts("platform=windows", msg="rmad needs Linux (memfd, futex, SCM_RIGHTS)")

    def autoreconf(self, spec, prefix):
        autoreconf("-fi")

    def configure_args(self):
        spec = self.spec
        args = [
            "--with-pmix={0}".format(spec["pmix"].prefix),
            "--with-libfabric={0}".format(spec["libfabric"].prefix),
            "--with-hwloc={0}".format(spec["hwloc"].prefix),
            "--with-libevent={0}".format(spec["libevent"].prefix),
            "--with-liburcu={0}".format(spec["userspace-rcu"].prefix),
        ]
        if spec.satisfies("+mpi"):
            args.append("--with-mpi={0}".format(spec["mpi"].mpicc))
        else:
            args.append("--without-mpi")
        args += self.enable_or_disable("trace")
        return args
