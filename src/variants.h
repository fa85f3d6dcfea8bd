/* Every variant of the registry and every kernel file, once, in study order:
 * the one list that the registry (src/registry.c), the traced twins, and
 * the build's source lists (CMakeLists.txt reads this file) come from.
 * (A family's forms are listed where the family declares them, and taken
 * here with one line: PG_VARIANT_FORMS.)
 *
 *   PG_VARIANT(name, file, trace, arch)
 *     name   the stable name; the entry itself, pg_entry_<name> (what it is,
 *            its stage counts, tile, planner and SASS rules), is defined in
 *            `file`, beside its kernel (src/kernels/entry.h says how)
 *     file   its kernel file in src/kernels/, or "" for an entry without one
 *            (cublas and cublas_tf32, in src/cublas.c; auto and auto_tf32, in
 *            src/plan.c)
 *     trace  TRACED: the file is compiled a second time with its pipeline
 *            marks on, for `pipegemm trace` (its twin pg_entry_<name>_traced
 *            plans the traced kernel); UNTRACED: not
 *     arch   SM90A: the file's Hopper code is built for sm_90a (setmaxnreg,
 *            wgmma), every other architecture as usual; ANY_ARCH: as the
 *            build's architectures say
 *   PG_VARIANT_FORMS(list, file, trace, arch)
 *     an entry for each line of the X-macro `list`, in its order, each
 *     defined in `file` from its line: TWS_FORMS, the flagship's tile
 *     forms (src/kernels/tma_ws.h). A line of a form's name here too would
 *     declare it twice (forms_declared fails)
 *   PG_KERNEL_FILE(file, trace, arch)
 *     a kernel file that declares no entry of the registry
 *
 * Entries of one file share its trace and arch. Adding a variant: its
 * kernel file and one line here; a tile form of tma_ws: its line of
 * TWS_FORMS alone (docs/adding-a-variant.md). A test
 * (variants_declared) fails when a numbered file of src/kernels/ is missing
 * here, or a line here names a file that is not there.
 *
 * Lines are kept to this form, one per line, with no macro inside them:
 * CMake reads them with a regular expression. */
PG_VARIANT(cublas, "", UNTRACED, ANY_ARCH)
PG_VARIANT(tiled32, "01_tiled32.cu", UNTRACED, ANY_ARCH)
PG_VARIANT(tiled32_db, "02_tiled32_db.cu", UNTRACED, ANY_ARCH)
PG_VARIANT(baseline, "03_baseline.cu", TRACED, ANY_ARCH)
PG_VARIANT(pingpong, "04_pingpong.cu", TRACED, ANY_ARCH)
PG_VARIANT(cp_async, "05_cp_async.cu", TRACED, ANY_ARCH)
PG_VARIANT(pipeline_thread, "06_pipeline_thread.cu", TRACED, ANY_ARCH)
PG_VARIANT(pipeline_block, "07_pipeline_block.cu", TRACED, ANY_ARCH)
PG_VARIANT(barrier, "08_barrier.cu", TRACED, ANY_ARCH)
PG_VARIANT(mbarrier, "09_mbarrier.cu", TRACED, ANY_ARCH)
PG_VARIANT(warp_specialized, "10_warp_specialized.cu", TRACED, ANY_ARCH)
PG_VARIANT(tma, "11_tma.cu", TRACED, ANY_ARCH)
PG_VARIANT(tma_ws, "12_tma_ws.cu", TRACED, SM90A)
PG_VARIANT_FORMS(TWS_FORMS, "13_tma_ws_splitk.cu", UNTRACED, SM90A)
PG_VARIANT(tma_ws_any, "13_tma_ws_splitk.cu", UNTRACED, SM90A)
PG_VARIANT(tma_ws_streamk, "14_tma_ws_streamk.cu", UNTRACED, SM90A)
PG_KERNEL_FILE("tma_ws_layouts.cu", UNTRACED, SM90A)
PG_VARIANT(skinny_ffma, "15_skinny_ffma.cu", UNTRACED, ANY_ARCH)
PG_KERNEL_FILE("16_skinny_split.cu", UNTRACED, ANY_ARCH)
PG_KERNEL_FILE("17_skinny_ring.cu", UNTRACED, ANY_ARCH)
PG_KERNEL_FILE("18_skinny_ring_rows.cu", UNTRACED, ANY_ARCH)
PG_KERNEL_FILE("19_skinny_gemv.cu", UNTRACED, ANY_ARCH)
PG_KERNEL_FILE("22_skinny_dot.cu", UNTRACED, ANY_ARCH)
PG_VARIANT(cp_async_any, "21_cp_async_any.cu", UNTRACED, ANY_ARCH)
PG_VARIANT(auto, "", UNTRACED, ANY_ARCH)
PG_VARIANT(cublas_tf32, "", UNTRACED, ANY_ARCH)
PG_VARIANT(mma_cp_async, "30_mma_cp_async.cu", UNTRACED, ANY_ARCH)
PG_VARIANT(wgmma_sync, "31_wgmma_sync.cu", UNTRACED, SM90A)
PG_VARIANT(wgmma_cp_async, "32_wgmma_cp_async.cu", TRACED, SM90A)
PG_VARIANT(wgmma_tma, "33_wgmma_tma.cu", TRACED, SM90A)
PG_VARIANT(wgmma_tma_ws, "34_wgmma_tma_ws.cu", TRACED, SM90A)
PG_VARIANT(wgmma_tma_ws_wait0, "34_wgmma_tma_ws.cu", TRACED, SM90A)
PG_VARIANT(wgmma_tma_coop, "35_wgmma_tma_coop.cu", TRACED, SM90A)
PG_VARIANT(wgmma_tma_coop_n256, "35_wgmma_tma_coop.cu", TRACED, SM90A)
PG_VARIANT(wgmma_tma_rs, "36_wgmma_tma_rs.cu", UNTRACED, SM90A)
PG_VARIANT(wgmma_tma_rs_persistent, "37_wgmma_tma_rs_persistent.cu", UNTRACED, SM90A)
PG_VARIANT(wgmma_tma_pingpong, "38_wgmma_tma_pingpong.cu", UNTRACED, SM90A)
PG_VARIANT(wgmma_tma_rs_multicast, "39_wgmma_tma_rs_multicast.cu", UNTRACED, SM90A)
PG_VARIANT(mma_cp_async_any, "41_mma_cp_async_any.cu", UNTRACED, ANY_ARCH)
PG_VARIANT(auto_tf32, "", UNTRACED, ANY_ARCH)
PG_VARIANT(wgmma_3xtf32, "40_wgmma_3xtf32.cu", UNTRACED, SM90A)
PG_VARIANT(wgmma_fp16x3, "42_wgmma_fp16x3.cu", UNTRACED, SM90A)
PG_VARIANT(auto_emulated, "", UNTRACED, ANY_ARCH)
PG_KERNEL_FILE("20_single_warp.cu", UNTRACED, ANY_ARCH)
PG_KERNEL_FILE("scale_c.cu", UNTRACED, ANY_ARCH)
PG_KERNEL_FILE("transpose_b.cu", UNTRACED, ANY_ARCH)
PG_KERNEL_FILE("fp16x3_split.cu", UNTRACED, ANY_ARCH)
PG_KERNEL_FILE("reduce_splits.cu", UNTRACED, ANY_ARCH)
PG_KERNEL_FILE("copy_operands.cu", UNTRACED, ANY_ARCH)
PG_KERNEL_FILE("cluster_probe.cu", UNTRACED, ANY_ARCH)
