/* The host side of `pipegemm trace` (src/adapters/trace_format.c) on made-up
 * records laid out as a traced kernel lays them out (src/trace_records.h): reading
 * a buffer, the clock rate and the SMs on one time axis, every invariant
 * held and each one broken, the summary's figures worked out by hand, and
 * the JSON. No GPU.
 *
 * It also writes two JSON files for tests/test_trace.py, which checks their
 * structure: PG_TRACE_SYNTHETIC_JSON, simulated pipelines of both kinds
 * (one thread that copies and computes; producer and consumers over two
 * output tiles), and the committed tests/data/trace-fixture.json, whose
 * records are fixed here: the writer must reproduce that file byte for
 * byte (PG_UPDATE_FIXTURE=1 rewrites it after a deliberate change). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "read_file.h"
#include "adapters/trace_format.h"

/* ---- made-up buffers ------------------------------------------------------------ */

typedef struct {
  unsigned char *bytes;
  size_t size;
  int capacity;
} fake_buffer;

typedef struct {
  pg_trace_track *head;
  pg_trace_record *records;
  int capacity;
  int count;
  /* The SM's clock against the GPU's timer: gt = gt0 + (clock - clock0) / ghz. */
  long long clock0, gt0;
  double ghz;
} fake_track;

static void fake_init(fake_buffer *b, int blocks, int stride, int capacity) {
  b->size = pg_trace_bytes(blocks, capacity);
  b->bytes = calloc(1, b->size);
  assert_non_null(b->bytes);
  b->capacity = capacity;
  const pg_trace_header header = {blocks, stride, capacity, 0};
  memcpy(b->bytes, &header, sizeof header);
}

static fake_track fake_open(fake_buffer *b, int sample, int role, int block, int smid,
                            long long clock0, long long gt0, double ghz) {
  fake_track t;
  memset(&t, 0, sizeof t);
  const size_t offset = pg_trace_track_offset(pg_trace_track_index(sample, role), b->capacity);
  t.head = (pg_trace_track *)(b->bytes + offset);
  t.records = (pg_trace_record *)(t.head + 1);
  t.capacity = b->capacity;
  t.clock0 = clock0;
  t.gt0 = gt0;
  t.ghz = ghz;
  t.head->role = role;
  t.head->block = block;
  t.head->smid = smid;
  t.head->begin_clock = clock0;
  t.head->begin_globaltimer = gt0;
  return t;
}

/* One event, as a mark writes it: dropped (but counted) past the room. */
static void put(fake_track *t, int event, int slot, int k_tile, int tile, long long clock) {
  if (t->count < t->capacity) {
    const pg_trace_record r = {clock, k_tile, (unsigned char)event, (unsigned char)slot,
                               (unsigned short)tile};
    t->records[t->count] = r;
  }
  t->head->count = ++t->count;
}

static void fake_close(fake_track *t, long long clock) {
  t->head->end_clock = clock;
  t->head->end_globaltimer = t->gt0 + llround((double)(clock - t->clock0) / t->ghz);
}

/* Thread 0 of a kernel whose every thread copies and computes, in
 * 05_cp_async.cu's order (stages >= 2): copies land `latency` ticks after
 * they are issued. Returns the clock at the end. */
static long long simulate_ring(fake_track *t, int stages, int k_tiles, long long clock,
                               long long latency, long long compute) {
  long long *landed = calloc((size_t)k_tiles + 1, sizeof *landed);
  assert_non_null(landed);
  for (int s = 0; s < stages - 1 && s < k_tiles; ++s, clock += 10) {
    put(t, PG_TRACE_ISSUE, s % stages, s, 0, clock);
    landed[s] = clock + latency;
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    put(t, PG_TRACE_DATA_WAIT, kt % stages, kt, 0, clock);
    clock = (landed[kt] > clock ? landed[kt] : clock) + 5;
    put(t, PG_TRACE_READY, kt % stages, kt, 0, clock);
    if (kt > 0) put(t, PG_TRACE_RELEASE, (kt - 1) % stages, kt - 1, 0, clock);
    const int next = kt + stages - 1;
    if (next < k_tiles) {
      clock += 5;
      put(t, PG_TRACE_ISSUE, next % stages, next, 0, clock);
      landed[next] = clock + latency;
    }
    put(t, PG_TRACE_COMPUTE_BEGIN, kt % stages, kt, 0, clock += 10);
    put(t, PG_TRACE_COMPUTE_END, kt % stages, kt, 0, clock += compute);
  }
  put(t, PG_TRACE_EPILOGUE_BEGIN, 0, 0, 0, clock += 5);
  put(t, PG_TRACE_EPILOGUE_END, 0, 0, 0, clock += 200);
  free(landed);
  return clock;
}

