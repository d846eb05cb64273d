#define SCALE_BY(x) ((x) * FACTOR)
