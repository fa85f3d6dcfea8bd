/* How many blocks launched in clusters the GPU keeps resident at once
 * (pg_device.cluster_blocks). A cluster's blocks run together on one GPC,
 * so where a GPC's slots are no multiple of the cluster size some stay
 * empty, and how many depends on the GPCs' sizes, which differ from one
 * GPU to the next of the same model. The runtime answers it
 * (cudaOccupancyMaxActiveClusters) for a kernel and its launch: here an
 * empty kernel whose dynamic shared memory lets b blocks share an SM, as
 * many as a kernel launched in clusters lets share one (the tma_ws forms'
 * stages and registers, skinny_ffma's form: pg_split_in_clusters). */
#include "internal.h"

#include <string.h>

__global__ void pg_cluster_probe_kernel(void) {}

extern "C" void pg_probe_cluster_blocks(pg_device *device) {
  memset(device->cluster_blocks, 0, sizeof device->cluster_blocks);
  if (device->cc < 90) return; /* no clusters */
  const void *kernel = (const void *)pg_cluster_probe_kernel;
  if (device->smem_per_sm == 0 ||
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           (int)device->smem_optin) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  for (int b = 1; b <= PG_CLUSTER_BLOCKS_PER_SM; ++b) {
    const size_t smem = pg_smem_for_blocks_per_sm(device, b);
    for (int c = 2; c <= PG_CLUSTER_MAX; ++c) {
      cudaLaunchAttribute attr = {};
      attr.id = cudaLaunchAttributeClusterDimension;
      attr.val.clusterDim.x = c;
      attr.val.clusterDim.y = 1;
      attr.val.clusterDim.z = 1;
      cudaLaunchConfig_t config = {};
      config.gridDim = dim3(c * device->sm_count);
      config.blockDim = dim3(128);
      config.dynamicSmemBytes = smem;
      config.attrs = &attr;
      config.numAttrs = 1;
      int clusters = 0;
      if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess) {
        (void)cudaGetLastError();
        clusters = 0;
      }
      device->cluster_blocks[b - 1][c] = clusters * c;
    }
  }
}