/* A producer and the consumers of one block, as in 10_warp_specialized.cu
 * and 12_tma_ws.cu, over `tiles` output tiles: the producer runs up to
 * `stages` K steps ahead, waiting for a slot's release. */
static void simulate_split(fake_track *producer, fake_track *consumer, int stages, int k_tiles,
                           int tiles, long long clock, long long latency, long long compute) {
  const int steps = k_tiles * tiles;
  long long *landed = calloc((size_t)steps + 1, sizeof *landed);
  long long *released = calloc((size_t)steps + 1, sizeof *released);
  assert_non_null(landed);
  assert_non_null(released);
  long long p = clock, c = clock + 50;
  for (int s = 0; s < steps; ++s) {
    const int slot = s % stages, kt = s % k_tiles, tile = s / k_tiles;
    if (s >= stages) {
      put(producer, PG_TRACE_SLOT_WAIT, slot, kt, tile, p);
      if (released[s - stages] > p) p = released[s - stages];
      p += 3;
    }
    put(producer, PG_TRACE_ISSUE, slot, kt, tile, p);
    landed[s] = p + latency;
    p += 20;
    put(consumer, PG_TRACE_DATA_WAIT, slot, kt, tile, c);
    c = (landed[s] > c ? landed[s] : c) + 4;
    put(consumer, PG_TRACE_READY, slot, kt, tile, c);
    put(consumer, PG_TRACE_COMPUTE_BEGIN, slot, kt, tile, c += 2);
    put(consumer, PG_TRACE_COMPUTE_END, slot, kt, tile, c += compute);
    put(consumer, PG_TRACE_RELEASE, slot, kt, tile, c += 3);
    released[s] = c;
    if (kt == k_tiles - 1) {
      put(consumer, PG_TRACE_EPILOGUE_BEGIN, 0, 0, tile, c += 2);
      put(consumer, PG_TRACE_EPILOGUE_END, 0, 0, tile, c += 150);
    }
  }
  fake_close(producer, p + 10);
  fake_close(consumer, c + 10);
  free(landed);
  free(released);
}

static void parse_ok(const fake_buffer *b, int stages, int k_tiles, pgc_trace *trace) {
  char err[200] = "";
  const int rc = pgc_trace_parse(b->bytes, b->size, stages, k_tiles, 1.0, trace, err, sizeof err);
  if (rc != 0) print_error("parse: %s\n", err);
  assert_int_equal(rc, 0);
}

static int problems_of(const fake_buffer *b, int stages, int k_tiles, pgc_trace_problems *p) {
  pgc_trace trace;
  parse_ok(b, stages, k_tiles, &trace);
  const int count = pgc_trace_check(&trace, p);
  pgc_trace_free(&trace);
  return count;
}

/* Exactly one violation, whose text holds `part`. */
static void expect_one_problem(const fake_buffer *b, int stages, int k_tiles, const char *part) {
  pgc_trace_problems p;
  const int count = problems_of(b, stages, k_tiles, &p);
  for (int i = 0; i < count && i < PGC_TRACE_MAX_PROBLEMS; ++i)
    if (count != 1 || !strstr(p.text[0], part)) print_error("problem: %s\n", p.text[i]);
  assert_int_equal(count, 1);
  assert_non_null(strstr(p.text[0], part));
}

