/* The marks a kernel leaves for `pipegemm trace` (layout: src/trace_records.h).
 *
 * Without PG_TRACE, the library's build, every macro here expands to nothing and
 * the kernels compile to exactly the code they had before they carried
 * marks (docs/trace.md says how that was checked). With PG_TRACE, the second
 * build of the traced variants' files (in the namespace pg_traced,
 * src/kernels/entry.h), one thread per role keeps a small context and writes
 * one 16-byte record per mark:
 *
 *   PG_TRACE_OPEN(g, role, recorder)      this thread records `role` when
 *                                         `recorder` holds and its block is
 *                                         sampled; reads the start pair
 *   PG_TRACE_MARK(event, slot, k_tile)    one event of a K tile in a slot
 *   PG_TRACE_MARK_IF(cond, ...)           the same where `cond` holds
 *   PG_TRACE_SPAN(span, slot, k_tile) S   marks the statement S (a block, a
 *                                         call) as the span's two events:
 *                                         DATA: the wait for a tile's data
 *                                         (DATA_WAIT ... READY); SLOT: the
 *                                         wait for a free slot (SLOT_WAIT ...
 *                                         ISSUE); COMPUTE; EPILOGUE. In the
 *                                         timed build S stands alone
 *   PG_TRACE_BEFORE(event, slot, k_tile) S  one event (ISSUE, RELEASE, ...:
 *   PG_TRACE_AFTER(event, slot, k_tile) S   PG_TRACE_<event>) just before S,
 *                                         or just after it
 *   PG_TRACE_TILE_DONE()                  what follows is the next output tile
 *   PG_TRACE_CLOSE(g, role)               reads the end pair, stores the count
 *
 *   PG_TRACE_MIN_BLOCKS(n)                inside __launch_bounds__: the traced
 *                                         build keeps n blocks per SM, as the
 *                                         timed kernel has them
 *
 * Left free, ptxas gives a traced kernel more registers than its timed twin
 * (baseline: 146 against 128), which would halve its blocks per SM and trace
 * a different pipeline; the bound holds it to the timed kernel's occupancy.
 *
 * A mark is a read of %clock64 with a compiler memory barrier: no load,
 * store or copy moves across it, though arithmetic with no memory operand
 * may, by a few instructions. Records go out as ordinary stores, which the
 * thread does not wait for. */
#ifndef PG_TRACE_CUH
#define PG_TRACE_CUH

#ifdef PG_TRACE
#include "trace_records.h"

/* The two events of each span of PG_TRACE_SPAN. */
#define PG_TRACE_SPAN_BEGIN_DATA PG_TRACE_DATA_WAIT
#define PG_TRACE_SPAN_END_DATA PG_TRACE_READY
#define PG_TRACE_SPAN_BEGIN_SLOT PG_TRACE_SLOT_WAIT
#define PG_TRACE_SPAN_END_SLOT PG_TRACE_ISSUE
#define PG_TRACE_SPAN_BEGIN_COMPUTE PG_TRACE_COMPUTE_BEGIN
#define PG_TRACE_SPAN_END_COMPUTE PG_TRACE_COMPUTE_END
#define PG_TRACE_SPAN_BEGIN_EPILOGUE PG_TRACE_EPILOGUE_BEGIN
#define PG_TRACE_SPAN_END_EPILOGUE PG_TRACE_EPILOGUE_END

/* What the recording thread keeps in registers across its loop: as little
 * as possible, since a traced kernel must keep the timed one's occupancy. */
typedef struct {
  pg_trace_record *next; /* where the next record goes; NULL: this thread records nothing */
  int room;              /* records that still fit; below 0, minus those dropped */
  int tile;              /* the block's n-th output tile */
} pg_trace_context;

static __device__ __forceinline__ long long pg_trace_clock(void) {
  long long clock;
  asm volatile("mov.u64 %0, %%clock64;\n" : "=l"(clock)::"memory");
  return clock;
}

static __device__ __forceinline__ long long pg_trace_globaltimer(void) {
  long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(ns)::"memory");
  return ns;
}

static __device__ __forceinline__ int pg_trace_smid(void) {
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;\n" : "=r"(smid));
  return (int)smid;
}

