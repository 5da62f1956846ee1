/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_params.c - the parameter table: parsing, files, environment,
 * reload and the generated printouts.
 *
 * The agent refuses to start on a bad config, so the checks lean on the
 * failure paths: each bad value must be refused with a message that
 * points at it, and must leave the struct exactly as it was.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rmad_abi.h"
#include "log.h"
#include "params.h"
#include "tap.h"

static char tmpdir[256];
static char made[16][512];	/* files write_file created, to remove */
static int nmade;

static void good(const char *key, const char *val)
{
	struct rmad_params p;
	char err[512] = "";
	int rc;

	rmad_params_defaults(&p);
	rc = rmad_params_set(&p, key, val, err, sizeof(err));
	ok(rc == 0, "%s = '%s' accepted%s%s", key, val, rc ? ": " : "", err);
}

/* Refused with a message naming the key, struct untouched. */
static void bad(const char *key, const char *val)
{
	struct rmad_params p, before;
	char err[512] = "";
	int rc;

	rmad_params_defaults(&p);
	before = p;
	rc = rmad_params_set(&p, key, val, err, sizeof(err));
	ok(rc == RMAD_ERR_ARG && strstr(err, key) &&
	   !memcmp(&p, &before, sizeof(p)),
	   "%s = '%.40s' refused, struct unchanged (%s)", key, val, err);
}

static int set(struct rmad_params *p, const char *key, const char *val)
{
	char err[512];

	return rmad_params_set(p, key, val, err, sizeof(err));
}

static const char *write_file(const char *name, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	if (!f) {
		diag("cannot write %s", path);
		return path;
	}
	fputs(text, f);
	fclose(f);
	for (int i = 0; i < nmade; i++)
		if (!strcmp(made[i], path))
			return path;
	if (nmade < 16)
		memcpy(made[nmade++], path, sizeof(path));
	return path;
}

static char *print_to_string(const struct rmad_params *p,
			     enum rmad_params_fmt fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return strdup("");
	rmad_params_print(p, f, fmt);
	fclose(f);
	return buf;
}

static void test_table(void)
{
	int n = rmad_params_count(), dup = 0;

	ok(n == 58, "58 keys in the table (%d)", n);
	ok(n == RMAD_NPARAMS, "count matches RMAD_NPARAMS");
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (!strcmp(rmad_params_name(i), rmad_params_name(j)))
				dup++;
	ok(!dup, "key names are unique");
	ok(!rmad_params_name(-1) && !rmad_params_name(n),
	   "name out of range is NULL");
	ok(!strcmp(rmad_params_name(RMAD_PI_ring_entries), "ring_entries"),
	   "RMAD_PI_<key> indexes the name table");
}

static void test_defaults(void)
{
	struct rmad_params p;
	int all_default = 1;

	memset(&p, 0xa5, sizeof(p));
	rmad_params_defaults(&p);
	ok(!strcmp(p.rundir, "") && !strcmp(p.provider, "shm") &&
	   !strcmp(p.core, "auto") && !strcmp(p.allow_users, "") &&
	   !strcmp(p.allow_users, ""), "string defaults");
	ok(p.spin_us == 20000 && p.busy_poll == 0 && p.idle_poll_us == 1000 &&
	   p.client_spin_us == 50 && p.log_level == RMAD_LOG_WARN,
	   "polling and log defaults");
	ok(p.max_clients == 64 && p.ring_entries == 1024 &&
	   p.op_pool == 4096 && p.client_op_pool == 64 &&
	   p.target_pool == 1024 && p.max_windows == 32768 &&
	   p.max_jobs == 16, "segment sizing defaults");
	ok(p.staging_size == 1048576 && p.am_buf_size == 8192 &&
	   p.am_recv_bufs == 64 && p.am_send_bufs == 256,
	   "buffer defaults");
	ok(p.idle_exit_ms == 2000 && p.connect_timeout_ms == 20000 &&
	   p.stats_interval_ms == 0 && p.heartbeat_ms == 250 &&
	   p.heartbeat_timeout_ms == 1500 && p.heartbeat_idle_ms == 2000,
	   "misc defaults");
	for (int i = 0; i < RMAD_NPARAMS; i++)
		if (p.src[i] != RMAD_PSRC_DEFAULT)
			all_default = 0;
	ok(all_default, "every source is 'default'");
}