/* ---- the tiny trace whose figures are worked out by hand ------------------------ *
 * One block on SM 5, two stages, two K tiles, 2 clock ticks per ns (the
 * track's pairs span 100 us, enough to measure the rate):
 *   copy 0 issued 100, wait 110, ready 200; copy 1 issued 210;
 *   compute 0 220-320; wait 330, ready 400; compute 1 410-510.
 * In flight: 1 over 100-200 and 1 over 210-400, of 300 ticks: mean 290/300.
 * Bubble: waits 90 + 70 over the loop 110-510: 160/400. Per K tile 190
 * ticks (95 ns), compute 100 ticks (50 ns), wait 80 ticks (40 ns). */
static void make_tiny(fake_buffer *b) {
  fake_init(b, 1, 1, 16);
  fake_track t = fake_open(b, 0, PG_TRACE_ROLE_BLOCK, 0, 5, 50, 1000000, 2.0);
  put(&t, PG_TRACE_ISSUE, 0, 0, 0, 100);
  put(&t, PG_TRACE_DATA_WAIT, 0, 0, 0, 110);
  put(&t, PG_TRACE_READY, 0, 0, 0, 200);
  put(&t, PG_TRACE_ISSUE, 1, 1, 0, 210);
  put(&t, PG_TRACE_COMPUTE_BEGIN, 0, 0, 0, 220);
  put(&t, PG_TRACE_COMPUTE_END, 0, 0, 0, 320);
  put(&t, PG_TRACE_DATA_WAIT, 1, 1, 0, 330);
  put(&t, PG_TRACE_READY, 1, 1, 0, 400);
  put(&t, PG_TRACE_RELEASE, 0, 0, 0, 400);
  put(&t, PG_TRACE_COMPUTE_BEGIN, 1, 1, 0, 410);
  put(&t, PG_TRACE_COMPUTE_END, 1, 1, 0, 510);
  put(&t, PG_TRACE_EPILOGUE_BEGIN, 0, 0, 0, 520);
  put(&t, PG_TRACE_EPILOGUE_END, 0, 0, 0, 600);
  fake_close(&t, 50 + 200000);
}

static void test_tiny_trace_times(void **state) {
  (void)state;
  fake_buffer b;
  make_tiny(&b);
  pgc_trace trace;
  parse_ok(&b, 2, 2, &trace);
  assert_int_equal(trace.track_count, 1);
  assert_true(trace.ghz_measured);
  assert_true(fabs(trace.ghz - 2.0) < 1e-9);
  const pgc_trace_track *t = &trace.tracks[0];
  assert_int_equal(t->smid, 5);
  assert_int_equal(t->count, 13);
  assert_int_equal(t->dropped, 0);
  assert_int_equal(pgc_trace_ns(&trace, t, 50), 0); /* the track's start is time 0 */
  assert_int_equal(pgc_trace_ns(&trace, t, 100), 25);
  assert_int_equal(pgc_trace_ns(&trace, t, 510), 230);
  pgc_trace_problems p;
  assert_int_equal(pgc_trace_check(&trace, &p), 0);
  pgc_trace_free(&trace);
  free(b.bytes);
}

static void test_tiny_trace_summary(void **state) {
  (void)state;
  fake_buffer b;
  make_tiny(&b);
  pgc_trace trace;
  parse_ok(&b, 2, 2, &trace);
  pgc_trace_summary s;
  assert_int_equal(pgc_trace_summarise(&trace, &s), 0);
  assert_int_equal(s.blocks, 1);
  assert_int_equal(s.sms, 1);
  assert_int_equal(s.records, 13);
  assert_int_equal(s.dropped, 0);
  const pgc_trace_block_summary *block = &s.per_block[0];
  assert_int_equal(block->smid, 5);
  assert_int_equal(block->steps, 2);
  assert_int_equal(block->in_flight_max, 1);
  assert_true(fabs(block->in_flight_mean - 290.0 / 300.0) < 1e-12);
  assert_true(fabs(block->bubble - 0.4) < 1e-12);
  assert_true(fabs(block->k_tile_ns - 95.0) < 1e-9);
  assert_true(fabs(block->compute_ns - 50.0) < 1e-9);
  assert_true(fabs(block->wait_ns - 40.0) < 1e-9);
  assert_true(fabs(block->start_us - 0.0) < 1e-12);
  assert_true(fabs(block->span_us - 0.275) < 1e-12); /* 50..600: 550 ticks */
  assert_true(fabs(s.bubble - 0.4) < 1e-12);
  assert_true(fabs(s.k_tile_ns - 95.0) < 1e-9);
  assert_int_equal(s.in_flight_max, 1);
  pgc_trace_summary_free(&s);
  pgc_trace_free(&trace);
  free(b.bytes);
}

