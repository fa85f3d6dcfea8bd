/* The trace of a pipeline (`pipegemm trace`): what the instrumented kernels
 * record and where, shared by the kernels (src/kernels/trace.cuh), the
 * library (src/trace.c) and the tool (src/adapters/trace_format.c). Plain C,
 * and nothing else: the library's trace hooks are in src/introspect.h.
 *
 * The traced variants' kernel files are compiled a second time with PG_TRACE
 * defined, everything they define in the namespace pg_traced
 * (src/kernels/entry.h), so the timed kernels stay exactly as they are and
 * both sets live in one library. A traced kernel writes into a buffer of
 * device memory laid out as:
 *
 *   pg_trace_header               which blocks record, and room per track
 *   PG_TRACE_TRACKS_PER_BLOCK tracks per sampled block i, one per role:
 *     track 2i     the block (where every thread copies and computes) or
 *                  its consumers;
 *     track 2i+1   its producers, in the kernels that have them;
 *   each track:
 *     pg_trace_track              who recorded, and when its role began and ended
 *     pg_trace_record[capacity]   the events, in the order its thread met them
 *
 * One thread records per role (thread 0 of the block or of the consumers,
 * the first producer thread), so an event is what that thread saw: a copy
 * "issued" is its own copy instructions about to go out, "ready" its wait
 * returning, which in these kernels means the whole stage has landed.
 *
 * Times are the SM's %clock64 at each event. %clock64 counts per SM and
 * %globaltimer (ns) is too coarse for single events, so each track also
 * holds a (%globaltimer, %clock64) pair read back to back when its role
 * began and when it ended: the host gets the clock rate from those pairs and
 * puts every SM on one time axis. Within one block every role reads the
 * same SM's counter, so the order of a producer's and a consumer's events
 * is exact. */
#ifndef PG_TRACE_RECORDS_H
#define PG_TRACE_RECORDS_H

#include <stddef.h>

#if defined(__CUDACC__)
#define PG_TRACE_HD __host__ __device__
#else
#define PG_TRACE_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* What a mark records. Every event but the epilogue's belongs to one K tile
 * (k_tile of the block's tile-th output tile) and the ring slot (stage) that
 * holds it. */
typedef enum {
  PG_TRACE_NONE = 0,
  PG_TRACE_ISSUE,          /* the tile's copy is about to be issued */
  PG_TRACE_READY,          /* the wait for the tile's data returned */
  PG_TRACE_DATA_WAIT,      /* the wait for the tile's data begins */
  PG_TRACE_COMPUTE_BEGIN,  /* FFMAs on the tile begin... */
  PG_TRACE_COMPUTE_END,    /* ...and end */
  PG_TRACE_RELEASE,        /* the tile's slot is handed back for the next copy (marked
                              just before an mbarrier arrive, so that it precedes the
                              refill it allows, even in another warp) */
  PG_TRACE_SLOT_WAIT,      /* the wait for a free slot begins; it ends at the ISSUE */
  PG_TRACE_EPILOGUE_BEGIN, /* C is written: begins... */
  PG_TRACE_EPILOGUE_END,   /* ...and ends */
  PG_TRACE_EVENT_COUNT
} pg_trace_event;

/* Who recorded a track. */
typedef enum {
  PG_TRACE_ROLE_NONE = 0, /* nobody: the block was not sampled, or has no such role */
  PG_TRACE_ROLE_BLOCK,    /* every thread copies and computes; thread 0 records */
  PG_TRACE_ROLE_PRODUCER, /* the warps that only copy */
  PG_TRACE_ROLE_CONSUMER  /* the warps that only compute */
} pg_trace_role;

#define PG_TRACE_TRACKS_PER_BLOCK 2

/* Written by the host before the launch. Block b (blockIdx.y * gridDim.x +
 * blockIdx.x) records when b % stride == 0 and b / stride < blocks. */
typedef struct pg_trace_header {
  int blocks;
  int stride;
  int capacity; /* records per track */
  int reserved;
} pg_trace_header;

/* Written by the recording thread. */
typedef struct {
  int role;  /* pg_trace_role */
  int block; /* linear block index */
  int smid;  /* %smid */
  int count; /* events met; those past capacity were dropped */
  long long begin_globaltimer, begin_clock;
  long long end_globaltimer, end_clock;
} pg_trace_track;

/* One event: 16 bytes, written with one 16-byte store. */
typedef struct {
  long long clock;     /* %clock64 */
  int k_tile;          /* within the output tile; 0 for the epilogue */
  unsigned char event; /* pg_trace_event */
  unsigned char slot;  /* ring slot (stage) of the tile; 0 for the epilogue */
  unsigned short tile; /* the block's n-th output tile (persistent grids), else 0 */
} pg_trace_record;

#ifdef __cplusplus
static_assert(sizeof(pg_trace_header) == 16, "the header keeps the tracks 16-byte aligned");
static_assert(sizeof(pg_trace_track) == 48, "a track's records start 16-byte aligned");
static_assert(sizeof(pg_trace_record) == 16, "a record is one 16-byte store");
#else
_Static_assert(sizeof(pg_trace_header) == 16, "the header keeps the tracks 16-byte aligned");
_Static_assert(sizeof(pg_trace_track) == 48, "a track's records start 16-byte aligned");
_Static_assert(sizeof(pg_trace_record) == 16, "a record is one 16-byte store");
#endif

/* Bytes from the start of the buffer to track `index`. */
PG_TRACE_HD static inline size_t pg_trace_track_offset(int index, int capacity) {
  return sizeof(pg_trace_header) +
         (size_t)index * (sizeof(pg_trace_track) + (size_t)capacity * sizeof(pg_trace_record));
}

/* The whole buffer for `blocks` sampled blocks. */
PG_TRACE_HD static inline size_t pg_trace_bytes(int blocks, int capacity) {
  return pg_trace_track_offset(blocks * PG_TRACE_TRACKS_PER_BLOCK, capacity);
}

/* The track a role of the sampled block `sample` writes. */
PG_TRACE_HD static inline int pg_trace_track_index(int sample, int role) {
  return sample * PG_TRACE_TRACKS_PER_BLOCK + (role == PG_TRACE_ROLE_PRODUCER ? 1 : 0);
}

/* At most this many sampled blocks, and this much device memory for a trace
 * (a longer K gets fewer records per track, and the rest are counted as
 * dropped). */
#define PG_TRACE_MAX_BLOCKS 1024
#define PG_TRACE_MAX_BYTES ((size_t)256 << 20)

#ifdef __cplusplus
}
#endif
#endif