static void test_types(void)
{
	struct rmad_params p;
	char err[512] = "";
	char longstr[300];

	/* INT */
	good("spin_us", "0");
	good("spin_us", "60000000");
	good("connect_timeout_ms", "3600000");
	bad("spin_us", "");
	bad("spin_us", "12x");
	bad("spin_us", " 12");
	bad("spin_us", "12 ");
	bad("spin_us", "0x10");
	bad("spin_us", "1.5");
	bad("spin_us", "-1");
	bad("spin_us", "60000001");
	bad("spin_us", "99999999999999999999999999");
	bad("spin_us", "-99999999999999999999999999");
	bad("idle_poll_us", "9");
	bad("max_clients", "0");
	bad("connect_timeout_ms", "3600001");
	bad("connect_timeout_ms", "99");
	rmad_params_defaults(&p);
	rmad_params_set(&p, "max_clients", "0", err, sizeof(err));
	ok(!strcmp(err, "bad value '0' for 'max_clients' "
		   "(expected integer 1..4096)"), "INT message: %s", err);

	/* INT that must be a power of two */
	good("ring_entries", "16");
	good("ring_entries", "2048");
	good("ring_entries", "65536");
	bad("ring_entries", "1000");
	bad("ring_entries", "8");
	bad("ring_entries", "131072");
	rmad_params_set(&p, "ring_entries", "1000", err, sizeof(err));
	ok(strstr(err, "power of two") != NULL,
	   "ring_entries message says power of two: %s", err);

	/* BOOL */
	{
		static const char *const t[] = { "true", "yes", "on", "1",
						  "TRUE", "Yes" };
		static const char *const f[] = { "false", "no", "off", "0",
						  "OFF" };
		int all = 1;

		for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
			rmad_params_defaults(&p);
			if (set(&p, "busy_poll", t[i]) || p.busy_poll != 1)
				all = 0;
		}
		for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
			p.busy_poll = 1;
			if (set(&p, "busy_poll", f[i]) || p.busy_poll != 0)
				all = 0;
		}
		ok(all, "every boolean spelling parses to the right value");
	}
	bad("busy_poll", "");
	bad("busy_poll", "maybe");
	bad("busy_poll", "2");
	bad("busy_poll", "truex");

	/* SIZE */
	rmad_params_defaults(&p);
	ok(!set(&p, "staging_size", "4k") && p.staging_size == 4096,
	   "4k = 4096");
	ok(!set(&p, "staging_size", "3M") && p.staging_size == 3 << 20,
	   "3M = 3 MiB");
	ok(!set(&p, "staging_size", "1g") && p.staging_size == 1 << 30,
	   "1g = 1 GiB");
	ok(!set(&p, "staging_size", "65536") && p.staging_size == 65536,
	   "plain bytes");
	ok(!set(&p, "am_buf_size", "1K") && p.am_buf_size == 1024,
	   "am_buf_size 1K");
	bad("staging_size", "");
	bad("staging_size", "k");
	bad("staging_size", "3k");
	bad("staging_size", "4095");
	bad("staging_size", "2G");
	bad("staging_size", "1t");
	bad("staging_size", "1kb");
	bad("staging_size", "1 k");
	bad("staging_size", "-4k");
	bad("staging_size", "1.5m");
	bad("staging_size", "18446744073709551616");
	bad("staging_size", "18014398509481984k");
	bad("am_buf_size", "1023");
	bad("am_buf_size", "2m");
	bad("mesh_port", "0");
	bad("mesh_port", "65536");
	bad("mesh_self", "-2");

	/* STRING */
	memset(longstr, 'x', 255);
	longstr[255] = '\0';
	rmad_params_defaults(&p);
	ok(!set(&p, "allow_users", longstr) && strlen(p.allow_users) == 255,
	   "255-character string fits");
	longstr[255] = 'x';
	longstr[256] = '\0';
	bad("allow_users", longstr);
	ok(!set(&p, "provider", "tcp;ofi_rxm") &&
	   !strcmp(p.provider, "tcp;ofi_rxm"), "string with ';'");
	ok(!set(&p, "provider", "") && !strcmp(p.provider, ""),
	   "empty string");

	/* LEVEL */
	rmad_params_defaults(&p);
	ok(!set(&p, "log_level", "debug") && p.log_level == RMAD_LOG_DEBUG,
	   "log_level debug");
	ok(!set(&p, "log_level", "0") && p.log_level == RMAD_LOG_ERROR,
	   "log_level 0");
	bad("log_level", "loud");
	bad("log_level", "4");
	bad("log_level", "");

	/* keys */
	rmad_params_defaults(&p);
	ok(rmad_params_set(&p, "no_such_key", "1", err, sizeof(err)) ==
	   RMAD_ERR_ARG && !strcmp(err, "unknown key 'no_such_key'"),
	   "unknown key refused: %s", err);
	ok(rmad_params_set(&p, "spin_us", NULL, err, sizeof(err)) ==
	   RMAD_ERR_ARG, "NULL value refused");
	ok(rmad_params_set(&p, "spin_us", "x", NULL, 0) == RMAD_ERR_ARG,
	   "NULL err buffer is fine");
	ok(!set(&p, "spin_us", "5") && p.src[RMAD_PI_spin_us] ==
	   RMAD_PSRC_SET, "a set value is marked 'set'");
}