/* The JSON of the tiny trace, read as text: the spans at their times. */
static void test_tiny_trace_json(void **state) {
  (void)state;
  fake_buffer b;
  make_tiny(&b);
  pgc_trace trace;
  parse_ok(&b, 2, 2, &trace);
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  assert_non_null(out);
  const pgc_trace_meta meta = {"cp_async", 2, 128, 128, 16, "a GPU", "pipegemm trace", "today",
                               1, 1, 0.5, 0.25};
  assert_int_equal(pgc_trace_write_json(out, &trace, &meta), 0);
  assert_int_equal(fclose(out), 0);
  static const char *const parts[] = {
      "{\"traceEvents\":[\n",
      "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":6,\"tid\":0,\"args\":{\"name\":\"SM 5\"}}",
      "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":6,\"tid\":0,\"args\":{\"name\":\"block 0 block\"}}",
      "\"args\":{\"name\":\"block 0 copies into stage 1\"}}",
      "{\"name\":\"copy k0 s0\",\"cat\":\"copy\",\"ph\":\"X\",\"ts\":0.025,\"dur\":0.050,"
      "\"pid\":6,\"tid\":2,\"args\":{\"k_tile\":0,\"stage\":0,\"tile\":0}}",
      "{\"name\":\"copy k1 s1\",\"cat\":\"copy\",\"ph\":\"X\",\"ts\":0.080,\"dur\":0.095,"
      "\"pid\":6,\"tid\":3,",
      "{\"name\":\"wait k1 s1\",\"cat\":\"wait\",\"ph\":\"X\",\"ts\":0.140,\"dur\":0.035,",
      "{\"name\":\"compute k1 s1\",\"cat\":\"compute\",\"ph\":\"X\",\"ts\":0.180,\"dur\":0.050,",
      "{\"name\":\"release k0 s0\",\"cat\":\"release\",\"ph\":\"i\",\"ts\":0.175,\"s\":\"t\",",
      "{\"name\":\"epilogue\",\"cat\":\"epilogue\",\"ph\":\"X\",\"ts\":0.235,\"dur\":0.040,",
      "\"displayTimeUnit\":\"ns\"",
      "\"variant\":\"cp_async\"",
      "\"clock_ghz\":\"2.0000\"",
      "\"traced_ms\":\"0.5000\"",
  };
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; ++i) {
    if (!strstr(text, parts[i])) print_error("JSON lacks %s\n%s\n", parts[i], text);
    assert_non_null(strstr(text, parts[i]));
  }
  free(text);
  pgc_trace_free(&trace);
  free(b.bytes);
}

/* ---- reading -------------------------------------------------------------------- */

static void test_parse_rejects(void **state) {
  (void)state;
  char err[200];
  pgc_trace trace;
  unsigned char small[8] = {0};
  assert_int_equal(pgc_trace_parse(small, sizeof small, 2, 4, 1.0, &trace, err, sizeof err), -1);
  assert_non_null(strstr(err, "no header"));
  fake_buffer b;
  fake_init(&b, 2, 1, 4);
  /* A header that promises more than the buffer holds. */
  assert_int_equal(pgc_trace_parse(b.bytes, b.size - 1, 2, 4, 1.0, &trace, err, sizeof err), -1);
  assert_non_null(strstr(err, "does not fit"));
  /* A role no kernel writes. */
  fake_track t = fake_open(&b, 1, PG_TRACE_ROLE_CONSUMER, 3, 0, 0, 0, 1.0);
  t.head->role = 9;
  assert_int_equal(pgc_trace_parse(b.bytes, b.size, 2, 4, 1.0, &trace, err, sizeof err), -1);
  assert_non_null(strstr(err, "role 9"));
  /* Nothing recorded at all reads as no tracks. */
  t.head->role = PG_TRACE_ROLE_NONE;
  parse_ok(&b, 2, 4, &trace);
  assert_int_equal(trace.track_count, 0);
  pgc_trace_free(&trace);
  free(b.bytes);
}

