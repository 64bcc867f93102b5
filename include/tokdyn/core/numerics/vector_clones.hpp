// TOKDYN_VECTOR_CLONES: a function compiled for several x86 vector widths, chosen at load time. FP
// contraction is off (CMakeLists.txt) and the summation order is fixed in the source, so every variant
// gives the same bits.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TOKDYN_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TOKDYN_VECTOR_CLONES
#endif