static void test_file(void)
{
	struct rmad_params p, before;
	char err[1024] = "", want[1024];
	const char *path;
	int rc;

	path = write_file("good.conf",
		"# a comment line\n"
		"\n"
		"   \t\n"
		"  spin_us=100   # trailing comment\n"
		"provider = \"tcp;ofi_rxm\"   # quoted\n"
		"stats_interval_ms = \"5\" # x\n"
		"rundir = \"a # b\"\n"
		"core = 3#4\n"
		"busy_poll = yes\n"
		"log_level\t=\tdebug\n"
		"staging_size = 2m\r\n"
		"rundir = \"\"\n"
		"allow_users = alice,1001  \n"
		"   # indented comment\n"
		"max_jobs = 8\n"
		"max_jobs = 9\n"
		"connect_timeout_ms = 7000");
	rmad_params_defaults(&p);
	rc = rmad_params_load_file(&p, path, err, sizeof(err));
	ok(rc == 0, "file with comments, quotes and blanks loads (%d %s)",
	   rc, err);
	ok(p.spin_us == 100, "unquoted value before a trailing comment");
	ok(!strcmp(p.provider, "tcp;ofi_rxm"), "quoted value");
	ok(p.stats_interval_ms == 5, "quoted number");
	ok(!strcmp(p.core, "3#4"), "'#' inside a word is kept");
	ok(p.busy_poll == 1 && p.log_level == RMAD_LOG_DEBUG,
	   "bool and level from the file, tab separated");
	ok(p.staging_size == 2 << 20, "CRLF line ending");
	ok(!strcmp(p.rundir, "") && !strcmp(p.allow_users, "alice,1001"),
	   "empty quoted value; trailing blanks trimmed");
	ok(p.max_jobs == 9, "a repeated key: the last one wins");
	ok(p.connect_timeout_ms == 7000, "last line without newline");
	ok(p.src[RMAD_PI_spin_us] == RMAD_PSRC_FILE &&
	   p.src[RMAD_PI_max_clients] == RMAD_PSRC_DEFAULT,
	   "sources: file and default");

	path = write_file("unknown.conf",
		"spin_us = 5\n"
		"# comment\n"
		"bogus = 1\n");
	rmad_params_defaults(&p);
	before = p;
	rc = rmad_params_load_file(&p, path, err, sizeof(err));
	snprintf(want, sizeof(want), "%s:3: unknown key 'bogus'", path);
	ok(rc == RMAD_ERR_ARG && !strcmp(err, want),
	   "unknown key names file and line: %s", err);
	ok(!memcmp(&p, &before, sizeof(p)),
	   "a bad file applies nothing, not even its good lines");

	path = write_file("badval.conf", "\nspin_us = fast\n");
	rc = rmad_params_load_file(&p, path, err, sizeof(err));
	snprintf(want, sizeof(want),
		 "%s:2: bad value 'fast' for 'spin_us' "
		 "(expected integer 0..60000000)", path);
	ok(rc == RMAD_ERR_ARG && !strcmp(err, want), "bad value: %s", err);

	path = write_file("pow2.conf", "ring_entries = 100\n");
	rc = rmad_params_load_file(&p, path, err, sizeof(err));
	ok(rc == RMAD_ERR_ARG && strstr(err, ":1: ") &&
	   strstr(err, "power of two"), "non-power-of-two: %s", err);

	path = write_file("noeq.conf", "spin_us 5\n");
	rc = rmad_params_load_file(&p, path, err, sizeof(err));
	snprintf(want, sizeof(want), "%s:1: ", path);
	ok(rc == RMAD_ERR_ARG && !strncmp(err, want, strlen(want)),
	   "line without '=': %s", err);

	path = write_file("nokey.conf", "= 5\n");
	rc = rmad_params_load_file(&p, path, err, sizeof(err));
	snprintf(want, sizeof(want), "%s:1: ", path);
	ok(rc == RMAD_ERR_ARG && !strncmp(err, want, strlen(want)) &&
	   strstr(err, "key"), "line without a key: %s", err);

	path = write_file("quote.conf", "\n\nprovider = \"shm\n");
	rc = rmad_params_load_file(&p, path, err, sizeof(err));
	ok(rc == RMAD_ERR_ARG && strstr(err, ":3: "),
	   "unterminated quote: %s", err);

	path = write_file("junk.conf", "provider = \"shm\" tcp\n");
	rc = rmad_params_load_file(&p, path, err, sizeof(err));
	ok(rc == RMAD_ERR_ARG && strstr(err, ":1: "),
	   "junk after a quoted value: %s", err);

	snprintf(want, sizeof(want), "%s/does-not-exist.conf", tmpdir);
	rc = rmad_params_load_file(&p, want, err, sizeof(err));
	ok(rc == 1 && !memcmp(&p, &before, sizeof(p)),
	   "missing file returns 1 and changes nothing");

	rc = rmad_params_load_file(&p, tmpdir, err, sizeof(err));
	ok(rc == RMAD_ERR_ARG && strstr(err, tmpdir),
	   "a directory is an I/O error naming it: %s", err);
}

