/* The host side of `pipegemm trace`: from the buffer a traced kernel wrote
 * (src/trace_records.h) to a timeline, its checks, its summary and the Chrome
 * trace-event JSON. Pure functions: no GPU, no output but the FILE* given,
 * so the host tests (tests/test_cli_trace.c) feed them made-up records.
 *
 * A K step of a block is one stage's use: K tile k_tile of the block's
 * tile-th output tile is step tile * k_tiles + k_tile, and its ring slot is
 * step % stages in every traced kernel (the ring goes on across tiles). */
#ifndef PGC_TRACE_FORMAT_H
#define PGC_TRACE_FORMAT_H

#include <stddef.h>
#include <stdio.h>

#include "trace_records.h"

/* A (block, role) track as the host reads it. */
typedef struct {
  int role, block, smid;
  int count;         /* records kept */
  long long dropped; /* events that found the track full */
  long long begin_globaltimer, begin_clock, end_globaltimer, end_clock;
  const pg_trace_record *records; /* borrowed from the buffer */
  /* The track's clock on the timeline, shared by every track of its block
   * (one SM, one counter): ns = offset_ns + (clock - ref_clock) / ghz. */
  long long ref_clock;
  double offset_ns;
} pgc_trace_track;

typedef struct {
  int stages;  /* the ring's depth */
  int k_tiles; /* K tiles of one output tile */
  int track_count;
  pgc_trace_track *tracks; /* owned; by block, then role, as in the buffer */
  double ghz;              /* clock64 ticks per ns */
  int ghz_measured;        /* 1: from the tracks' (globaltimer, clock64) pairs; 0: the fallback */
} pgc_trace;

/* Below this much globaltimer time in all tracks together, the pairs say
 * too little about the clock rate (the timer ticks in steps of up to a
 * microsecond), and the caller's fallback rate is used. */
#define PGC_TRACE_MIN_RATE_SPAN_NS 20000

/* Reads the tracks that a role wrote out of a traced launch's buffer (bytes
 * long, as pg_trace_layout_of sized it). `fallback_ghz`: the clock rate to
 * use when the tracks cannot give it (the SM clock sampled after the run).
 * Returns 0, or -1 with a one-line reason in err (a buffer too short, a
 * count past its track, out of memory). The trace borrows the records from
 * `buffer`, which must outlive it. */
int pgc_trace_parse(const void *buffer, size_t bytes, int stages, int k_tiles,
                    double fallback_ghz, pgc_trace *trace, char *err, size_t err_size);
void pgc_trace_free(pgc_trace *trace);

/* A track's clock on the timeline, in ns since the first track began. */
long long pgc_trace_ns(const pgc_trace *trace, const pgc_trace_track *track, long long clock);

/* ---- what must hold in any trace (the GPU test and the command check it) ---- */

#define PGC_TRACE_MAX_PROBLEMS 8
#define PGC_TRACE_PROBLEM_SIZE 160
typedef struct {
  int count; /* every violation found */
  char text[PGC_TRACE_MAX_PROBLEMS][PGC_TRACE_PROBLEM_SIZE]; /* the first few */
} pgc_trace_problems;

/* Per sampled block, on its SM's clock: no data ready before its copy was
 * issued; no compute on a K step before its data was ready, nor past its
 * end; no copy into a slot before the slot's previous K step was released;
 * never more copies in flight (issued, not yet ready) than stages; every
 * event of a K step in slot step % stages, each at most once; and, where no
 * record was dropped, every K step up to the block's last complete (issued,
 * ready, computed) and the block's steps a whole number of output tiles.
 * Returns the number of violations (the first few in `problems`), or -1
 * when out of memory. */
int pgc_trace_check(const pgc_trace *trace, pgc_trace_problems *problems);

/* ---- the summary ------------------------------------------------------------ */

typedef struct {
  int block, smid;
  int steps;             /* K steps computed */
  double start_us;       /* when the block began, on the timeline */
  double span_us;        /* from its first to its last event */
  double in_flight_mean; /* copies issued and not yet ready, averaged over time
                            from the first issue to the last ready */
  int in_flight_max;
  double bubble;         /* share of the main loop (first data wait to last
                            compute end) spent waiting for data; NaN: no loop */
  double k_tile_ns;      /* mean time from one compute start to the next; NaN below 2 steps */
  double compute_ns;     /* mean compute span of a K step */
  double wait_ns;        /* mean data wait of a K step */
} pgc_trace_block_summary;

typedef struct {
  int blocks;
  pgc_trace_block_summary *per_block; /* owned */
  int sms;                 /* distinct SMs among the blocks */
  long long records, dropped;
  /* Over the blocks: the mean of their means, the largest maximum, waiting
   * over loop time summed, and means weighted by K steps. */
  double in_flight_mean;
  int in_flight_max;
  double bubble, k_tile_ns, compute_ns, wait_ns;
} pgc_trace_summary;

/* 0, or -1 when out of memory. */
int pgc_trace_summarise(const pgc_trace *trace, pgc_trace_summary *summary);
void pgc_trace_summary_free(pgc_trace_summary *summary);

/* ---- Chrome trace-event JSON ---------------------------------------------- */

/* What the file says about its run ("otherData"). Strings may be NULL;
 * times NaN where not measured. */
typedef struct {
  const char *variant;
  int stages, m, n, k;
  const char *gpu, *command, *date;
  int grid_blocks, stride;
  double traced_ms, untraced_ms;
} pgc_trace_meta;

/* The tracks of one block on the timeline: its role's (the block, or its
 * consumers), its producers', and one per ring slot for the copies into it,
 * which may overlap one another but never within a slot. */
enum {
  PGC_TRACE_LANE_MAIN = 0,
  PGC_TRACE_LANE_PRODUCER = 1,
  PGC_TRACE_LANE_COPIES = 2, /* + slot */
  PGC_TRACE_LANES_PER_BLOCK = 16
};

/* The trace as {"traceEvents": [...], "displayTimeUnit": "ns", "otherData":
 * {...}}: per SM a process (pid = SM id + 1, named "SM <id>"), per block
 * and lane a thread (tid = block * PGC_TRACE_LANES_PER_BLOCK + lane, named
 * "block <b> <role>"); complete events ("ph": "X", ts and dur in
 * microseconds, to the ns) for every copy (issue to ready), data wait,
 * compute, slot wait and epilogue, and an instant at each release; events
 * in time order, metadata first. Returns 0, or -1 when out of memory. */
int pgc_trace_write_json(FILE *out, const pgc_trace *trace, const pgc_trace_meta *meta);

#endif