/* Blocks whose SM clocks start far apart begin together on the timeline;
 * tracks too short to measure the rate fall back on the caller's. */
static void test_clock_alignment(void **state) {
  (void)state;
  fake_buffer b;
  fake_init(&b, 2, 4, 2000);
  fake_track t0 = fake_open(&b, 0, PG_TRACE_ROLE_BLOCK, 0, 3, 1000000, 5000000, 1.5);
  fake_track t1 = fake_open(&b, 1, PG_TRACE_ROLE_BLOCK, 4, 7, 90000000, 5000300, 1.5);
  fake_close(&t0, simulate_ring(&t0, 3, 40, 1000000 + 30, 900, 700));
  fake_close(&t1, simulate_ring(&t1, 3, 40, 90000000 + 30, 900, 700));
  pgc_trace trace;
  parse_ok(&b, 3, 40, &trace);
  assert_true(trace.ghz_measured);
  assert_true(fabs(trace.ghz - 1.5) < 1e-3);
  assert_int_equal(pgc_trace_ns(&trace, &trace.tracks[0], 1000000), 0);
  const long long start1 = pgc_trace_ns(&trace, &trace.tracks[1], 90000000);
  assert_true(start1 >= 299 && start1 <= 301); /* 300 ns after the first */
  pgc_trace_free(&trace);

  /* A few hundred ticks: the pairs say nothing; the fallback rate counts. */
  fake_buffer s;
  make_tiny(&s);
  pg_trace_track *head = (pg_trace_track *)(s.bytes + pg_trace_track_offset(0, s.capacity));
  head->end_clock = 700;
  head->end_globaltimer = head->begin_globaltimer + 300;
  char err[200];
  assert_int_equal(pgc_trace_parse(s.bytes, s.size, 2, 2, 1.25, &trace, err, sizeof err), 0);
  assert_false(trace.ghz_measured);
  assert_true(fabs(trace.ghz - 1.25) < 1e-12);
  pgc_trace_free(&trace);
  free(s.bytes);
  free(b.bytes);
}

/* ---- invariants ------------------------------------------------------------------ */

/* Simulated pipelines of both kinds, at every depth, obey every invariant;
 * with copies slower than compute the ring fills: stages - 1 copies in
 * flight where one thread issues after its wait, all `stages` where a
 * producer runs ahead. */
static void test_simulated_pipelines_hold(void **state) {
  (void)state;
  for (int stages = 2; stages <= 8; ++stages) {
    fake_buffer ring, split;
    fake_init(&ring, 1, 1, 2000);
    fake_track t = fake_open(&ring, 0, PG_TRACE_ROLE_BLOCK, 0, 1, 0, 0, 1.0);
    fake_close(&t, simulate_ring(&t, stages, 33, 10, 1500, 400));
    fake_init(&split, 1, 1, 2000);
    fake_track p = fake_open(&split, 0, PG_TRACE_ROLE_PRODUCER, 0, 2, 0, 0, 1.0);
    fake_track c = fake_open(&split, 0, PG_TRACE_ROLE_CONSUMER, 0, 2, 0, 0, 1.0);
    simulate_split(&p, &c, stages, 11, 3, 10, 1500, 400);
    pgc_trace_problems problems;
    assert_int_equal(problems_of(&ring, stages, 33, &problems), 0);
    assert_int_equal(problems_of(&split, stages, 11, &problems), 0);

    pgc_trace trace;
    pgc_trace_summary s;
    parse_ok(&ring, stages, 33, &trace);
    assert_int_equal(pgc_trace_summarise(&trace, &s), 0);
    assert_int_equal(s.in_flight_max, stages - 1);
    assert_int_equal(s.per_block[0].steps, 33);
    pgc_trace_summary_free(&s);
    pgc_trace_free(&trace);
    parse_ok(&split, stages, 11, &trace);
    assert_int_equal(pgc_trace_summarise(&trace, &s), 0);
    assert_int_equal(s.in_flight_max, stages);
    assert_int_equal(s.per_block[0].steps, 33);
    pgc_trace_summary_free(&s);
    pgc_trace_free(&trace);
    free(ring.bytes);
    free(split.bytes);
  }
}