static void test_env(void)
{
	struct rmad_params p, before;
	char err[512] = "";
	const char *path;
	int rc;

	path = write_file("env.conf", "spin_us = 100\nmax_jobs = 7\n");
	rmad_params_defaults(&p);
	rmad_params_load_file(&p, path, err, sizeof(err));
	setenv("RMAD_SPIN_US", "777", 1);
	setenv("RMAD_STAGING_SIZE", "64k", 1);
	rc = rmad_params_load_env(&p, err, sizeof(err));
	ok(rc == 0 && p.spin_us == 777, "RMAD_SPIN_US beats the file");
	ok(p.staging_size == 65536 && p.max_jobs == 7,
	   "other env and file values kept");
	ok(p.src[RMAD_PI_spin_us] == RMAD_PSRC_ENV &&
	   p.src[RMAD_PI_max_jobs] == RMAD_PSRC_FILE,
	   "sources: env and file");

	setenv("RMAD_MAX_CLIENTS", "lots", 1);
	before = p;
	rc = rmad_params_load_env(&p, err, sizeof(err));
	ok(rc == RMAD_ERR_ARG && strstr(err, "RMAD_MAX_CLIENTS") &&
	   strstr(err, "lots"), "bad env value names the variable: %s",
	   err);
	ok(!memcmp(&p, &before, sizeof(p)), "bad env value changes nothing");
	unsetenv("RMAD_MAX_CLIENTS");
	unsetenv("RMAD_SPIN_US");
	unsetenv("RMAD_STAGING_SIZE");
}

