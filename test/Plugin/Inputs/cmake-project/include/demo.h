// The project's own header: found through target_include_directories, so
// the plugin's analysis must see the same include path as the compile.
#pragma once
void run(float *x, float *acc, int n);
void axpy(float a, const float *x, float *y, int n);
