/*
 * The one place the gpuprof version is spelled.  Offline analyzer only; the
 * recorder identifies itself through the trace format version instead.
 */
#ifndef GA_ANALYZER_VERSION_H
#define GA_ANALYZER_VERSION_H

#define GA_VERSION "0.1.0"

#endif
