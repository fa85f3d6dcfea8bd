/* The tile of the "Software Pipelining and Double Buffering" guide's
 * sgemmTiled: 32x32 outputs per block, one per thread (1024 threads),
 * stepping 32 along K; shared rows padded by one float ([TILE][TILE + 1]) so
 * a column read hits 32 different banks. Plain C for the registry. */
#ifndef PG_TILED32_H
#define PG_TILED32_H

#define TILED32_TILE 32
#define TILED32_THREADS (TILED32_TILE * TILED32_TILE)
#define TILED32_STAGE_BYTES (2 * TILED32_TILE * (TILED32_TILE + 1) * 4) /* As + Bs */

#endif
