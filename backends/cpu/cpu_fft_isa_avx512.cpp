// SPDX-License-Identifier: Apache-2.0
// porta's FFT engine built for one instruction set; cpu_fft.cpp picks the build at run time.
#define PORTA_FFT_ISA avx512
#include "cpu_fft_engine.inc"
