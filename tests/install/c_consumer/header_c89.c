/* gpupool/c_api.h compiles as strict C89 (-std=c89 -pedantic-errors). */
#include "gpupool/c_api.h"

const char* HeaderCompilesAsC89(void) { return gpupool_version(); }
