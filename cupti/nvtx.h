/*
 * NVTX ranges and marks from CUPTI MARKER / MARKER_DATA records.
 * Context: the CUPTI completion callback, under the ring's producer lock;
 * gp_nvtx_close_all at exit, same lock.
 */
#ifndef GP_NVTX_H
#define GP_NVTX_H

#include <cupti.h>
#include <stdint.h>

void gp_nvtx_marker(const CUpti_ActivityMarker2 *m);
void gp_nvtx_marker_data(const CUpti_ActivityMarkerData2 *d);
/* Emits ranges still open at exit, ending at `now`, flagged unterminated. */
void gp_nvtx_close_all(uint64_t now);

#endif
