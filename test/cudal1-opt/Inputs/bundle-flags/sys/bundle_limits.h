#define LIMIT_N 1024
