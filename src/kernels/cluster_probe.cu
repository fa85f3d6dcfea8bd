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

/* An error that says the GPU cannot do it (an answer), rather than that it
 * could not be asked now (out of memory loading this kernel's module). */
static int lasting(cudaError_t err) {
  return err != cudaErrorMemoryAllocation && err != cudaErrorLaunchOutOfResources &&
         err != cudaErrorUnknown;
}

extern "C" int pg_probe_cluster_blocks(const pg_device *device,
                                       int table[PG_CLUSTER_BLOCKS_PER_SM][PG_CLUSTER_MAX + 1]) {
  memset(table, 0, sizeof(int) * PG_CLUSTER_BLOCKS_PER_SM * (PG_CLUSTER_MAX + 1));
  if (device->cc < 90 || device->smem_per_sm == 0) return 1; /* no clusters, or no table */
  const void *kernel = (const void *)pg_cluster_probe_kernel;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)device->smem_optin);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return lasting(err);
  }
  int answered = 1;
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
      err = cudaOccupancyMaxActiveClusters(&clusters, kernel, &config);
      if (err != cudaSuccess) {
        (void)cudaGetLastError();
        answered &= lasting(err);
        clusters = 0;
      }
      table[b - 1][c] = clusters * c;
    }
  }
  return answered;
}