/* This block's track of `role`, or NULL when the block is not sampled. */
static __device__ __forceinline__ pg_trace_track *pg_trace_track_of(const pg_trace_header *header,
                                                                    int role) {
  const int block = blockIdx.y * gridDim.x + blockIdx.x;
  if (block % header->stride != 0 || block / header->stride >= header->blocks) return NULL;
  const int index = pg_trace_track_index(block / header->stride, role);
  return (pg_trace_track *)((char *)header + pg_trace_track_offset(index, header->capacity));
}

static __device__ __forceinline__ pg_trace_context pg_trace_open(const pg_gemm_args &g, int role,
                                                                 bool recorder) {
  pg_trace_context ctx = {NULL, 0, 0};
  pg_trace_track *track = recorder && g.trace != NULL ? pg_trace_track_of(g.trace, role) : NULL;
  if (track == NULL) return ctx;
  ctx.next = (pg_trace_record *)(track + 1);
  ctx.room = g.trace->capacity;
  track->role = role;
  track->block = blockIdx.y * gridDim.x + blockIdx.x;
  track->smid = pg_trace_smid();
  /* Back to back: the pair ties this SM's clock to the GPU's timer. */
  track->begin_globaltimer = pg_trace_globaltimer();
  track->begin_clock = pg_trace_clock();
  return ctx;
}

static __device__ __forceinline__ void pg_trace_mark(pg_trace_context &ctx, int event, int slot,
                                                     int k_tile) {
  if (ctx.next == NULL) return;
  const long long clock = pg_trace_clock();
  /* Never past the track: room goes on counting down, so the host sees
   * what was dropped. */
  if (ctx.room-- <= 0) return;
  /* pg_trace_record's bytes, little-endian, in one 16-byte store. */
  *(int4 *)ctx.next++ = make_int4((int)(clock & 0xffffffff), (int)(clock >> 32), k_tile,
                                  event | (slot << 8) | ((ctx.tile & 0xffff) << 16));
}

static __device__ __forceinline__ void pg_trace_close(pg_trace_context &ctx, const pg_gemm_args &g,
                                                      int role) {
  if (ctx.next == NULL) return;
  const long long clock = pg_trace_clock();
  pg_trace_track *track = pg_trace_track_of(g.trace, role);
  track->end_clock = clock;
  track->end_globaltimer = pg_trace_globaltimer();
  track->count = g.trace->capacity - ctx.room;
}

#define PG_TRACE_OPEN(args, role, recorder) \
  pg_trace_context pg_trace_ = pg_trace_open((args), (role), (recorder))
#define PG_TRACE_MARK(event, slot, k_tile) pg_trace_mark(pg_trace_, (event), (slot), (k_tile))
#define PG_TRACE_MARK_IF(cond, event, slot, k_tile) \
  do {                                              \
    if (cond) PG_TRACE_MARK(event, slot, k_tile);   \
  } while (0)
/* The statement after it runs once, between the span's two marks. */
#define PG_TRACE_SPAN(span, slot, k_tile)                                             \
  for (int pg_span_ = (PG_TRACE_MARK(PG_TRACE_SPAN_BEGIN_##span, slot, k_tile), 1); pg_span_; \
       pg_span_ = (PG_TRACE_MARK(PG_TRACE_SPAN_END_##span, slot, k_tile), 0))
#define PG_TRACE_BEFORE(event, slot, k_tile) \
  for (int pg_once_ = (PG_TRACE_MARK(PG_TRACE_##event, slot, k_tile), 1); pg_once_; pg_once_ = 0)
#define PG_TRACE_AFTER(event, slot, k_tile) \
  for (int pg_once_ = 1; pg_once_; pg_once_ = (PG_TRACE_MARK(PG_TRACE_##event, slot, k_tile), 0))
#define PG_TRACE_TILE_DONE() (++pg_trace_.tile)
#define PG_TRACE_CLOSE(args, role) pg_trace_close(pg_trace_, (args), (role))
#define PG_TRACE_MIN_BLOCKS(n) , n

#else
#define PG_TRACE_OPEN(args, role, recorder) ((void)0)
#define PG_TRACE_MARK(event, slot, k_tile) ((void)0)
#define PG_TRACE_MARK_IF(cond, event, slot, k_tile) ((void)0)
#define PG_TRACE_SPAN(span, slot, k_tile)
#define PG_TRACE_BEFORE(event, slot, k_tile)
#define PG_TRACE_AFTER(event, slot, k_tile)
#define PG_TRACE_TILE_DONE() ((void)0)
#define PG_TRACE_CLOSE(args, role) ((void)0)
#define PG_TRACE_MIN_BLOCKS(n)
#endif

#endif
