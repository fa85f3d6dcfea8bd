/* The names the traced kernel objects export: each with _traced appended, so
 * that a traced file and its timed original link into one library. CMake
 * includes this header ahead of every file of the traced build (nvcc
 * -include) and nowhere else; the kernel files themselves carry no second
 * name, which keeps every line of the timed kernels as it was.
 *
 * Every kernel and planner of a traced file must be here. A planner or a
 * plain kernel left out would be defined twice, which breaks the link; a
 * template kernel left out would link (nvcc keeps its host stub local to
 * the object) but keep its timed name, and `pipegemm inspect` and Nsight
 * Compute, which find a variant's kernels by name, would take it for the
 * timed one. CTest's trace_symbols test catches both. */
#ifndef PG_TRACE_NAMES_H
#define PG_TRACE_NAMES_H

#ifndef PG_TRACE
#error "kernels/trace_names.h belongs to the traced build only (PG_TRACE)"
#endif

/* 03_baseline.cu */
#define pg_baseline_kernel pg_baseline_kernel_traced
#define pg_plan_baseline pg_plan_baseline_traced
/* 04_pingpong.cu */
#define pg_pingpong_kernel pg_pingpong_kernel_traced
#define pg_plan_pingpong pg_plan_pingpong_traced
/* 05_cp_async.cu */
#define pg_cp_async_kernel pg_cp_async_kernel_traced
#define pg_plan_cp_async pg_plan_cp_async_traced
/* 06_pipeline_thread.cu */
#define pg_pipeline_thread_kernel pg_pipeline_thread_kernel_traced
#define pg_plan_pipeline_thread pg_plan_pipeline_thread_traced
/* 07_pipeline_block.cu: one kernel per stage count, a template */
#define pg_pipeline_block_kernel pg_pipeline_block_kernel_traced
#define pg_plan_pipeline_block pg_plan_pipeline_block_traced
/* 08_barrier.cu */
#define pg_barrier_kernel pg_barrier_kernel_traced
#define pg_plan_barrier pg_plan_barrier_traced
/* 09_mbarrier.cu */
#define pg_mbarrier_kernel pg_mbarrier_kernel_traced
#define pg_plan_mbarrier pg_plan_mbarrier_traced
/* 10_warp_specialized.cu */
#define pg_warp_specialized_kernel pg_warp_specialized_kernel_traced
#define pg_plan_warp_specialized pg_plan_warp_specialized_traced
/* 11_tma.cu */
#define pg_tma_kernel pg_tma_kernel_traced
#define pg_plan_tma pg_plan_tma_traced
/* 12_tma_ws.cu: the flagship's kernel, its split-K and stream-K second
 * kernels and planners (only pg_plan_tma_ws's plan is traced) */
#define pg_tma_ws_kernel pg_tma_ws_kernel_traced
#define pg_tma_ws_reduce_kernel pg_tma_ws_reduce_kernel_traced
#define pg_tma_ws_fixup_kernel pg_tma_ws_fixup_kernel_traced
#define pg_plan_tma_ws pg_plan_tma_ws_traced
#define pg_plan_tma_ws_splitk pg_plan_tma_ws_splitk_traced
#define pg_plan_tma_ws_n64 pg_plan_tma_ws_n64_traced
#define pg_plan_tma_ws_m256 pg_plan_tma_ws_m256_traced
#define pg_plan_tma_ws_streamk pg_plan_tma_ws_streamk_traced

#endif