static void test_reload(void)
{
	struct rmad_params cur, fresh;
	int n;

	rmad_params_defaults(&cur);
	rmad_params_defaults(&fresh);
	set(&fresh, "spin_us", "10");
	set(&fresh, "log_level", "info");
	set(&fresh, "max_clients", "128");
	set(&fresh, "provider", "efa");
	n = rmad_params_apply_reload(&cur, &fresh);
	ok(n == 2, "two reloadable keys changed (%d)", n);
	ok(cur.spin_us == 10 && cur.log_level == RMAD_LOG_INFO,
	   "reloadable keys copied");
	ok(cur.max_clients == 64 && !strcmp(cur.provider, "shm"),
	   "non-reloadable keys kept");
	ok(cur.src[RMAD_PI_spin_us] == RMAD_PSRC_SET &&
	   cur.src[RMAD_PI_max_clients] == RMAD_PSRC_DEFAULT,
	   "sources follow the reloaded values only");
	ok(rmad_params_apply_reload(&cur, &fresh) == 0,
	   "a second reload changes nothing");
}

static int has_every_key(const char *text, const char *fmt)
{
	char needle[128];
	int missing = 0;

	for (int i = 0; i < rmad_params_count(); i++) {
		snprintf(needle, sizeof(needle), fmt, rmad_params_name(i));
		if (!strstr(text, needle)) {
			diag("missing '%s'", needle);
			missing++;
		}
	}
	return !missing;
}

/* Parse printed lines back: what we print must be what we accept. */
static int load_text(struct rmad_params *p, const char *text)
{
	char err[512];
	const char *path = write_file("roundtrip.conf", text);
	int rc = rmad_params_load_file(p, path, err, sizeof(err));

	if (rc)
		diag("%s", err);
	return rc;
}

static int same_values(const struct rmad_params *a,
		       const struct rmad_params *b)
{
	struct rmad_params x = *a, y = *b;

	memset(x.src, 0, sizeof(x.src));
	memset(y.src, 0, sizeof(y.src));
	return !memcmp(&x, &y, sizeof(x));
}

static void test_print(void)
{
	struct rmad_params p, back, def;
	char *s, *conf, *line;
	size_t k = 0;

	rmad_params_defaults(&def);
	rmad_params_defaults(&p);
	set(&p, "allow_users", "a:1, b:2");
	set(&p, "core", "#3");
	set(&p, "staging_size", "12345");
	set(&p, "busy_poll", "on");
	p.src[RMAD_PI_core] = RMAD_PSRC_FILE;
	p.src[RMAD_PI_connect_timeout_ms] = RMAD_PSRC_ENV;

	s = print_to_string(&p, RMAD_PARAMS_FMT_TEXT);
	ok(has_every_key(s, "%s "), "TEXT has every key");
	ok(strstr(s, "# default") && strstr(s, "# file") &&
	   strstr(s, "# env") && strstr(s, "# set"),
	   "TEXT shows every kind of source");
	rmad_params_defaults(&back);
	ok(!load_text(&back, s) && same_values(&p, &back),
	   "TEXT output reads back as a config file with the same values");
	free(s);

	s = print_to_string(&p, RMAD_PARAMS_FMT_JSON);
	ok(has_every_key(s, "\"%s\": "), "JSON has every key");
	ok(s[0] == '{' && strstr(s, "\"allow_users\": \"a:1, b:2\"") &&
	   strstr(s, "\"busy_poll\": true") &&
	   strstr(s, "\"staging_size\": 12345") &&
	   strstr(s, "\"log_level\": \"warn\"") &&
	   !strcmp(s + strlen(s) - 2, "}\n"), "JSON values");
	free(s);

	s = print_to_string(&p, RMAD_PARAMS_FMT_MAN);
	ok(has_every_key(s, ".TP\n.B %s\n"), "MAN has a .TP entry per key");
	ok(strstr(s, "reloaded on SIGHUP") && strstr(s, "power of two"),
	   "MAN shows reload and range notes");
	free(s);

	conf = print_to_string(&p, RMAD_PARAMS_FMT_CONF);
	ok(has_every_key(conf, "\n# %s = "), "CONF has every key");
	ok(strstr(conf, "RMAD_<KEY>") && strstr(conf, "SIGHUP"),
	   "CONF header explains precedence and reload");
	/* uncomment the default lines and load them: must be the defaults */
	s = calloc(1, strlen(conf) + 1);
	for (line = strtok(conf, "\n"); line && s;
	     line = strtok(NULL, "\n")) {
		if (strncmp(line, "# ", 2))
			continue;
		for (int i = 0; i < rmad_params_count(); i++) {
			size_t n = strlen(rmad_params_name(i));

			if (!strncmp(line + 2, rmad_params_name(i), n) &&
			    !strncmp(line + 2 + n, " = ", 3)) {
				k += (size_t)sprintf(s + k, "%s\n", line + 2);
				break;
			}
		}
	}
	rmad_params_defaults(&back);
	set(&back, "spin_us", "1");
	ok(s && !load_text(&back, s) && same_values(&def, &back),
	   "CONF default lines, uncommented, load as the defaults");
	free(s);
	free(conf);
}

