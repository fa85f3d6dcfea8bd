/* From a traced launch's buffer to a timeline: reading the tracks, the
 * invariants, the summary and the Chrome trace-event JSON (trace_format.h).
 *
 * Everything about one block is done on its SM's own clock64 ticks, which
 * every role of the block reads from one counter, so that the order of a
 * producer's and a consumer's events is exact; ticks become nanoseconds
 * only for the timeline and the summary's times. */
#include "trace_format.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "measure/report.h"

#define ABSENT LLONG_MIN /* no such event for that K step */
#define NS_PER_US 1000.0

/* ---- reading the buffer ------------------------------------------------------ */

static int parse_error(char *err, size_t size, const char *fmt, ...) {
  if (err != NULL && size > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* The track at `index`, or an error for what no kernel writes. */
static int read_track(const char *base, int index, int capacity, pgc_trace_track *out, char *err,
                      size_t err_size) {
  pg_trace_track raw;
  const size_t offset = pg_trace_track_offset(index, capacity);
  memcpy(&raw, base + offset, sizeof raw);
  memset(out, 0, sizeof *out);
  out->role = raw.role;
  if (raw.role == PG_TRACE_ROLE_NONE) return 0;
  if (raw.role < PG_TRACE_ROLE_BLOCK || raw.role > PG_TRACE_ROLE_CONSUMER || raw.count < 0)
    return parse_error(err, err_size, "track %d holds role %d and %d events: not a trace", index,
                       raw.role, raw.count);
  out->block = raw.block;
  out->smid = raw.smid;
  out->count = raw.count < capacity ? raw.count : capacity;
  out->dropped = (long long)raw.count - out->count;
  out->begin_globaltimer = raw.begin_globaltimer;
  out->begin_clock = raw.begin_clock;
  out->end_globaltimer = raw.end_globaltimer;
  out->end_clock = raw.end_clock;
  out->records = (const pg_trace_record *)(base + offset + sizeof(pg_trace_track));
  return 0;
}

static int has_end(const pgc_trace_track *t) {
  return t->end_globaltimer > t->begin_globaltimer && t->end_clock > t->begin_clock;
}

/* Ticks per ns over every track's span together: one clock drives all SMs,
 * and the sum outweighs the timer's coarse steps better than any one. */
static void set_clock_rate(pgc_trace *trace, double fallback_ghz) {
  double ticks = 0, ns = 0;
  for (int i = 0; i < trace->track_count; ++i) {
    const pgc_trace_track *t = &trace->tracks[i];
    if (!has_end(t)) continue;
    ticks += (double)(t->end_clock - t->begin_clock);
    ns += (double)(t->end_globaltimer - t->begin_globaltimer);
  }
  trace->ghz_measured = ns >= PGC_TRACE_MIN_RATE_SPAN_NS;
  trace->ghz = trace->ghz_measured ? ticks / ns : fallback_ghz;
}

/* The tracks of one block, consecutive in the buffer: [first, end). */
static int block_end(const pgc_trace *trace, int first) {
  int end = first + 1;
  while (end < trace->track_count && trace->tracks[end].block == trace->tracks[first].block) ++end;
  return end;
}

/* One clock-to-timeline map per block: its tracks' (globaltimer, clock)
 * pairs each say where the block's clock stands on the GPU's timer; their
 * mean is the block's offset. */
static void set_block_offsets(pgc_trace *trace, long long origin) {
  for (int first = 0; first < trace->track_count; first = block_end(trace, first)) {
    const int end = block_end(trace, first);
    long long ref = trace->tracks[first].begin_clock;
    for (int i = first; i < end; ++i)
      if (trace->tracks[i].begin_clock < ref) ref = trace->tracks[i].begin_clock;
    double sum = 0;
    int pairs = 0;
    for (int i = first; i < end; ++i) {
      const pgc_trace_track *t = &trace->tracks[i];
      sum += (double)(t->begin_globaltimer - origin) - (double)(t->begin_clock - ref) / trace->ghz;
      ++pairs;
      if (!has_end(t)) continue;
      sum += (double)(t->end_globaltimer - origin) - (double)(t->end_clock - ref) / trace->ghz;
      ++pairs;
    }
    for (int i = first; i < end; ++i) {
      trace->tracks[i].ref_clock = ref;
      trace->tracks[i].offset_ns = sum / pairs;
    }
  }
}

/* Time 0 is the earliest start of any track. */
static void shift_to_zero(pgc_trace *trace) {
  double earliest = INFINITY;
  for (int i = 0; i < trace->track_count; ++i) {
    const pgc_trace_track *t = &trace->tracks[i];
    const double start = t->offset_ns + (double)(t->begin_clock - t->ref_clock) / trace->ghz;
    if (start < earliest) earliest = start;
  }
  for (int i = 0; i < trace->track_count; ++i) trace->tracks[i].offset_ns -= earliest;
}

int pgc_trace_parse(const void *buffer, size_t bytes, int stages, int k_tiles,
                    double fallback_ghz, pgc_trace *trace, char *err, size_t err_size) {
  memset(trace, 0, sizeof *trace);
  pg_trace_header header;
  if (buffer == NULL || bytes < sizeof header)
    return parse_error(err, err_size, "a trace buffer of %zu bytes holds no header", bytes);
  memcpy(&header, buffer, sizeof header);
  if (header.blocks < 0 || header.capacity < 0 || header.stride < 1 || stages < 1 ||
      k_tiles < 0 || !(fallback_ghz > 0) ||
      pg_trace_bytes(header.blocks, header.capacity) > bytes)
    return parse_error(err, err_size,
                       "trace header (%d blocks, stride %d, %d records a track) does not fit "
                       "a buffer of %zu bytes",
                       header.blocks, header.stride, header.capacity, bytes);
  const int slots = header.blocks * PG_TRACE_TRACKS_PER_BLOCK;
  trace->tracks = calloc(slots > 0 ? (size_t)slots : 1, sizeof *trace->tracks);
  if (trace->tracks == NULL) return parse_error(err, err_size, "out of host memory");
  trace->stages = stages;
  trace->k_tiles = k_tiles;
  long long origin = LLONG_MAX;
  for (int i = 0; i < slots; ++i) {
    pgc_trace_track *t = &trace->tracks[trace->track_count];
    if (read_track(buffer, i, header.capacity, t, err, err_size) != 0) {
      pgc_trace_free(trace);
      return -1;
    }
    if (t->role == PG_TRACE_ROLE_NONE) continue;
    if (t->begin_globaltimer < origin) origin = t->begin_globaltimer;
    ++trace->track_count;
  }
  set_clock_rate(trace, fallback_ghz);
  set_block_offsets(trace, origin);
  shift_to_zero(trace);
  return 0;
}

void pgc_trace_free(pgc_trace *trace) {
  free(trace->tracks);
  memset(trace, 0, sizeof *trace);
}

long long pgc_trace_ns(const pgc_trace *trace, const pgc_trace_track *track, long long clock) {
  return llround(track->offset_ns + (double)(clock - track->ref_clock) / trace->ghz);
}

/* ---- one block's K steps ---------------------------------------------------------- */

/* Every event of a block by K step, on the block's clock. */
typedef struct {
  int first, end;   /* its tracks */
  int has_producer; /* copies are issued by a producer track */
  int steps;        /* the last K step seen + 1 */
  long long *at;    /* steps x PG_TRACE_EVENT_COUNT; ABSENT where none */
  int tiles;        /* output tiles with an epilogue event */
  long long *epilogue; /* tiles x 2: begin, end */
  long long dropped;
} block_view;

static int is_epilogue(int event) {
  return event == PG_TRACE_EPILOGUE_BEGIN || event == PG_TRACE_EPILOGUE_END;
}

static long long step_of(const pgc_trace *trace, const pg_trace_record *r) {
  return (long long)r->tile * trace->k_tiles + r->k_tile;
}

static void report(pgc_trace_problems *problems, const char *fmt, ...) {
  if (problems == NULL) return;
  if (problems->count < PGC_TRACE_MAX_PROBLEMS) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(problems->text[problems->count], PGC_TRACE_PROBLEM_SIZE, fmt, ap);
    va_end(ap);
  }
  ++problems->count;
}

/* How many K steps and output tiles the block's records name; records
 * that name no event, or a K tile outside 0..k_tiles-1, are reported. */
static void count_steps(const pgc_trace *trace, block_view *view, pgc_trace_problems *problems) {
  const int block = trace->tracks[view->first].block;
  for (int i = view->first; i < view->end; ++i) {
    const pgc_trace_track *t = &trace->tracks[i];
    view->has_producer |= t->role == PG_TRACE_ROLE_PRODUCER;
    view->dropped += t->dropped;
    for (int j = 0; j < t->count; ++j) {
      const pg_trace_record *r = &t->records[j];
      if (is_epilogue(r->event)) {
        if (r->tile + 1 > view->tiles) view->tiles = r->tile + 1;
      } else if (r->event == PG_TRACE_NONE || r->event >= PG_TRACE_EVENT_COUNT ||
                 r->k_tile < 0 || r->k_tile >= trace->k_tiles) {
        report(problems, "block %d: a record of event %d names K tile %d of %d", block,
               r->event, r->k_tile, trace->k_tiles);
      } else if (step_of(trace, r) + 1 > view->steps) {
        view->steps = (int)(step_of(trace, r) + 1);
      }
    }
  }
}

/* Whether no event of the K step is in place yet. */
static int step_is_new(const block_view *view, long long step) {
  for (int e = 0; e < PG_TRACE_EVENT_COUNT; ++e)
    if (view->at[step * PG_TRACE_EVENT_COUNT + e] != ABSENT) return 0;
  return 1;
}

/* One event into its place; a second of the same kind is reported, and a
 * K step in the wrong slot once. */
static void place(const pgc_trace *trace, block_view *view, const pg_trace_record *r,
                  pgc_trace_problems *problems) {
  const int block = trace->tracks[view->first].block;
  long long *cell;
  if (is_epilogue(r->event)) {
    cell = &view->epilogue[r->tile * 2 + (r->event == PG_TRACE_EPILOGUE_END)];
  } else {
    const long long step = step_of(trace, r);
    if (r->slot != step % trace->stages && step_is_new(view, step))
      report(problems, "block %d: K step %lld recorded in slot %d, not %lld", block, step,
             r->slot, step % trace->stages);
    cell = &view->at[step * PG_TRACE_EVENT_COUNT + r->event];
  }
  if (*cell != ABSENT)
    report(problems, "block %d: event %d of K tile %d (tile %d) recorded twice", block, r->event,
           r->k_tile, r->tile);
  else
    *cell = r->clock;
}

static void view_free(block_view *view) {
  free(view->at);
  free(view->epilogue);
  view->at = view->epilogue = NULL;
}

/* The view of the block whose tracks start at `first`; 0, or -1 when out of memory. */
static int view_build(const pgc_trace *trace, int first, block_view *view,
                      pgc_trace_problems *problems) {
  memset(view, 0, sizeof *view);
  view->first = first;
  view->end = block_end(trace, first);
  count_steps(trace, view, problems);
  const size_t cells = (size_t)view->steps * PG_TRACE_EVENT_COUNT;
  view->at = malloc((cells > 0 ? cells : 1) * sizeof *view->at);
  view->epilogue = malloc((size_t)(view->tiles > 0 ? view->tiles * 2 : 1) * sizeof *view->epilogue);
  if (view->at == NULL || view->epilogue == NULL) {
    view_free(view);
    return -1;
  }
  for (size_t c = 0; c < cells; ++c) view->at[c] = ABSENT;
  for (int c = 0; c < view->tiles * 2; ++c) view->epilogue[c] = ABSENT;
  for (int i = view->first; i < view->end; ++i) {
    const pgc_trace_track *t = &trace->tracks[i];
    for (int j = 0; j < t->count; ++j) {
      const pg_trace_record *r = &t->records[j];
      const int usable = is_epilogue(r->event) ||
                         (r->event > PG_TRACE_NONE && r->event < PG_TRACE_EVENT_COUNT &&
                          r->k_tile >= 0 && r->k_tile < trace->k_tiles);
      if (usable) place(trace, view, r, problems);
    }
  }
  return 0;
}

static long long at(const block_view *view, int step, int event) {
  return view->at[(size_t)step * PG_TRACE_EVENT_COUNT + event];
}

/* ---- copies in flight ------------------------------------------------------------- */

typedef struct {
  long long clock;
  int delta; /* +1 issue, -1 ready */
} flight_edge;

static int edge_order(const void *pa, const void *pb) {
  const flight_edge *a = pa, *b = pb;
  if (a->clock != b->clock) return a->clock < b->clock ? -1 : 1;
  return a->delta - b->delta; /* at the same tick a copy lands before the next is issued */
}

typedef struct {
  int max;
  double mean;          /* over [first issue, last ready] */
  long long max_clock;  /* where the maximum was first reached */
} flight_stats;

/* Copies issued and not yet ready, over the block's time; -1 when out of memory. */
static int copies_in_flight(const block_view *view, flight_stats *stats) {
  memset(stats, 0, sizeof *stats);
  flight_edge *edges = malloc((size_t)(view->steps > 0 ? view->steps : 1) * 2 * sizeof *edges);
  if (edges == NULL) return -1;
  int count = 0;
  for (int s = 0; s < view->steps; ++s) {
    const long long issue = at(view, s, PG_TRACE_ISSUE), ready = at(view, s, PG_TRACE_READY);
    if (issue == ABSENT || ready == ABSENT) continue;
    edges[count++] = (flight_edge){issue, +1};
    edges[count++] = (flight_edge){ready, -1};
  }
  qsort(edges, (size_t)count, sizeof *edges, edge_order);
  double area = 0;
  int level = 0;
  for (int e = 0; e < count; ++e) {
    if (e > 0) area += (double)level * (double)(edges[e].clock - edges[e - 1].clock);
    level += edges[e].delta;
    if (level > stats->max) {
      stats->max = level;
      stats->max_clock = edges[e].clock;
    }
  }
  if (count > 0 && edges[count - 1].clock > edges[0].clock)
    stats->mean = area / (double)(edges[count - 1].clock - edges[0].clock);
  free(edges);
  return 0;
}

/* ---- invariants ------------------------------------------------------------------- */

/* `later` must not come before `earlier` where both were recorded. */
static void check_order(const block_view *view, int block, int step, int earlier_step,
                        int earlier, int later, const char *what, pgc_trace_problems *problems) {
  const long long a = at(view, earlier_step, earlier), b = at(view, step, later);
  if (a != ABSENT && b != ABSENT && b < a)
    report(problems, "block %d: K step %d: %s (%lld ticks early)", block, step, what, a - b);
}

static void check_step_order(const pgc_trace *trace, const block_view *view, int block,
                             pgc_trace_problems *problems) {
  for (int s = 0; s < view->steps; ++s) {
    check_order(view, block, s, s, PG_TRACE_ISSUE, PG_TRACE_READY,
                "data ready before its copy was issued", problems);
    check_order(view, block, s, s, PG_TRACE_READY, PG_TRACE_COMPUTE_BEGIN,
                "compute began before its data was ready", problems);
    check_order(view, block, s, s, PG_TRACE_COMPUTE_BEGIN, PG_TRACE_COMPUTE_END,
                "compute ended before it began", problems);
    check_order(view, block, s, s, PG_TRACE_DATA_WAIT, PG_TRACE_READY,
                "data ready before its wait began", problems);
    if (s >= trace->stages)
      check_order(view, block, s, s - trace->stages, PG_TRACE_RELEASE, PG_TRACE_ISSUE,
                  "copy issued into a slot not yet released", problems);
  }
}

/* Without dropped records: every K step complete, and whole output tiles. */
static void check_complete(const pgc_trace *trace, const block_view *view, int block,
                           pgc_trace_problems *problems) {
  static const int needed[] = {PG_TRACE_ISSUE, PG_TRACE_READY, PG_TRACE_COMPUTE_BEGIN,
                               PG_TRACE_COMPUTE_END};
  if (view->dropped > 0) return;
  for (int s = 0; s < view->steps; ++s)
    for (size_t e = 0; e < sizeof needed / sizeof needed[0]; ++e)
      if (at(view, s, needed[e]) == ABSENT) {
        report(problems, "block %d: K step %d has no event %d", block, s, needed[e]);
        break;
      }
  if (trace->k_tiles > 0 && view->steps % trace->k_tiles != 0)
    report(problems, "block %d: %d K steps are not whole tiles of %d", block, view->steps,
           trace->k_tiles);
  else if (trace->k_tiles > 0 && view->steps / trace->k_tiles != view->tiles)
    report(problems, "block %d: %d K steps but %d epilogues", block, view->steps, view->tiles);
}

static int check_block(const pgc_trace *trace, int first, pgc_trace_problems *problems) {
  block_view view;
  if (view_build(trace, first, &view, problems) != 0) return -1;
  const int block = trace->tracks[first].block;
  check_step_order(trace, &view, block, problems);
  check_complete(trace, &view, block, problems);
  flight_stats flight;
  if (copies_in_flight(&view, &flight) != 0) {
    view_free(&view);
    return -1;
  }
  if (flight.max > trace->stages)
    report(problems, "block %d: %d copies in flight at tick %lld, with %d stages", block,
           flight.max, flight.max_clock, trace->stages);
  view_free(&view);
  return 0;
}

int pgc_trace_check(const pgc_trace *trace, pgc_trace_problems *problems) {
  memset(problems, 0, sizeof *problems);
  for (int first = 0; first < trace->track_count; first = block_end(trace, first))
    if (check_block(trace, first, problems) != 0) return -1;
  return problems->count;
}

/* ---- summary ---------------------------------------------------------------------- */

/* Sums over a block's K steps, in ticks, that the summary turns into means. */
typedef struct {
  int computed;                 /* steps with a compute span */
  double compute_ticks, wait_ticks;
  int waits;
  long long first_compute, last_compute; /* compute starts of the first and last step */
  long long loop_begin, loop_end;        /* first data wait, last compute end */
} step_sums;

static void sum_steps(const block_view *view, step_sums *sums) {
  memset(sums, 0, sizeof *sums);
  sums->first_compute = sums->last_compute = ABSENT;
  sums->loop_begin = LLONG_MAX;
  sums->loop_end = LLONG_MIN;
  for (int s = 0; s < view->steps; ++s) {
    const long long wait = at(view, s, PG_TRACE_DATA_WAIT), ready = at(view, s, PG_TRACE_READY);
    const long long begin = at(view, s, PG_TRACE_COMPUTE_BEGIN);
    const long long end = at(view, s, PG_TRACE_COMPUTE_END);
    if (wait != ABSENT && ready != ABSENT) {
      sums->wait_ticks += (double)(ready - wait);
      ++sums->waits;
    }
    if (wait != ABSENT && wait < sums->loop_begin) sums->loop_begin = wait;
    if (end != ABSENT && end > sums->loop_end) sums->loop_end = end;
    if (begin == ABSENT || end == ABSENT) continue;
    sums->compute_ticks += (double)(end - begin);
    if (sums->computed++ == 0) sums->first_compute = begin;
    sums->last_compute = begin;
  }
}

/* The block's first and last event on its clock. */
static void block_extent(const pgc_trace *trace, const block_view *view, long long *first,
                         long long *last) {
  *first = LLONG_MAX;
  *last = LLONG_MIN;
  for (int i = view->first; i < view->end; ++i) {
    const pgc_trace_track *t = &trace->tracks[i];
    if (t->begin_clock < *first) *first = t->begin_clock;
    if (t->count > 0 && t->records[t->count - 1].clock > *last)
      *last = t->records[t->count - 1].clock;
  }
  if (*last < *first) *last = *first;
}

static void summarise_block(const pgc_trace *trace, const block_view *view,
                            const flight_stats *flight, const step_sums *sums,
                            pgc_trace_block_summary *out) {
  const pgc_trace_track *track = &trace->tracks[view->first];
  long long first, last;
  block_extent(trace, view, &first, &last);
  out->block = track->block;
  out->smid = track->smid;
  out->steps = sums->computed;
  out->start_us = (double)pgc_trace_ns(trace, track, first) / NS_PER_US;
  out->span_us = (double)(last - first) / trace->ghz / NS_PER_US;
  out->in_flight_mean = flight->mean;
  out->in_flight_max = flight->max;
  const double loop = (double)(sums->loop_end - sums->loop_begin);
  out->bubble = sums->waits > 0 && loop > 0 ? sums->wait_ticks / loop : NAN;
  out->k_tile_ns = sums->computed > 1 ? (double)(sums->last_compute - sums->first_compute) /
                                            (sums->computed - 1) / trace->ghz
                                      : NAN;
  out->compute_ns = sums->computed > 0 ? sums->compute_ticks / sums->computed / trace->ghz : NAN;
  out->wait_ns = sums->waits > 0 ? sums->wait_ticks / sums->waits / trace->ghz : NAN;
}

/* The blocks' figures into the whole trace's. */
static void summarise_blocks(const pgc_trace *trace, pgc_trace_summary *s,
                             const step_sums *sums) {
  double flight = 0, wait = 0, loop = 0, period = 0, compute = 0, waited = 0;
  long long periods = 0, computed = 0, waits = 0;
  for (int b = 0; b < s->blocks; ++b) {
    const pgc_trace_block_summary *block = &s->per_block[b];
    flight += block->in_flight_mean;
    if (block->in_flight_max > s->in_flight_max) s->in_flight_max = block->in_flight_max;
    if (sums[b].waits > 0 && sums[b].loop_end > sums[b].loop_begin) {
      wait += sums[b].wait_ticks;
      loop += (double)(sums[b].loop_end - sums[b].loop_begin);
    }
    if (sums[b].computed > 1) {
      period += (double)(sums[b].last_compute - sums[b].first_compute);
      periods += sums[b].computed - 1;
    }
    compute += sums[b].compute_ticks;
    computed += sums[b].computed;
    waited += sums[b].wait_ticks;
    waits += sums[b].waits;
  }
  s->in_flight_mean = s->blocks > 0 ? flight / s->blocks : NAN;
  s->bubble = loop > 0 ? wait / loop : NAN;
  s->k_tile_ns = periods > 0 ? period / (double)periods / trace->ghz : NAN;
  s->compute_ns = computed > 0 ? compute / (double)computed / trace->ghz : NAN;
  s->wait_ns = waits > 0 ? waited / (double)waits / trace->ghz : NAN;
}

static int count_sms(const pgc_trace_summary *s) {
  int sms = 0;
  for (int b = 0; b < s->blocks; ++b) {
    int seen = 0;
    for (int c = 0; c < b && !seen; ++c) seen = s->per_block[c].smid == s->per_block[b].smid;
    sms += !seen;
  }
  return sms;
}

int pgc_trace_summarise(const pgc_trace *trace, pgc_trace_summary *summary) {
  memset(summary, 0, sizeof *summary);
  int blocks = 0;
  for (int first = 0; first < trace->track_count; first = block_end(trace, first)) ++blocks;
  summary->per_block = calloc(blocks > 0 ? (size_t)blocks : 1, sizeof *summary->per_block);
  step_sums *sums = calloc(blocks > 0 ? (size_t)blocks : 1, sizeof *sums);
  if (summary->per_block == NULL || sums == NULL) {
    free(sums);
    pgc_trace_summary_free(summary);
    return -1;
  }
  for (int first = 0; first < trace->track_count; first = block_end(trace, first)) {
    block_view view;
    flight_stats flight;
    if (view_build(trace, first, &view, NULL) != 0 || copies_in_flight(&view, &flight) != 0) {
      view_free(&view);
      free(sums);
      pgc_trace_summary_free(summary);
      return -1;
    }
    sum_steps(&view, &sums[summary->blocks]);
    summarise_block(trace, &view, &flight, &sums[summary->blocks],
                    &summary->per_block[summary->blocks]);
    summary->dropped += view.dropped;
    ++summary->blocks;
    view_free(&view);
  }
  for (int i = 0; i < trace->track_count; ++i) summary->records += trace->tracks[i].count;
  summarise_blocks(trace, summary, sums);
  summary->sms = count_sms(summary);
  free(sums);
  return 0;
}

void pgc_trace_summary_free(pgc_trace_summary *summary) {
  free(summary->per_block);
  memset(summary, 0, sizeof *summary);
}

/* ---- JSON --------------------------------------------------------------------------- */

typedef enum { SPAN_COPY, SPAN_WAIT, SPAN_COMPUTE, SPAN_SLOT_WAIT, SPAN_EPILOGUE, SPAN_RELEASE } span_kind;

/* What each kind is called: the event's name and category. */
static const char *const span_names[] = {"copy", "wait", "compute", "slot wait", "epilogue",
                                         "release"};

typedef struct {
  long long ts, dur; /* ns; dur < 0: an instant */
  int pid, tid;
  span_kind kind;
  int k_tile, slot, tile;
} json_event;

typedef struct {
  json_event *events;
  int count, capacity;
  unsigned *copy_slots; /* per track: the slots its block copied into, a bit each */
} event_list;

static int add_event(event_list *list, json_event event) {
  if (list->count == list->capacity) {
    const int grown = list->capacity > 0 ? list->capacity * 2 : 256;
    json_event *more = realloc(list->events, (size_t)grown * sizeof *more);
    if (more == NULL) return -1;
    list->events = more;
    list->capacity = grown;
  }
  list->events[list->count++] = event;
  return 0;
}

static int pid_of(const pgc_trace_track *track) { return track->smid + 1; }

static int tid_of(int block, int lane) { return block * PGC_TRACE_LANES_PER_BLOCK + lane; }

/* A span between two events of a block's K step (begin_step may differ:
 * none does yet), where both were recorded. */
static int add_span(const pgc_trace *trace, const block_view *view, event_list *list,
                    span_kind kind, int step, int begin_event, int end_event, int lane) {
  const long long begin = at(view, step, begin_event), end = at(view, step, end_event);
  if (begin == ABSENT || (end == ABSENT && kind != SPAN_RELEASE)) return 0;
  const pgc_trace_track *track = &trace->tracks[view->first];
  json_event e;
  e.ts = pgc_trace_ns(trace, track, begin);
  e.dur = kind == SPAN_RELEASE ? -1 : pgc_trace_ns(trace, track, end) - e.ts;
  e.pid = pid_of(track);
  e.tid = tid_of(track->block, lane);
  e.kind = kind;
  e.k_tile = trace->k_tiles > 0 ? step % trace->k_tiles : 0;
  e.slot = step % trace->stages;
  e.tile = trace->k_tiles > 0 ? step / trace->k_tiles : 0;
  return add_event(list, e);
}

static int add_step_spans(const pgc_trace *trace, const block_view *view, event_list *list,
                          int step) {
  const int issuer = view->has_producer ? PGC_TRACE_LANE_PRODUCER : PGC_TRACE_LANE_MAIN;
  const int copies = PGC_TRACE_LANE_COPIES + step % trace->stages;
  if (add_span(trace, view, list, SPAN_COPY, step, PG_TRACE_ISSUE, PG_TRACE_READY, copies) ||
      add_span(trace, view, list, SPAN_WAIT, step, PG_TRACE_DATA_WAIT, PG_TRACE_READY,
               PGC_TRACE_LANE_MAIN) ||
      add_span(trace, view, list, SPAN_COMPUTE, step, PG_TRACE_COMPUTE_BEGIN,
               PG_TRACE_COMPUTE_END, PGC_TRACE_LANE_MAIN) ||
      add_span(trace, view, list, SPAN_SLOT_WAIT, step, PG_TRACE_SLOT_WAIT, PG_TRACE_ISSUE,
               issuer) ||
      add_span(trace, view, list, SPAN_RELEASE, step, PG_TRACE_RELEASE, PG_TRACE_RELEASE,
               PGC_TRACE_LANE_MAIN))
    return -1;
  return 0;
}

static int add_epilogues(const pgc_trace *trace, const block_view *view, event_list *list) {
  const pgc_trace_track *track = &trace->tracks[view->first];
  for (int tile = 0; tile < view->tiles; ++tile) {
    const long long begin = view->epilogue[tile * 2], end = view->epilogue[tile * 2 + 1];
    if (begin == ABSENT || end == ABSENT) continue;
    json_event e = {pgc_trace_ns(trace, track, begin), 0, pid_of(track),
                    tid_of(track->block, PGC_TRACE_LANE_MAIN), SPAN_EPILOGUE, 0, 0, tile};
    e.dur = pgc_trace_ns(trace, track, end) - e.ts;
    if (add_event(list, e) != 0) return -1;
  }
  return 0;
}

static int collect_events(const pgc_trace *trace, event_list *list) {
  list->copy_slots = calloc(trace->track_count > 0 ? (size_t)trace->track_count : 1,
                            sizeof *list->copy_slots);
  if (list->copy_slots == NULL) return -1;
  for (int first = 0; first < trace->track_count; first = block_end(trace, first)) {
    block_view view;
    if (view_build(trace, first, &view, NULL) != 0) return -1;
    int rc = add_epilogues(trace, &view, list);
    for (int s = 0; s < view.steps && rc == 0; ++s) {
      rc = add_step_spans(trace, &view, list, s);
      if (at(&view, s, PG_TRACE_ISSUE) != ABSENT && at(&view, s, PG_TRACE_READY) != ABSENT)
        list->copy_slots[first] |= 1u << (s % trace->stages);
    }
    view_free(&view);
    if (rc != 0) return -1;
  }
  return 0;
}

/* Time order; at one time the longer span first, so it encloses the shorter. */
static int event_order(const void *pa, const void *pb) {
  const json_event *a = pa, *b = pb;
  if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
  if (a->dur != b->dur) return a->dur > b->dur ? -1 : 1;
  if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
  return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/* ns as microseconds to the ns, exactly: ts + dur is the end's own ts. */
static void print_us(FILE *out, long long ns) {
  if (ns < 0) {
    fputc('-', out);
    ns = -ns;
  }
  fprintf(out, "%lld.%03lld", ns / 1000, ns % 1000);
}

static void print_event(FILE *out, const json_event *e) {
  const char *name = span_names[e->kind];
  if (e->kind == SPAN_EPILOGUE)
    fprintf(out, "{\"name\":\"%s\",\"cat\":\"%s\"", name, name);
  else
    fprintf(out, "{\"name\":\"%s k%d s%d\",\"cat\":\"%s\"", name, e->k_tile, e->slot, name);
  fprintf(out, ",\"ph\":\"%s\",\"ts\":", e->dur < 0 ? "i" : "X");
  print_us(out, e->ts);
  if (e->dur >= 0) {
    fputs(",\"dur\":", out);
    print_us(out, e->dur);
  } else {
    fputs(",\"s\":\"t\"", out);
  }
  fprintf(out, ",\"pid\":%d,\"tid\":%d,\"args\":{\"k_tile\":%d,\"stage\":%d,\"tile\":%d}}",
          e->pid, e->tid, e->k_tile, e->slot, e->tile);
}

static const char *role_text(int role) {
  switch (role) {
    case PG_TRACE_ROLE_BLOCK: return "block";
    case PG_TRACE_ROLE_PRODUCER: return "producers";
    case PG_TRACE_ROLE_CONSUMER: return "consumers";
    default: return "none";
  }
}

/* The elements of "traceEvents", one a line, commas between. */
typedef struct {
  FILE *out;
  int items;
} event_writer;

static FILE *next_item(event_writer *w) {
  fputs(w->items++ > 0 ? ",\n" : "\n", w->out);
  return w->out;
}

static void print_metadata(event_writer *w, const char *kind, int pid, int tid, const char *name,
                           int sort_index) {
  fprintf(next_item(w), "{\"name\":\"%s_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                        "\"args\":{\"name\":",
          kind, pid, tid);
  pgc_print_json_string(w->out, name);
  fputs("}}", w->out);
  fprintf(next_item(w), "{\"name\":\"%s_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                        "\"args\":{\"sort_index\":%d}}",
          kind, pid, tid, sort_index);
}

/* Names of the SMs (once each) and of every lane that holds an event. */
static void print_names(event_writer *w, const pgc_trace *trace, const event_list *list) {
  char name[96];
  for (int i = 0; i < trace->track_count; ++i) {
    const pgc_trace_track *t = &trace->tracks[i];
    int seen = 0;
    for (int j = 0; j < i && !seen; ++j) seen = trace->tracks[j].smid == t->smid;
    if (seen) continue;
    snprintf(name, sizeof name, "SM %d", t->smid);
    print_metadata(w, "process", pid_of(t), 0, name, t->smid);
  }
  for (int i = 0; i < trace->track_count; ++i) {
    const pgc_trace_track *t = &trace->tracks[i];
    const int lane = t->role == PG_TRACE_ROLE_PRODUCER ? PGC_TRACE_LANE_PRODUCER
                                                        : PGC_TRACE_LANE_MAIN;
    snprintf(name, sizeof name, "block %d %s", t->block, role_text(t->role));
    print_metadata(w, "thread", pid_of(t), tid_of(t->block, lane), name, tid_of(t->block, lane));
    const int first = i > 0 && trace->tracks[i - 1].block == t->block ? i - 1 : i;
    if (lane != PGC_TRACE_LANE_MAIN) continue;
    for (int slot = 0; slot < trace->stages && slot < PGC_TRACE_LANES_PER_BLOCK - 2; ++slot) {
      const int tid = tid_of(t->block, PGC_TRACE_LANE_COPIES + slot);
      if (!(list->copy_slots[first] >> slot & 1u)) continue;
      snprintf(name, sizeof name, "block %d copies into stage %d", t->block, slot);
      print_metadata(w, "thread", pid_of(t), tid, name, tid);
    }
  }
}

static void print_other_text(FILE *out, const char *key, const char *value, int *first) {
  if (value == NULL) return;
  fprintf(out, "%s\n  ", *first ? "" : ",");
  *first = 0;
  pgc_print_json_string(out, key);
  fputc(':', out);
  pgc_print_json_string(out, value);
}

static void print_other_number(FILE *out, const char *key, double value, int decimals,
                               int *first) {
  char text[64];
  if (!isfinite(value)) return;
  snprintf(text, sizeof text, "%.*f", decimals, value);
  print_other_text(out, key, text, first);
}

/* "otherData": the run, as strings (the format's own convention). */
static void print_other(FILE *out, const pgc_trace *trace, const pgc_trace_meta *meta) {
  char shape[64];
  int first = 1;
  fputs("\"otherData\":{", out);
  print_other_text(out, "variant", meta->variant, &first);
  print_other_number(out, "stages", meta->stages, 0, &first);
  snprintf(shape, sizeof shape, "%dx%dx%d", meta->m, meta->n, meta->k);
  print_other_text(out, "shape", shape, &first);
  print_other_number(out, "k_tiles", trace->k_tiles, 0, &first);
  print_other_text(out, "gpu", meta->gpu, &first);
  print_other_number(out, "grid_blocks", meta->grid_blocks, 0, &first);
  print_other_number(out, "sample_stride", meta->stride, 0, &first);
  print_other_number(out, "clock_ghz", trace->ghz, 4, &first);
  print_other_text(out, "clock_from",
                   trace->ghz_measured ? "globaltimer and clock64 pairs" : "SM clock sample",
                   &first);
  print_other_number(out, "traced_ms", meta->traced_ms, 4, &first);
  print_other_number(out, "untraced_ms", meta->untraced_ms, 4, &first);
  print_other_text(out, "pid", "SM id + 1", &first);
  print_other_text(out, "tid", "block * 16 + lane (0 block or consumers, 1 producers, "
                               "2 + s copies into stage s)", &first);
  print_other_text(out, "command", meta->command, &first);
  print_other_text(out, "date", meta->date, &first);
  fputs("\n}", out);
}

int pgc_trace_write_json(FILE *out, const pgc_trace *trace, const pgc_trace_meta *meta) {
  event_list list = {NULL, 0, 0, NULL};
  if (collect_events(trace, &list) != 0) {
    free(list.events);
    free(list.copy_slots);
    return -1;
  }
  qsort(list.events, (size_t)list.count, sizeof *list.events, event_order);
  event_writer w = {out, 0};
  fputs("{\"traceEvents\":[", out);
  print_names(&w, trace, &list);
  for (int e = 0; e < list.count; ++e) print_event(next_item(&w), &list.events[e]);
  fputs("\n],\n\"displayTimeUnit\":\"ns\",\n", out);
  print_other(out, trace, meta);
  fputs("}\n", out);
  free(list.events);
  free(list.copy_slots);
  return 0;
}