/* A two-stage, two-K-tile block with events at the given clocks (-1: left
 * out), one thread: issue 0/1, wait 0/1, ready 0/1, compute begin/end 0/1,
 * release 0. */
typedef struct {
  long long issue[2], wait[2], ready[2], begin[2], end[2], release0;
} two_steps;

static const two_steps good_steps = {{100, 210}, {110, 330}, {200, 400}, {220, 410},
                                     {320, 510}, 400};

static void make_two_steps(fake_buffer *b, const two_steps *s, int slot_of_step1) {
  fake_init(b, 1, 1, 16);
  fake_track t = fake_open(b, 0, PG_TRACE_ROLE_BLOCK, 0, 0, 0, 0, 1.0);
  for (int k = 0; k < 2; ++k) {
    const int slot = k == 1 ? slot_of_step1 : 0;
    if (s->issue[k] >= 0) put(&t, PG_TRACE_ISSUE, slot, k, 0, s->issue[k]);
    if (s->wait[k] >= 0) put(&t, PG_TRACE_DATA_WAIT, slot, k, 0, s->wait[k]);
    if (s->ready[k] >= 0) put(&t, PG_TRACE_READY, slot, k, 0, s->ready[k]);
    if (s->begin[k] >= 0) put(&t, PG_TRACE_COMPUTE_BEGIN, slot, k, 0, s->begin[k]);
    if (s->end[k] >= 0) put(&t, PG_TRACE_COMPUTE_END, slot, k, 0, s->end[k]);
  }
  if (s->release0 >= 0) put(&t, PG_TRACE_RELEASE, 0, 0, 0, s->release0);
  put(&t, PG_TRACE_EPILOGUE_BEGIN, 0, 0, 0, 600);
  put(&t, PG_TRACE_EPILOGUE_END, 0, 0, 0, 700);
  fake_close(&t, 800);
}

static void test_each_invariant_caught(void **state) {
  (void)state;
  fake_buffer b;
  two_steps s = good_steps;
  make_two_steps(&b, &s, 1);
  pgc_trace_problems p;
  assert_int_equal(problems_of(&b, 2, 2, &p), 0);
  free(b.bytes);

  s = good_steps;
  s.ready[1] = 205; /* before copy 1 is issued (210), and before its wait (330) */
  s.wait[1] = 200;
  make_two_steps(&b, &s, 1);
  expect_one_problem(&b, 2, 2, "K step 1: data ready before its copy was issued");
  free(b.bytes);

  s = good_steps;
  s.begin[0] = 150; /* before ready 0 (200) */
  make_two_steps(&b, &s, 1);
  expect_one_problem(&b, 2, 2, "K step 0: compute began before its data was ready");
  free(b.bytes);

  s = good_steps;
  s.end[1] = 405; /* before compute 1 begins (410) */
  make_two_steps(&b, &s, 1);
  expect_one_problem(&b, 2, 2, "compute ended before it began");
  free(b.bytes);

  /* One stage: copy 1 goes into the slot of step 0 before its release at
   * 400, and while copy 0 is still in flight. */
  s = good_steps;
  s.issue[1] = 150;
  make_two_steps(&b, &s, 0);
  pgc_trace_problems one;
  const int count = problems_of(&b, 1, 2, &one);
  int released = 0, flight = 0;
  for (int i = 0; i < count; ++i) {
    released |= strstr(one.text[i], "copy issued into a slot not yet released") != NULL;
    flight |= strstr(one.text[i], "2 copies in flight") != NULL;
  }
  assert_int_equal(count, 2);
  assert_true(released && flight);
  free(b.bytes);

  s = good_steps;
  make_two_steps(&b, &s, 0); /* step 1 in slot 0 of a two-slot ring */
  expect_one_problem(&b, 2, 2, "K step 1 recorded in slot 0, not 1");
  free(b.bytes);

  s = good_steps;
  s.end[1] = -1; /* never computed to the end */
  make_two_steps(&b, &s, 1);
  expect_one_problem(&b, 2, 2, "K step 1 has no event 5");
  free(b.bytes);

  s = good_steps;
  make_two_steps(&b, &s, 1);
  expect_one_problem(&b, 2, 4, "2 K steps are not whole tiles of 4");
  free(b.bytes);
}

