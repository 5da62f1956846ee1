/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_rows.h - rmad-bench's rows: statistics over the samples, the
 * table/CSV/JSON printers, and the job's CPU time around each row.
 * Included once, by rmad-bench.c, after its options and globals.
 */
#ifndef RMAD_BENCH_ROWS_H
#define RMAD_BENCH_ROWS_H
/* ------------------------------------------------------------ rows */

struct row {
	const char *test, *mode;
	size_t size;
	long t_us;		/* async compute time, -1: none */
	int iters;
	double p50, p90, p99;	/* microseconds per op (or per epoch) */
	double mbps, mops;	/* 0: not measured */
	double cpu, wall;	/* job CPU seconds (agents included), wall */
	int ok;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* fill p50/p90/p99 (us) from n samples in seconds, each covering per ops */
static void stats(struct row *r, double *t, int n, int per)
{
	if (n <= 0) {
		r->p50 = r->p90 = r->p99 = 0;
		return;
	}
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	r->p50 = t[(n - 1) / 2] * 1e6 / per;
	if (opt.mean) {
		double sum = 0;

		for (int i = 0; i < n; i++)
			sum += t[i];
		r->p50 = sum / n * 1e6 / per;
	}
	r->p90 = t[(int)((n - 1) * 0.90)] * 1e6 / per;
	r->p99 = t[(int)((n - 1) * 0.99)] * 1e6 / per;
	r->iters = n;
}

/*
 * A mem row holds KiB where the others hold microseconds: p50 is the
 * median over the ranks (or agents), p90 the 90th percentile, p99 the
 * maximum, and iters how many ranks (or agents) were counted.
 */
static int is_mem(const struct row *r)
{
	return !strcmp(r->test, test_names[T_MEM]);
}

static void print_mem_row(const struct row *r)
{
	static int header = 1;

	if (header)
		printf("%-7s %-5s %8s %6s %10s %10s %10s %7s %7s %s\n",
		       "test", "mode", "win_B", "count", "med_KiB", "p90_KiB",
		       "max_KiB", "cpu_s", "wall_s", "check");
	header = 0;
	printf("%-7s %-5s %8zu %6d %10.1f %10.1f %10.1f %7.3f %7.3f %s\n",
	       r->test, r->mode, r->size, r->iters, r->p50, r->p90, r->p99,
	       r->cpu, r->wall, r->ok ? "ok" : "FAIL");
}

static void print_row(const struct row *r)
{
	char t_us[24], mb[24], mo[24];

	if (rank != 0)
		return;
	snprintf(t_us, sizeof(t_us), r->t_us < 0 ? "-" : "%ld", r->t_us);
	snprintf(mb, sizeof(mb), r->mbps > 0 ? "%.1f" : "-", r->mbps);
	snprintf(mo, sizeof(mo), r->mops > 0 ? "%.3f" : "-", r->mops);
	switch (opt.fmt) {
	case FMT_CSV:
		if (first_row)
			printf("label,impl,ranks,nodes,provider,test,mode,size,"
			       "t_us,iters,p50_us,p90_us,p99_us,mbps,mops,"
			       "cpu_s,wall_s,check\n");
		printf("%s,%s,%d,%d,%s,%s,%s,%zu,%s,%d,%.3f,%.3f,%.3f,%s,%s,"
		       "%.3f,%.3f,%s\n", opt.label, IMPL_NAME, nranks,
		       info.nodes, info.provider, r->test, r->mode, r->size,
		       t_us, r->iters, r->p50, r->p90, r->p99,
		       r->mbps > 0 ? mb : "", r->mops > 0 ? mo : "", r->cpu,
		       r->wall, r->ok ? "ok" : "FAIL");
		break;
	case FMT_JSON:
		printf("%s    {\"test\": \"%s\", \"mode\": \"%s\", "
		       "\"size\": %zu, \"t_us\": %s, \"iters\": %d, "
		       "\"p50_us\": %.3f, \"p90_us\": %.3f, \"p99_us\": %.3f, "
		       "\"mbps\": %s, "
		       "\"mops\": %s, \"cpu_s\": %.3f, \"wall_s\": %.3f, "
		       "\"unit\": \"%s\", \"check\": \"%s\"}",
		       first_row ? "" : ",\n", r->test,
		       r->mode, r->size, r->t_us < 0 ? "null" : t_us,
		       r->iters, r->p50, r->p90, r->p99,
		       r->mbps > 0 ? mb : "null", r->mops > 0 ? mo : "null",
		       r->cpu, r->wall, is_mem(r) ? "KiB" : "us",
		       r->ok ? "ok" : "FAIL");
		break;
	default:
		if (is_mem(r)) {
			print_mem_row(r);
			break;
		}
		if (!us_header++)
			printf("%-7s %-5s %8s %6s %6s %10s %10s %10s %9s %8s "
			       "%7s %7s %s\n", "test", "mode", "size", "T_us",
			       "iters", "p50_us", "p90_us", "p99_us", "MB/s",
			       "Mops/s", "cpu_s", "wall_s", "check");
		printf("%-7s %-5s %8zu %6s %6d %10.3f %10.3f %10.3f %9s %8s "
		       "%7.3f %7.3f %s\n", r->test, r->mode, r->size, t_us,
		       r->iters, r->p50, r->p90, r->p99, mb, mo, r->cpu,
		       r->wall, r->ok ? "ok" : "FAIL");
	}
	first_row = 0;
	fflush(stdout);
}

/* ------------------------------------------------------------ CPU time */

static double self_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

/* user+sys seconds of process pid from /proc/PID/stat, in clock ticks
 * (10 ms here): 0 if it cannot be read */
static double proc_cpu_ticks(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* the command name may hold spaces: fields count from its ')' */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%lu %lu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* CPU seconds of process pid, exact: the run time of each of its threads
 * in ns (/proc/PID/task/TID/schedstat, first field).  The agent's CPU in
 * a short row (an async row at T = 0 lasts some 10 ms) is a tick or two
 * of /proc/PID/stat, while a rank's own (getrusage) and an MPI progress
 * thread's are exact: ticks made the job-CPU ratio a coin toss.  Falls
 * back to the ticks where schedstat is missing. */
static double proc_cpu(int pid)
{
	char path[96];
	unsigned long long ns, sum = 0;
	struct dirent *d;
	int got = 0;
	DIR *dir;
	FILE *f;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.20s/schedstat",
			 pid, d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &ns) == 1) {
			sum += ns;
			got = 1;
		}
		fclose(f);
	}
	if (dir)
		closedir(dir);
	return got ? (double)sum * 1e-9 : proc_cpu_ticks(pid);
}

/* this rank's share of the job's CPU: itself, plus its node's agent once */
static double my_cpu(void)
{
	double c = self_cpu();

	if (info.local_rank == 0)
		c += proc_cpu(info.agent_pid);
	return c;
}

struct meter {
	double cpu0, wall0;
};

/* collective: start a row */
static int row_begin(struct meter *m)
{
	int rc = b_barrier();

	m->cpu0 = my_cpu();
	m->wall0 = now();
	return rc;
}

/* collective: end a row, sum the CPU time to rank 0, print it */
static int row_end(struct meter *m, struct row *r)
{
	int rc = b_barrier();
	double mine = my_cpu() - m->cpu0, sum = 0;

	r->wall = now() - m->wall0;
	if (!rc)
		rc = b_sum0(mine, &sum);
	r->cpu = sum;
	if (rc)
		r->ok = 0;
	if (!r->ok)
		nfail++;
	total_cpu += r->cpu;
	total_wall += r->wall;
	print_row(r);
	return rc;
}

#endif