static char *read_whole(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *in = fopen(path, "r"), *out;
	int c;

	if (!in)
		return NULL;
	out = open_memstream(&buf, &len);
	if (out) {
		while ((c = fgetc(in)) != EOF)
			fputc(c, out);
		fclose(out);
	}
	fclose(in);
	return buf;
}

/*
 * The shipped etc/rmad.conf and the KEYS of rmad.conf(5) are generated
 * from the table.  Stale text is not a failure (t/params-docs.sh fails
 * on a missing key), but say so loudly so someone regenerates it.
 */
static void check_shipped_docs(void)
{
	static const char begin[] = ".\\\" BEGIN KEYS\n";
	static const char end[] = ".\\\" END KEYS\n";
	const char *srcdir = getenv("srcdir");
	char path[1024], *want, *have, *b, *e;

	if (!srcdir || !*srcdir)
		return;
	snprintf(path, sizeof(path), "%s/etc/rmad.conf", srcdir);
	want = print_to_string(NULL, RMAD_PARAMS_FMT_CONF);
	have = read_whole(path);
	if (have && strcmp(have, want))
		diag("%s differs from rmad_params_print(CONF): regenerate it",
		     path);
	free(have);
	free(want);

	snprintf(path, sizeof(path), "%s/man/rmad.conf.5", srcdir);
	want = print_to_string(NULL, RMAD_PARAMS_FMT_MAN);
	have = read_whole(path);
	b = have ? strstr(have, begin) : NULL;
	if (b)
		b += strlen(begin);
	e = b ? strstr(b, end) : NULL;
	if (have && (!e || (size_t)(e - b) != strlen(want) ||
		     strncmp(b, want, strlen(want))))
		diag("KEYS of %s differ from rmad_params_print(MAN): "
		     "regenerate them", path);
	free(have);
	free(want);
}

int main(void)
{
	const char *t = getenv("TMPDIR");

	alarm_after(30);
	rmad_log_init("test_params", RMAD_LOG_WARN);
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_params.XXXXXX",
		 t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir)) {
		printf("Bail out! mkdtemp %s failed\n", tmpdir);
		return 1;
	}

	test_table();
	test_defaults();
	test_types();
	test_file();
	test_env();
	test_reload();
	test_print();
	check_shipped_docs();

	for (int i = 0; i < nmade; i++)
		unlink(made[i]);
	if (rmdir(tmpdir) < 0)
		diag("could not remove %s", tmpdir);
	return done_testing();
}