static void test_duplicates_and_strays(void **state) {
  (void)state;
  fake_buffer b;
  make_tiny(&b);
  pg_trace_track *head = (pg_trace_track *)(b.bytes + pg_trace_track_offset(0, b.capacity));
  pg_trace_record *records = (pg_trace_record *)(head + 1);
  records[3] = records[0]; /* the second issue becomes the first again */
  pgc_trace_problems p;
  const int count = problems_of(&b, 2, 2, &p);
  int twice = 0;
  for (int i = 0; i < count && i < PGC_TRACE_MAX_PROBLEMS; ++i)
    twice |= strstr(p.text[i], "event 1 of K tile 0 (tile 0) recorded twice") != NULL;
  assert_true(twice);
  free(b.bytes);

  make_tiny(&b);
  head = (pg_trace_track *)(b.bytes + pg_trace_track_offset(0, b.capacity));
  records = (pg_trace_record *)(head + 1);
  records[1].k_tile = 7;
  expect_one_problem(&b, 2, 2, "a record of event 3 names K tile 7 of 2");
  free(b.bytes);
}

/* A full track keeps its first records and counts the rest; the check then
 * does not ask for K steps it cannot see. */
static void test_dropped_records(void **state) {
  (void)state;
  fake_buffer b;
  fake_init(&b, 1, 1, 40);
  fake_track t = fake_open(&b, 0, PG_TRACE_ROLE_BLOCK, 0, 0, 0, 0, 1.0);
  fake_close(&t, simulate_ring(&t, 2, 20, 10, 300, 200));
  assert_true(t.count > 40);
  pgc_trace trace;
  parse_ok(&b, 2, 20, &trace);
  assert_int_equal(trace.tracks[0].count, 40);
  assert_int_equal(trace.tracks[0].dropped, t.count - 40);
  pgc_trace_problems p;
  assert_int_equal(pgc_trace_check(&trace, &p), 0);
  pgc_trace_summary s;
  assert_int_equal(pgc_trace_summarise(&trace, &s), 0);
  assert_int_equal(s.dropped, t.count - 40);
  pgc_trace_summary_free(&s);
  pgc_trace_free(&trace);
  free(b.bytes);
}

/* ---- files for tests/test_trace.py ------------------------------------------------ */

static void write_json_file(const char *path, const fake_buffer *b, int stages, int k_tiles,
                            const pgc_trace_meta *meta) {
  pgc_trace trace;
  parse_ok(b, stages, k_tiles, &trace);
  pgc_trace_problems p;
  assert_int_equal(pgc_trace_check(&trace, &p), 0);
  FILE *out = fopen(path, "w");
  if (out == NULL) print_error("cannot write %s\n", path);
  assert_non_null(out);
  assert_int_equal(pgc_trace_write_json(out, &trace, meta), 0);
  assert_int_equal(fclose(out), 0);
  pgc_trace_free(&trace);
}

/* Three blocks of a one-thread pipeline on two SMs, two of producer and
 * consumers over two tiles each. */
static void test_write_synthetic_json(void **state) {
  (void)state;
  fake_buffer ring;
  fake_init(&ring, 3, 64, 400);
  for (int i = 0; i < 3; ++i) {
    fake_track t = fake_open(&ring, i, PG_TRACE_ROLE_BLOCK, 64 * i, i % 2 ? 9 : 2,
                             1000000LL * (i + 1), 7000000 + 400 * i, 1.98);
    fake_close(&t, simulate_ring(&t, 3, 24, 1000000LL * (i + 1) + 40, 1200, 900));
  }
  const pgc_trace_meta ring_meta = {"cp_async", 3, 384, 384, 192, "simulated", "test_cli_trace",
                                    "synthetic", 9, 64, NAN, NAN};
  write_json_file(PG_TRACE_SYNTHETIC_JSON, &ring, 3, 24, &ring_meta);
  free(ring.bytes);

  fake_buffer split;
  fake_init(&split, 2, 5, 400);
  for (int i = 0; i < 2; ++i) {
    fake_track p = fake_open(&split, i, PG_TRACE_ROLE_PRODUCER, 5 * i, 11 + i, 5000, 9000000, 1.7);
    fake_track c = fake_open(&split, i, PG_TRACE_ROLE_CONSUMER, 5 * i, 11 + i, 5000, 9000000, 1.7);
    simulate_split(&p, &c, 4, 10, 2, 5040, 1500, 600);
  }
  const pgc_trace_meta split_meta = {"tma_ws", 4, 256, 512, 320, "simulated", "test_cli_trace",
                                     "synthetic", 10, 5, NAN, NAN};
  write_json_file(PG_TRACE_SYNTHETIC_SPLIT_JSON, &split, 4, 10, &split_meta);
  free(split.bytes);
}

/* The committed fixture is the writer's output for these records: a
 * one-thread block and a producer-consumer block, three stages, on SMs
 * whose clocks start far apart. */
static void test_fixture_is_reproduced(void **state) {
  (void)state;
  fake_buffer b;
  fake_init(&b, 2, 2, 200);
  fake_track t = fake_open(&b, 0, PG_TRACE_ROLE_BLOCK, 0, 4, 3000, 2000000, 1.98);
  fake_close(&t, simulate_ring(&t, 3, 6, 3040, 700, 500));
  fake_track p = fake_open(&b, 1, PG_TRACE_ROLE_PRODUCER, 2, 17, 88000, 2000150, 1.98);
  fake_track c = fake_open(&b, 1, PG_TRACE_ROLE_CONSUMER, 2, 17, 88000, 2000150, 1.98);
  simulate_split(&p, &c, 3, 6, 1, 88040, 900, 500);
  const pgc_trace_meta meta = {"fixture", 3, 256, 128, 48,
                               "made-up records (tests/test_cli_trace.c)", "test_cli_trace",
                               "fixed", 4, 2, NAN, NAN};
  write_json_file(PG_TRACE_FIXTURE_OUT, &b, 3, 6, &meta);
  free(b.bytes);
  char *made = pgt_read_file(PG_TRACE_FIXTURE_OUT);
  const char *update = getenv("PG_UPDATE_FIXTURE");
  if (update != NULL && strcmp(update, "1") == 0) {
    FILE *fixture = fopen(PG_TRACE_FIXTURE, "w");
    assert_non_null(fixture);
    fputs(made, fixture);
    assert_int_equal(fclose(fixture), 0);
  } else {
    char *committed = pgt_read_file(PG_TRACE_FIXTURE);
    if (strcmp(made, committed) != 0)
      print_error("%s differs from %s (PG_UPDATE_FIXTURE=1 rewrites it)\n",
                  PG_TRACE_FIXTURE_OUT, PG_TRACE_FIXTURE);
    assert_string_equal(made, committed);
    free(committed);
  }
  free(made);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tiny_trace_times),
      cmocka_unit_test(test_tiny_trace_summary),
      cmocka_unit_test(test_tiny_trace_json),
      cmocka_unit_test(test_parse_rejects),
      cmocka_unit_test(test_clock_alignment),
      cmocka_unit_test(test_simulated_pipelines_hold),
      cmocka_unit_test(test_each_invariant_caught),
      cmocka_unit_test(test_duplicates_and_strays),
      cmocka_unit_test(test_dropped_records),
      cmocka_unit_test(test_write_synthetic_json),
      cmocka_unit_test(test_fixture_is_reproduced),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
